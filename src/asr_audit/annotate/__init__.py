"""``asr-audit annotate``: a local page where people label mined edits by listening.

:mod:`~asr_audit.annotate.items` builds what each screen shows (audio window from word timings,
the sentence, the two renderings in a blind order), :mod:`~asr_audit.annotate.page` is the page
(one HTML document, no network asset), :mod:`~asr_audit.annotate.server` the session and its
127.0.0.1-only HTTP server. Labels go to a :class:`~asr_audit.store.labels.LabelStore`; the
refdis verb reads them back as a verification
(:mod:`asr_audit.probes.predfiles.verified_labels`). See ``docs/annotate.md``.
"""
