"""Fresh held-out corpora: speech recorded after a model's training cutoff, from public sources.

:mod:`~asr_audit.fresh.fetch` (cached downloads), :mod:`~asr_audit.fresh.librivox` (the LibriVox
API and Gutenberg texts), :mod:`~asr_audit.fresh.europarl` (European Parliament speeches, their
verbatim text and sitting recordings), :mod:`~asr_audit.fresh.segment` (cuts at pauses),
:mod:`~asr_audit.fresh.locate` (each piece's text in its book), :mod:`~asr_audit.fresh.build`
(the pipeline behind ``asr-audit corpus fresh-librivox`` and ``fresh-europarl``).
"""
