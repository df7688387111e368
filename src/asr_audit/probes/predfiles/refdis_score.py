"""Scoring one model on mined edits: accept-ref overall, by edit kind and by position.

Pure: edits in, a :class:`~asr_audit.probes.predfiles.refdis_result.ModelScore` out (Wilson intervals from
:func:`asr_audit.stats.intervals.wilson`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from asr_audit.probes.predfiles.inflation import Inflation
from asr_audit.probes.predfiles.refdis import (
    CONSENSUS,
    DELETION,
    END,
    INSERTION,
    MIDDLE,
    OTHER,
    REF,
    START,
    SUBSTITUTION,
    Edit,
    Mining,
    RefdisParams,
    Verdict,
)
from asr_audit.probes.predfiles.refdis_result import ModelScore, RefdisResult
from asr_audit.stats.intervals import Rate, wilson

KINDS = (DELETION, SUBSTITUTION, INSERTION)
POSITIONS = (START, MIDDLE, END)


def accept_ref(edits: Sequence[Edit], model: str) -> Rate:
    """Share of the edits ``model`` is judged on where it wrote the reference, with a Wilson interval:
    verdicts ``ref`` over verdicts ``ref`` or ``consensus`` (``other`` and ineligible verdicts are
    not counted)."""
    return _rate([e.verdicts.get(model) for e in edits])


def _rate(judged: Sequence[Verdict]) -> Rate:
    """:func:`accept_ref` of these verdicts."""
    n = sum(v in (REF, CONSENSUS) for v in judged)
    return wilson(sum(v == REF for v in judged), n)


def score_model(
    model: str, edits: Sequence[Edit], *, in_panel: bool, inflation: Inflation, count_other: bool = True
) -> ModelScore:
    """accept-ref of ``model`` over the edits it is judged on, overall and by kind / position.

    ``count_other``: report the number of ``other`` verdicts (off under the public code's exact
    rule, which has none, so that its output stays the public code's). When no verdict is
    eligible, ``reason`` says why accept-ref is undefined."""
    verdicts = [e.verdicts.get(model) for e in edits]  # each edit's verdict, read once
    eligible_clips = {e.clip_id for e, v in zip(edits, verdicts) if v in (REF, CONSENSUS)}
    n_other = sum(v == OTHER for v in verdicts)
    n_none = sum(v is None for v in verdicts)
    rate = _rate(verdicts)
    by_kind: dict[str, list[Verdict]] = {k: [] for k in KINDS}
    by_position: dict[str, list[Verdict]] = {p: [] for p in POSITIONS}
    for e, v in zip(edits, verdicts):
        if e.kind in by_kind:
            by_kind[e.kind].append(v)
        if e.position in by_position:
            by_position[e.position].append(v)
    reason = None
    if rate.n == 0:
        reason = (
            f"no edit was mined for it ({'leave-one-out panel' if in_panel else 'panel'})"
            if not edits
            else f"none of its {len(edits)} edit(s) could be judged ({n_none} ineligible, {n_other} other)"
        )
    return ModelScore(
        model=model,
        in_panel=in_panel,
        accept_ref=rate,
        n_clips=len(eligible_clips),
        by_kind={k: _rate(vs) for k, vs in by_kind.items()},
        by_position={p: _rate(vs) for p, vs in by_position.items()},
        inflation=inflation,
        n_other=n_other if count_other else None,
        reason=reason,
    )


def clips_with_edits(mining: Mining) -> set[str]:
    """Clip ids with at least one edit (full panel or leave-one-out): the references a result shows."""
    return {e.clip_id for e in mining.edits} | {e.clip_id for es in mining.loo_edits.values() for e in es}


def assemble_result(
    mining: Mining,
    scored: Mapping[str, Sequence[Edit]],
    inflations: Mapping[str, Inflation],
    *,
    models: Sequence[str],
    panel: Sequence[str],
    params: RefdisParams,
    normalizer: dict[str, Any],
    mode: str,
    source: str,
    n_clips: int,
    seed: int,
    n_resamples: int,
    references: Mapping[str, str],
    merge_compounds: bool,
) -> RefdisResult:
    """The :class:`RefdisResult` of a mining, its scored edits per model and their WER figures."""
    scores = [
        score_model(m, scored[m], in_panel=m in panel, inflation=inflations[m], count_other=not params.exact_verdicts)
        for m in models
    ]
    return RefdisResult(
        params=params,
        normalizer=normalizer,
        mode=mode,
        source=source,
        n_clips=n_clips,
        panel=tuple(panel),
        mining=mining,
        scores=tuple(scores),
        seed=seed,
        n_resamples=n_resamples,
        references=references,
        merge_compounds=merge_compounds,
    )
