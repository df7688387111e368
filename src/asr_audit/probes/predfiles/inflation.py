"""Counterfactual WER: how much does a benchmark's reference error rate flatter a model?

For each model, WER against the given references (``wer``) and against consensus-corrected
references (``wer_corrected``), on the same clips. A corrected reference applies every edit the
model is judged on (its scoring panel's edits, whatever the model's verdict): a spurious span is
replaced by the panel's rendering, an omitted opener or closer is added. ``wer_inflation =
wer_corrected - wer`` in percentage points: positive when the reference's errors flatter the
model's benchmark WER (it reproduces them), negative for a model that transcribes the audio.
The interval is a clip-level bootstrap (seeded) whose resamples are drawn once per run and
shared by every model (common random numbers): see :func:`wer_inflations`; WER's own interval
(``wer_ci_low``, ``wer_ci_high``) comes from the same resamples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from asr_audit.probes.predfiles.refdis import INSERTION, ClipInput, Edit
from asr_audit.stats.intervals import bootstrap_ratio_differences
from asr_audit.text.align import AlignmentCache, Tokens


def apply_edits(ref: Tokens, edits: Sequence[Edit]) -> Tokens:
    """The reference with ``edits`` (all of one clip) applied.

    >>> from asr_audit.probes.predfiles.refdis import Edit
    >>> common = {"clip_id": "c", "n_panel_agree": 4, "n_panel": 4, "miners": (), "verdicts": {}, "renderings": {}}
    >>> e1 = Edit(kind="deletion", position="start", ref_tokens=("madam", "president"), ref_indices=(0, 1),
    ...           alt_text="", consensus_cer=1.0, **common)
    >>> e2 = Edit(kind="insertion", position="end", ref_tokens=(), ref_indices=(4,), alt_text="thank you",
    ...           consensus_cer=None, **common)
    >>> apply_edits(("madam", "president", "we", "agree"), [e1, e2])
    ('we', 'agree', 'thank', 'you')
    """
    n = len(ref)
    replaced: dict[int, tuple[int, Tokens]] = {}
    before: list[str] = []
    after: list[str] = []
    for e in edits:
        lo, hi, alt = e.fix
        if e.kind == INSERTION:
            if lo == 0:
                before = [*alt, *before]
            elif lo >= n:
                after.extend(alt)
            else:  # interior insertion (two-reference mode): insert before that index
                end, prev = replaced.get(lo, (lo, ()))
                replaced[lo] = (end, (*alt, *prev))
        else:  # the range the panel's rendering replaces (Edit.fix: wider than the run if need be)
            replaced[lo] = (hi, alt)
    out: list[str] = list(before)
    i = 0  # the reference is copied up to each replaced index in turn (by slices, not word by word)
    for k in sorted(replaced):
        if k < i or k >= n:
            continue  # inside a range already replaced, or past the reference
        out.extend(ref[i:k])
        end, alt = replaced[k]
        out.extend(alt)
        if end > k:
            i = end
        else:  # an interior insertion: the word at k follows it
            out.append(ref[k])
            i = k + 1
    out.extend(ref[i:])
    out.extend(after)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Inflation:
    """One model's WER figures. ``n_clips`` clips with a reference were answered out of
    ``n_ref_clips``; a missing hypothesis counts as deleting its reference, so a model that
    answered nothing has WER 1.0, never 0. With no reference word at all every figure is
    undefined (``None``)."""

    model: str
    n_clips: int
    n_words: int
    wer: float | None
    wer_corrected: float | None
    inflation: float | None  # points (percent)
    ci_low: float | None
    ci_high: float | None
    n_ref_clips: int = 0  # clips with a non-empty reference (the WER's denominator clips)
    wer_ci_low: float | None = None  # clip-bootstrap interval of ``wer`` (0-1), same resamples
    wer_ci_high: float | None = None

    @property
    def coverage(self) -> float | None:
        """Share of the clips with a reference that the model answered (``None``: no such clip)."""
        return self.n_clips / self.n_ref_clips if self.n_ref_clips else None


def inflation_columns(
    clips: Sequence[ClipInput],
    model: str,
    edits: Sequence[Edit],
    cache: AlignmentCache,
    corrected: dict[tuple[str, tuple[int, ...]], Tokens] | None = None,
    *,
    merge_compounds: bool = False,
) -> tuple[np.ndarray, int]:
    """``model``'s per-clip ``[errors, words, errors_corrected, words_corrected]``, one row per clip.

    Rows follow ``clips``; a clip whose reference is empty is a row of zeros; a clip where
    ``model`` has no hypothesis counts as an empty hypothesis (every reference word deleted), so
    missing output never lowers WER. Also returns the number of clips with a hypothesis and a reference.
    ``corrected`` memoizes corrected references by (clip, edit objects) across models that are
    judged on the same edits (pass one dict to every call while the edits are alive).
    ``merge_compounds`` counts errors as the Open ASR Leaderboard does (kaldialign's option).
    """
    corrected = {} if corrected is None else corrected
    by_clip: dict[str, list[Edit]] = defaultdict(list)
    for e in edits:
        by_clip[e.clip_id].append(e)
    out = np.zeros((len(clips), 4), dtype=np.float64)
    rows: list[tuple[int, int, int, int, int]] = []
    errors = cache.errors if not merge_compounds else partial(cache.errors, merge_compounds=True)
    n_answered = 0
    for i, clip in enumerate(clips):
        ref = clip.ref
        if not ref:
            continue
        hyp = clip.hyps.get(model)
        if hyp is None:  # no output: every reference word is deleted
            own = by_clip.get(clip.clip_id)
            fixed_len = len(ref) if own is None else len(apply_edits(ref, own))
            rows.append((i, len(ref), len(ref), fixed_len, fixed_len))
            continue
        n_answered += 1
        err = errors(ref, hyp)
        own = by_clip.get(clip.clip_id)
        if own is None:  # no edit to apply: the corrected reference is the reference
            rows.append((i, err, len(ref), err, len(ref)))
        else:
            key = (clip.clip_id, tuple(map(id, own)))
            fixed = corrected.get(key)
            if fixed is None:
                fixed = corrected[key] = cache.intern(apply_edits(ref, own))
            rows.append((i, err, len(ref), errors(fixed, hyp), len(fixed)))
    if rows:
        data = np.array(rows, dtype=np.int64)
        out[data[:, 0]] = data[:, 1:]
    return out, n_answered


def wer_inflations(
    clips: Sequence[ClipInput],
    edits_by_model: Mapping[str, Sequence[Edit]],
    cache: AlignmentCache,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    *,
    merge_compounds: bool = False,
) -> dict[str, Inflation]:
    """WER against given and corrected references for every model, on common bootstrap resamples.

    The clusters are the clips with a non-empty reference. Resample counts (clips drawn with
    replacement) are drawn once from ``rng`` and applied to every model's columns (one matrix
    product); a clip where a model has no hypothesis contributes zeros to that model's sums.
    A model's interval therefore depends on ``rng``'s seed, the clips and its own data only:
    not on which other models are scored, nor on their order. ``merge_compounds`` counts errors
    as the Open ASR Leaderboard does (kaldialign's option).
    """
    rows = [c for c in clips if c.ref]
    models = list(edits_by_model)
    cols, counted = [], []
    corrected: dict[tuple[str, tuple[int, ...]], Tokens] = {}
    for m in models:
        col, n = inflation_columns(rows, m, edits_by_model[m], cache, corrected, merge_compounds=merge_compounds)
        cols.append(col)
        counted.append(n)
    return inflations_from_columns(models, cols, counted, len(rows), rng, n_resamples)


def inflations_from_columns(
    models: Sequence[str],
    cols: Sequence[np.ndarray],
    counted: Sequence[int],
    n_rows: int,
    rng: np.random.Generator,
    n_resamples: int,
) -> dict[str, Inflation]:
    """:func:`wer_inflations` from each model's :func:`inflation_columns` (``cols``: one
    ``(n_rows, 4)`` array per model over the clips with a reference; ``counted``: its answered
    clips): the sums and the common-resample bootstrap."""
    stacked = np.stack(cols, axis=2) if cols else np.zeros((n_rows, 4, 0))  # (clips, 4, models)
    err, words, err_c, words_c = (stacked[:, j, :] for j in range(4))
    # columns k..2k-1 are WER itself (WER - 0): its interval on the same resamples, which are drawn
    # per cluster whatever the number of columns, so the inflation intervals do not move
    zeros = np.zeros_like(err)
    both = bootstrap_ratio_differences(
        np.concatenate([err_c, err], axis=1),
        np.concatenate([words_c, words], axis=1),
        np.concatenate([err, zeros], axis=1),
        np.concatenate([words, zeros], axis=1),
        rng,
        n_resamples,
    )
    intervals, wer_intervals = both[: len(models)], both[len(models) :]
    out: dict[str, Inflation] = {}
    for j, m in enumerate(models):
        e, w, ec, wc = (int(x[:, j].sum()) for x in (err, words, err_c, words_c))
        if w == 0:  # no reference word at all: WER is undefined, never 0
            out[m] = Inflation(m, counted[j], 0, None, None, None, None, None, n_rows)
            continue
        est, low, high = intervals[j]
        _, wer_low, wer_high = wer_intervals[j]
        out[m] = Inflation(
            m, counted[j], w, e / w, ec / max(wc, 1), 100 * est, 100 * low, 100 * high, n_rows, wer_low, wer_high
        )
    return out


def wer_inflation(
    clips: Sequence[ClipInput],
    model: str,
    edits: Sequence[Edit],
    cache: AlignmentCache,
    rng: np.random.Generator,
    n_resamples: int = 1000,
) -> Inflation:
    """WER against given and corrected references on the clips where ``model`` has output.

    The one-model case of :func:`wer_inflations` (the same resamples for the same ``rng``).
    """
    return wer_inflations(clips, {model: edits}, cache, rng, n_resamples)[model]
