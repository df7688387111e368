"""Scoring one model on mined edits: accept-ref overall, by edit kind and by position.

Pure: edits in, a :class:`~asr_audit.probes.predfiles.refdis_result.ModelScore` out (Wilson intervals from
:func:`asr_audit.stats.intervals.wilson`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

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
    loo_unscored,
)
from asr_audit.probes.predfiles.refdis_result import ModelScore, RefdisResult
from asr_audit.stats.intervals import Rate, wilson

if TYPE_CHECKING:
    from asr_audit.probes.predfiles.adequacy import PanelAdequacy
    from asr_audit.probes.predfiles.verified import Verification

KINDS = (DELETION, SUBSTITUTION, INSERTION)
POSITIONS = (START, MIDDLE, END)


def accept_ref(edits: Sequence[Edit], model: str) -> Rate:
    """Share of the edits ``model`` is judged on where it wrote the reference, with a Wilson interval:
    verdicts ``ref`` over verdicts ``ref`` or ``consensus`` (``other`` and ineligible verdicts are
    not counted)."""
    return _rate([e.verdicts.get(model) for e in edits])


def _rate(judged: Sequence[Verdict]) -> Rate:
    """:func:`accept_ref` of these verdicts."""
    return _rate_of(Counter(judged))


def _rate_of(counts: Mapping[Verdict, int]) -> Rate:
    """:func:`accept_ref` of verdicts counted by value (a :class:`~collections.Counter`)."""
    ref = counts.get(REF, 0)
    return wilson(ref, ref + counts.get(CONSENSUS, 0))


def score_model(
    model: str, edits: Sequence[Edit], *, in_panel: bool, inflation: Inflation, count_other: bool = True
) -> ModelScore:
    """accept-ref of ``model`` over the edits it is judged on, overall and by kind / position.

    ``count_other``: report the number of ``other`` verdicts (off under the public code's exact
    rule, which has none, so that its output stays the public code's). When no verdict is
    eligible, ``reason`` says why accept-ref is undefined."""
    verdicts = [e.verdicts.get(model) for e in edits]  # each edit's verdict, read once
    eligible_clips = {e.clip_id for e, v in zip(edits, verdicts) if v == REF or v == CONSENSUS}
    counts = Counter(verdicts)
    n_other, n_none = counts.get(OTHER, 0), counts.get(None, 0)
    rate = _rate_of(counts)
    # verdicts counted per (kind, verdict) and (position, verdict): one pass each, in C
    by_kind = Counter(zip([e.kind for e in edits], verdicts))
    by_position = Counter(zip([e.position for e in edits], verdicts))
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
        by_kind={k: _rate_of({v: by_kind[k, v] for v in (REF, CONSENSUS)}) for k in KINDS},
        by_position={p: _rate_of({v: by_position[p, v] for v in (REF, CONSENSUS)}) for p in POSITIONS},
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
    verification: Verification | None = None,
    verified_inflation: Mapping[str, Inflation] | None = None,
    adequacy: PanelAdequacy | None = None,
) -> RefdisResult:
    """The :class:`RefdisResult` of a mining, its scored edits per model and their WER figures
    (``verification``, ``verified_inflation``, ``adequacy``: recorded as given)."""
    scores = [
        score_model(m, scored[m], in_panel=m in panel, inflation=inflations[m], count_other=not params.exact_verdicts)
        for m in models
    ]
    unscored = loo_unscored(panel, params)  # a panel too small for leave-one-out: its members get no accept-ref
    if unscored is not None:
        scores = [replace(s, reason=unscored) if s.in_panel and s.accept_ref.n == 0 else s for s in scores]
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
        verification=verification,
        verified_inflation=verified_inflation or {},
        adequacy=adequacy,
    )
