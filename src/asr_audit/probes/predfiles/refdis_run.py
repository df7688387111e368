"""Run the reference-disagreement probe over a prediction set: normalize, mine, score.

This is the library entry point behind ``asr-audit refdis``: it turns raw prediction files
into a :class:`RefdisResult` (edits, accept-ref per model with Wilson intervals, WER and WER
inflation with bootstrap intervals), serializable to JSON with every parameter, the normalizer
and the seed recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from asr_audit.corpus.predfiles import PredictionSet, gc_paused
from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.inflation import Inflation, wer_inflations
from asr_audit.probes.predfiles.refdis import (
    END, INSERTION, MIDDLE, REF, START, SUBSTITUTION, DELETION,
    ClipInput, Edit, Mining, RefdisParams, mine, mine_two_references,
)
from asr_audit.stats.intervals import Rate, wilson
from asr_audit.text.align import AlignmentCache, tokens
from asr_audit.text.text2num import with_text2num

KINDS = (DELETION, SUBSTITUTION, INSERTION)
POSITIONS = (START, MIDDLE, END)


@dataclass(frozen=True, slots=True)
class ModelScore:
    """One model's accept-ref and WER figures."""

    model: str
    in_panel: bool
    accept_ref: Rate
    n_clips: int  # clips with at least one eligible edit
    by_kind: Mapping[str, Rate]
    by_position: Mapping[str, Rate]
    inflation: Inflation

    def to_dict(self) -> dict[str, object]:
        r, inf = self.accept_ref, self.inflation
        return {
            "model": self.model, "in_panel": self.in_panel,
            "accept_ref": r.rate, "n_ref": r.k, "n_eligible": r.n, "ci_low": r.low, "ci_high": r.high,
            "n_clips": self.n_clips,
            "by_kind": {k: v.to_dict() for k, v in self.by_kind.items()},
            "by_position": {k: v.to_dict() for k, v in self.by_position.items()},
            "wer": inf.wer, "wer_corrected": inf.wer_corrected, "wer_inflation": inf.inflation,
            "wer_inflation_ci_low": inf.ci_low, "wer_inflation_ci_high": inf.ci_high,
            "wer_n_clips": inf.n_clips, "wer_n_words": inf.n_words,
        }


@dataclass(frozen=True, slots=True)
class RefdisResult:
    params: RefdisParams
    normalizer: Mapping[str, object]
    mode: str  # "panel" | "two-reference"
    source: str
    n_clips: int
    panel: tuple[str, ...]
    mining: Mining
    scores: tuple[ModelScore, ...]
    seed: int
    n_resamples: int
    references: Mapping[str, str]  # normalized reference of every clip with an edit (for display)

    @property
    def edits(self) -> tuple[Edit, ...]:
        return self.mining.edits

    def score(self, model: str) -> ModelScore:
        return next(s for s in self.scores if s.model == model)

    def to_dict(self) -> dict[str, object]:
        return {
            "probe": "refdis",
            "mode": self.mode,
            "source": self.source,
            "params": self.params.to_dict(),
            "normalizer": dict(self.normalizer),
            "seed": self.seed,
            "bootstrap_resamples": self.n_resamples,
            "n_clips": self.n_clips,
            "panel": list(self.panel),
            "n_edits": len(self.mining.edits),
            "edits": [e.to_dict() for e in self.mining.edits],
            "loo_edits": {m: [e.to_dict() for e in es] for m, es in self.mining.loo_edits.items()},
            "models": [s.to_dict() for s in self.scores],
            "references": dict(self.references),
        }


def _rate(edits: Sequence[Edit], model: str) -> Rate:
    judged = [e.verdicts.get(model) for e in edits]
    n = sum(v is not None for v in judged)
    return wilson(sum(v == REF for v in judged), n)


def score_model(model: str, edits: Sequence[Edit], in_panel: bool, inflation: Inflation) -> ModelScore:
    """accept-ref of ``model`` over the edits it is judged on, overall and by kind / position."""
    eligible_clips = {e.clip_id for e in edits if e.verdicts.get(model) is not None}
    return ModelScore(
        model, in_panel, _rate(edits, model), len(eligible_clips),
        {k: _rate([e for e in edits if e.kind == k], model) for k in KINDS},
        {p: _rate([e for e in edits if e.position == p], model) for p in POSITIONS},
        inflation,
    )


def prepare_clips(
    preds: PredictionSet, models: Sequence[str], normalize, text2num: bool,  # noqa: ANN001
    references: Mapping[str, str] | None = None, cache: AlignmentCache | None = None, workers: int = 1,
) -> list[ClipInput]:
    """Normalize references and hypotheses once (cached per distinct string) into token tuples.

    With ``cache``, token tuples come from :meth:`AlignmentCache.tokens`, so a run that reuses
    the cache gets the very tuples its alignments are keyed by.
    """
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


def run_refdis(
    preds: PredictionSet,
    panel: Sequence[str],
    params: RefdisParams,
    normalizer: str = "whisper",
    models: Sequence[str] | None = None,
    corrected: Mapping[str, str] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    text2num: bool = True,
    cache: AlignmentCache | None = None,
    normalize_workers: int = 1,
) -> RefdisResult:
    """Reference disagreement over ``preds`` with ``panel`` (or a corrected reference set).

    ``normalize_workers > 1`` normalizes new strings in that many forked processes (see
    :func:`~asr_audit.text.normalize.normalize_many`); the result is the same.
    """
    with gc_paused():  # millions of token tuples and alignments, no reference cycles
        return _run_refdis(preds, panel, params, normalizer, models, corrected, seed, n_resamples,
                           text2num, cache, normalize_workers)


def _run_refdis(
    preds: PredictionSet, panel: Sequence[str], params: RefdisParams, normalizer: str,
    models: Sequence[str] | None, corrected: Mapping[str, str] | None, seed: int, n_resamples: int,
    text2num: bool, cache: AlignmentCache | None, workers: int,
) -> RefdisResult:
    from asr_audit.text.normalize import get_normalizer

    norm = get_normalizer(normalizer)
    models = list(models) if models is not None else preds.models
    for m in [*panel, *models]:
        preds.file(m)  # raises a ConfigError naming the available models
    if len(set(panel)) != len(panel):
        raise ConfigError(f"--panel names a model twice: {','.join(panel)}")
    cache = AlignmentCache() if cache is None else cache  # an empty cache is falsy (__len__)
    if corrected is None:
        if len(panel) < params.min_panel:
            raise ConfigError(f"the panel has {len(panel)} member(s) but --min-panel is {params.min_panel}; "
                              "fix: name more panel members or lower --min-panel")
        everyone = list(dict.fromkeys([*models, *panel]))
        clips = prepare_clips(preds, everyone, norm, text2num, cache=cache, workers=workers)
        mining = mine(clips, panel, models, params, cache)
        mode = "panel"
    else:
        shared = {cid: preds.references[cid] for cid in preds.references if cid in corrected}
        if not shared:
            raise ConfigError("no clip id of the corrected references matches the prediction files; "
                              "fix: use the same clip ids in both")
        clips = prepare_clips(preds, models, norm, text2num, shared, cache, workers)
        fixed = prepare_clips(preds, [], norm, text2num, {c: corrected[c] for c in shared}, cache, workers)
        edits = []
        for clip, fx in zip(clips, fixed):
            edits.extend(mine_two_references(clip, fx.ref, models, params, cache))
        mining = Mining(tuple(edits), {})
        mode, panel = "two-reference", []
    scored = {m: mining.scored_edits(m) for m in models}
    # one stream for the run: every model's interval uses the same resamples of the clips
    inflations = wer_inflations(clips, scored, cache, np.random.default_rng(seed), n_resamples)
    scores = [score_model(m, scored[m], m in panel, inflations[m]) for m in models]
    desc = {**norm.describe(), "text2num": text2num}
    with_edits = {e.clip_id for e in mining.edits} | {e.clip_id for es in mining.loo_edits.values() for e in es}
    refs = {c.clip_id: " ".join(c.ref) for c in clips if c.clip_id in with_edits}
    return RefdisResult(params, desc, mode, preds.source, len(clips), tuple(panel), mining,
                        tuple(scores), seed, n_resamples, refs)
