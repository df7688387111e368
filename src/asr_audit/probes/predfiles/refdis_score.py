"""Scoring one model on mined edits: accept-ref overall, by edit kind and by position.

Pure: edits in, a :class:`~asr_audit.probes.predfiles.refdis_result.ModelScore` out (Wilson intervals from
:func:`asr_audit.stats.intervals.wilson`).
"""

from __future__ import annotations

from collections.abc import Sequence

from asr_audit.probes.predfiles.inflation import Inflation
from asr_audit.probes.predfiles.refdis import DELETION, END, INSERTION, MIDDLE, REF, START, SUBSTITUTION, Edit
from asr_audit.probes.predfiles.refdis_result import ModelScore
from asr_audit.stats.intervals import Rate, wilson

KINDS = (DELETION, SUBSTITUTION, INSERTION)
POSITIONS = (START, MIDDLE, END)


def accept_ref(edits: Sequence[Edit], model: str) -> Rate:
    """Share of the edits ``model`` is judged on where it wrote the reference, with a Wilson interval."""
    judged = [e.verdicts.get(model) for e in edits]
    n = sum(v is not None for v in judged)
    return wilson(sum(v == REF for v in judged), n)


def score_model(model: str, edits: Sequence[Edit], *, in_panel: bool, inflation: Inflation) -> ModelScore:
    """accept-ref of ``model`` over the edits it is judged on, overall and by kind / position."""
    eligible_clips = {e.clip_id for e in edits if e.verdicts.get(model) is not None}
    return ModelScore(
        model=model, in_panel=in_panel, accept_ref=accept_ref(edits, model), n_clips=len(eligible_clips),
        by_kind={k: accept_ref([e for e in edits if e.kind == k], model) for k in KINDS},
        by_position={p: accept_ref([e for e in edits if e.position == p], model) for p in POSITIONS},
        inflation=inflation,
    )
