"""Counterfactual WER: how much does a benchmark's reference error rate flatter a model?

For each model, WER against the given references (``wer``) and against consensus-corrected
references (``wer_corrected``), on the same clips. A corrected reference applies every edit the
model is judged on (its scoring panel's edits, whatever the model's verdict): a spurious span is
replaced by the panel's rendering, an omitted opener or closer is added. ``wer_inflation =
wer_corrected - wer`` in percentage points: positive when the reference's errors flatter the
model's benchmark WER (it reproduces them), negative for a model that transcribes the audio.
The interval is a clip-level bootstrap (seeded).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from asr_audit.probes.refdis import INSERTION, ClipInput, Edit
from asr_audit.stats.intervals import bootstrap_ratio_difference
from asr_audit.text.align import AlignmentCache, Tokens


def apply_edits(ref: Tokens, edits: Sequence[Edit]) -> Tokens:
    """The reference with ``edits`` (all of one clip) applied.

    >>> from asr_audit.probes.refdis import Edit
    >>> e1 = Edit("c", "deletion", "start", ("madam", "president"), (0, 1), "", 4, 4, 1.0, (), {}, {})
    >>> e2 = Edit("c", "insertion", "end", (), (4,), "thank you", 4, 4, None, (), {}, {})
    >>> apply_edits(("madam", "president", "we", "agree"), [e1, e2])
    ('we', 'agree', 'thank', 'you')
    """
    n = len(ref)
    replaced: dict[int, tuple[int, Tokens]] = {}
    before: list[str] = []
    after: list[str] = []
    for e in edits:
        alt = tuple(e.alt_text.split())
        if e.kind == INSERTION:
            if e.ref_indices[0] == 0:
                before = [*alt, *before]
            elif e.ref_indices[0] >= n:
                after.extend(alt)
            else:  # interior insertion (two-reference mode): insert before that index
                i = e.ref_indices[0]
                end, prev = replaced.get(i, (i, ()))
                replaced[i] = (end, (*alt, *prev))
        else:
            replaced[e.ref_indices[0]] = (e.ref_indices[-1] + 1, alt)
    out: list[str] = list(before)
    i = 0
    while i < n:
        if i in replaced:
            end, alt = replaced[i]
            out.extend(alt)
            if end > i:
                i = end
                continue
        out.append(ref[i])
        i += 1
    out.extend(after)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Inflation:
    model: str
    n_clips: int
    n_words: int
    wer: float
    wer_corrected: float
    inflation: float  # points (percent)
    ci_low: float
    ci_high: float


def wer_inflation(
    clips: Sequence[ClipInput],
    model: str,
    edits: Sequence[Edit],
    cache: AlignmentCache,
    rng: np.random.Generator,
    n_resamples: int = 1000,
) -> Inflation:
    """WER against given and corrected references on the clips where ``model`` has output."""
    by_clip: Mapping[str, list[Edit]] = defaultdict(list)
    for e in edits:
        by_clip[e.clip_id].append(e)
    err, words, err_c, words_c = [], [], [], []
    for clip in clips:
        hyp = clip.hyps.get(model)
        if hyp is None or not clip.ref:
            continue
        c = cache.wer(clip.ref, hyp)
        err.append(c.errors)
        words.append(c.ref_len)
        fixed = apply_edits(clip.ref, by_clip.get(clip.clip_id, ())) if clip.clip_id in by_clip else clip.ref
        cc = cache.wer(fixed, hyp)
        err_c.append(cc.errors)
        words_c.append(cc.ref_len)
    if not err:
        return Inflation(model, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0)
    est, low, high = bootstrap_ratio_difference(
        np.array(err_c), np.array(words_c), np.array(err), np.array(words), rng, n_resamples)
    w = sum(err) / max(sum(words), 1)
    wc = sum(err_c) / max(sum(words_c), 1)
    return Inflation(model, len(err), sum(words), w, wc, 100 * est, 100 * low, 100 * high)
