"""A prediction set as mining input: references and hypotheses normalized once into token tuples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.probes.predfiles.refdis import ClipInput
from asr_audit.text.align import AlignmentCache, tokens


def prepare_clips(
    preds: PredictionSet, models: Sequence[str], normalize: Any, text2num: bool, *,
    references: Mapping[str, str] | None = None, cache: AlignmentCache | None = None, workers: int = 1,
) -> list[ClipInput]:
    """Normalize references and hypotheses once (cached per distinct string) into token tuples.

    ``text2num`` writes spelled numbers as digits after ``normalize``. ``references`` replaces
    the prediction set's own (e.g. corrected references). With ``cache``, token tuples come from
    :meth:`AlignmentCache.tokens`, so a run that reuses the cache gets the very tuples its
    alignments are keyed by.
    """
    from asr_audit.text.text2num import with_text2num
    from asr_audit.text.normalize import normalize_many

    refs = references if references is not None else preds.references
    raw: list[str] = list(refs.values())
    hyp_rows = []
    for m in models:
        get = preds.file(m).rows.get
        hyp_rows.append([None if (r := get(cid)) is None else r.hypothesis for cid in refs])
    distinct = list(dict.fromkeys([*raw, *(h for col in hyp_rows for h in col if h is not None)]))
    normed = normalize_many(with_text2num(normalize) if text2num else normalize, distinct, workers=workers)
    to_tokens = tokens if cache is None else cache.tokens
    tok = {k: to_tokens(v) for k, v in zip(distinct, normed)}
    tok_get = tok.get
    columns = [[tok_get(h) for h in col] for col in hyp_rows]  # None stays None
    clips = []
    for ci, (cid, ref) in enumerate(refs.items()):
        clips.append(ClipInput(cid, tok[ref], {m: col[ci] for m, col in zip(models, columns)}))
    return clips
