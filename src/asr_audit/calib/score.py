"""Score the consensus miner against planted ground truth: precision and recall.

Matching rule (one edit may match several items; an item is recalled when any edit matches it),
always within one clip:

* a **deletion or substitution** edit (a run of reference token indices) matches an item with a
  non-empty reference span (a spurious insertion, a substitution, a convention) when the run and
  the span overlap;
* an **insertion** edit (anchor 0 or n) matches an **omitted** item with the same anchor when the
  panel's chunk shares at least one normalized token with the omitted words;
* a **substitution** edit matches an omitted item when its run starts or ends at the omission's
  anchor and its alternative text shares a token with the omitted words (the aligner may fold an
  omission and a neighbouring word into one replacement).

An edit is a true positive when it matches a planted *error*; otherwise it is a false positive,
labelled ``convention`` when it overlaps a record convention (which normalization or the
artefact filter should have removed) and ``unexplained`` when it overlaps nothing planted (the
panel's own recognition errors, or TTS mispronunciations). Precision = true-positive edits / all
edits; recall = recalled errors / planted errors. A calibration set reads every sentence in several
voices, so its planted items (and the edits mined on them) repeat: the items of one sentence are
not independent trials. Every rate's 95% interval is therefore sentence-clustered
(:func:`asr_audit.stats.intervals.clustered_rate`: a bootstrap over sentences; Wilson when no
sentence holds more than one item), seeded by ``seed`` with one stream per rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from asr_audit.calib.generate import CONVENTION, END, ERROR_KINDS, POSITIONS, START
from asr_audit.calib.truth import Truth, TruthItem, load_truth
from asr_audit.errors import InputFileError
from asr_audit.probes.predfiles.refdis import DELETION, INSERTION, SUBSTITUTION, Edit
from asr_audit.probes.predfiles.verified import (
    REFERENCE_RIGHT,
    REFERENCE_WRONG,
    TRUTH,
    UNSURE,
    EditLabel,
    Verification,
    Verify,
    edit_key,
)
from asr_audit.stats.intervals import Rate, clustered_rate
from asr_audit.stats.rng import model_rng

if TYPE_CHECKING:
    from asr_audit.probes.predfiles.refdis_result import RefdisResult

EDIT_KINDS = (DELETION, SUBSTITUTION, INSERTION)
TRUE_POSITIVE, ON_CONVENTION, UNEXPLAINED = "error", "convention", "unexplained"


def _shares_token(edit: Edit, item: TruthItem) -> bool:
    return bool(set(edit.alt_text.split()) & set(item.spoken_norm))


def edit_matches(edit: Edit, item: TruthItem) -> bool:
    """Whether ``edit`` (already known to be on ``item``'s clip) recovers ``item``; see the module doc."""
    if edit.kind == INSERTION:
        return item.is_omission and edit.ref_indices[0] == item.ref_start and _shares_token(edit, item)
    start, stop = edit.ref_indices[0], edit.ref_indices[-1] + 1
    if not item.is_omission:
        return start < item.ref_stop and item.ref_start < stop
    return edit.kind == SUBSTITUTION and item.ref_start in (start, stop) and _shares_token(edit, item)


@dataclass(frozen=True, slots=True)
class EditOutcome:
    """One mined edit and what it matched."""

    clip_id: str
    kind: str
    position: str
    ref_indices: tuple[int, ...]
    ref_text: str
    alt_text: str
    label: str  # error | convention | unexplained
    matched: tuple[int, ...]  # item numbers within the clip
    confidence: float | None = None  # the edit's confidence (None: not mined by a panel)

    def to_dict(self) -> dict[str, object]:
        return {
            "clip_id": self.clip_id,
            "kind": self.kind,
            "position": self.position,
            "ref_indices": list(self.ref_indices),
            "ref_text": self.ref_text,
            "alt_text": self.alt_text,
            "confidence": self.confidence,
            "label": self.label,
            "matched_items": list(self.matched),
        }


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """The miner at one operating point: the edits whose confidence is at least ``threshold``."""

    threshold: float
    n_edits: int
    n_true: int  # true-positive edits among them
    n_recalled: int  # planted errors matched by at least one of them
    n_errors: int

    @property
    def precision(self) -> float | None:
        return self.n_true / self.n_edits if self.n_edits else None

    @property
    def recall(self) -> float | None:
        return self.n_recalled / self.n_errors if self.n_errors else None

    def to_dict(self) -> dict[str, object]:
        p, r = self.precision, self.recall
        return {
            "threshold": self.threshold,
            "n_edits": self.n_edits,
            "n_true": self.n_true,
            "precision": None if p is None else round(p, 4),
            "n_recalled": self.n_recalled,
            "n_errors": self.n_errors,
            "recall": None if r is None else round(r, 4),
        }


#: Thresholds of the precision-recall curve ``calib score`` prints (0, 0.05, ..., 1).
CURVE_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(21))


def precision_recall_curve(
    outcomes: Sequence[EditOutcome], n_errors: int, thresholds: Sequence[float] = CURVE_THRESHOLDS
) -> tuple[CurvePoint, ...]:
    """Precision and recall of the edits kept at each confidence threshold (``confidence >=
    threshold``; an edit without a confidence is always kept). Recall counts distinct planted
    errors (clip, item) matched by a kept true-positive edit.

    >>> o = [EditOutcome("c", "deletion", "start", (0,), "a", "", "error", (0,), 0.9),
    ...      EditOutcome("c", "deletion", "end", (5,), "b", "", "unexplained", (), 0.3)]
    >>> [(p.threshold, p.n_edits, p.n_true, p.n_recalled) for p in precision_recall_curve(o, 2, (0.0, 0.5, 0.95))]
    [(0.0, 2, 1, 1), (0.5, 1, 1, 1), (0.95, 0, 0, 0)]
    """
    points = []
    for t in thresholds:
        kept = [o for o in outcomes if o.confidence is None or o.confidence >= t]
        recalled = {(o.clip_id, m) for o in kept if o.label == TRUE_POSITIVE for m in o.matched}
        n_true = sum(o.label == TRUE_POSITIVE for o in kept)
        points.append(CurvePoint(float(t), len(kept), n_true, len(recalled), n_errors))
    return tuple(points)


@dataclass(frozen=True, slots=True)
class CalibScore:
    """The miner's precision and recall on one calibration set, for one panel and preset."""

    panel: tuple[str, ...]
    preset: str | None
    params: Mapping[str, object]
    n_clips: int
    n_edits: int
    precision: Rate
    recall: Rate
    recall_boundary: Rate  # errors at the start or end of the normalized reference
    recall_by_kind: Mapping[str, Rate]
    recall_by_position: Mapping[str, Rate]
    recall_by_kind_position: Mapping[str, Mapping[str, Rate]]
    precision_by_kind: Mapping[str, Rate]  # by the miner's edit kind
    precision_by_position: Mapping[str, Rate]
    conventions_mined: Rate  # convention items hit by a false-positive edit / all conventions
    n_false_on_conventions: int
    n_false_unexplained: int
    outcomes: tuple[EditOutcome, ...]
    missed: tuple[TruthItem, ...]
    # precision and recall at each confidence threshold, over every edit the miner gave to score
    # (the scored edits above are those at the operating point ``params["min_confidence"]``)
    curve: tuple[CurvePoint, ...] = ()

    def to_dict(self) -> dict[str, object]:
        def rates(m: Mapping[str, Rate]) -> dict[str, object]:
            return {k: v.to_dict() for k, v in m.items()}

        return {
            "probe": "calib-score",
            "panel": list(self.panel),
            "preset": self.preset,
            "params": dict(self.params),
            "n_clips": self.n_clips,
            "n_edits": self.n_edits,
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
            "recall_boundary": self.recall_boundary.to_dict(),
            "recall_by_kind": rates(self.recall_by_kind),
            "recall_by_position": rates(self.recall_by_position),
            "recall_by_kind_position": {k: rates(v) for k, v in self.recall_by_kind_position.items()},
            "precision_by_kind": rates(self.precision_by_kind),
            "precision_by_position": rates(self.precision_by_position),
            "conventions_mined": self.conventions_mined.to_dict(),
            "false_positives": {"on_convention": self.n_false_on_conventions, "unexplained": self.n_false_unexplained},
            "edits": [o.to_dict() for o in self.outcomes],
            "missed": [t.to_dict() for t in self.missed],
            "curve": [p.to_dict() for p in self.curve],
        }


def score_edits(
    truth: Truth,
    edits: Iterable[Edit],
    panel: Sequence[str] = (),
    preset: str | None = None,
    params: Mapping[str, object] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    min_confidence: float | None = None,
) -> CalibScore:
    """Match ``edits`` to ``truth`` (restrict ``truth`` to the mined clips first) and score them.

    Intervals are sentence-clustered (see the module docstring); ``seed`` and ``n_resamples`` set
    their bootstrap. Every edit enters the precision-recall curve; the rates are those of the edits
    whose confidence is at least ``min_confidence`` (all edits when ``None``).
    """
    sentence = {cid: c.sentence_id for cid, c in truth.clips.items()}

    def _recall(items: Sequence[TruthItem], hit: set[tuple[str, int]], name: str) -> Rate:
        return clustered_rate(
            [(t.clip_id, t.item) in hit for t in items],
            [t.sentence_id for t in items],
            model_rng(seed, "recall\x1f" + name),
            n_resamples,
        )

    def _precision(outcomes: Sequence[EditOutcome], name: str) -> Rate:
        return clustered_rate(
            [o.label == TRUE_POSITIVE for o in outcomes],
            [sentence.get(o.clip_id, o.clip_id) for o in outcomes],
            model_rng(seed, "precision\x1f" + name),
            n_resamples,
        )

    by_clip: dict[str, list[TruthItem]] = {}
    for t in truth.items:
        by_clip.setdefault(t.clip_id, []).append(t)
    every: list[EditOutcome] = []
    for e in edits:
        cid = truth.resolve(e.clip_id)
        if cid is None:
            raise InputFileError(
                truth.source or "calibration set",
                f"mined clip {e.clip_id!r} is not in the set",
                "score prediction files made from this calibration set's manifests",
            )
        items = by_clip.get(cid, [])
        matched = [t for t in items if edit_matches(e, t)]
        errors = [t for t in matched if t.is_error]
        label = TRUE_POSITIVE if errors else ON_CONVENTION if matched else UNEXPLAINED
        every.append(
            EditOutcome(
                cid,
                e.kind,
                e.position,
                tuple(e.ref_indices),
                " ".join(e.ref_tokens),
                e.alt_text,
                label,
                tuple(t.item for t in (errors or matched)),
                e.confidence,
            )
        )
    outcomes = [o for o in every if min_confidence is None or o.confidence is None or o.confidence >= min_confidence]
    hit = {(o.clip_id, m) for o in outcomes if o.label == TRUE_POSITIVE for m in o.matched}
    conv_hit = {(o.clip_id, m) for o in outcomes if o.label == ON_CONVENTION for m in o.matched}
    errors = truth.errors()
    conventions = truth.conventions()
    return CalibScore(
        panel=tuple(panel),
        preset=preset,
        params=dict(params or {}),
        n_clips=len(truth.clips),
        n_edits=len(outcomes),
        precision=_precision(outcomes, "all"),
        recall=_recall(errors, hit, "all"),
        recall_boundary=_recall([t for t in errors if t.position in (START, END)], hit, "boundary"),
        recall_by_kind={k: _recall([t for t in errors if t.kind == k], hit, k) for k in ERROR_KINDS},
        recall_by_position={p: _recall([t for t in errors if t.position == p], hit, p) for p in POSITIONS},
        recall_by_kind_position={
            k: {
                p: _recall([t for t in errors if t.kind == k and t.position == p], hit, f"{k}\x1f{p}")
                for p in POSITIONS
            }
            for k in ERROR_KINDS
        },
        precision_by_kind={k: _precision([o for o in outcomes if o.kind == k], k) for k in EDIT_KINDS},
        precision_by_position={p: _precision([o for o in outcomes if o.position == p], p) for p in POSITIONS},
        conventions_mined=_recall(conventions, conv_hit, "conventions"),
        n_false_on_conventions=sum(o.label == ON_CONVENTION for o in outcomes),
        n_false_unexplained=sum(o.label == UNEXPLAINED for o in outcomes),
        outcomes=tuple(outcomes),
        missed=tuple(t for t in errors if (t.clip_id, t.item) not in hit),
        curve=precision_recall_curve(
            every, len(errors), sorted({*CURVE_THRESHOLDS, *([] if min_confidence is None else [min_confidence])})
        ),
    )


def score_miner(
    truth: Truth,
    refdis_result: RefdisResult,
    clip_ids: Iterable[str] | None = None,
    seed: int = 0,
    min_confidence: float | None = None,
) -> CalibScore:
    """Precision and recall of a :class:`~asr_audit.probes.predfiles.refdis_result.RefdisResult`'s full-panel edits.

    ``clip_ids`` (prediction keys: clip ids or audio paths) restricts the truth to the clips the
    miner saw; by default every clip of ``truth`` counts, so planted errors on clips without
    predictions count as missed. ``seed`` seeds the sentence-clustered intervals.
    ``min_confidence`` is the operating point the rates are reported at; mine with
    ``min_confidence=None`` and pass it here, so the precision-recall curve spans every edit
    (the result's own ``params.min_confidence`` is recorded when this is ``None``).
    """
    if clip_ids is not None:
        resolved = [c for k in clip_ids if (c := truth.resolve(k)) is not None]
        truth = truth.restrict(resolved)
    params = refdis_result.params
    point = params.min_confidence if min_confidence is None else min_confidence
    return score_edits(
        truth,
        refdis_result.edits,
        refdis_result.panel,
        params.preset,
        {**params.to_dict(), "min_confidence": point},
        seed=seed,
        min_confidence=point,
    )


def edit_label(truth: Truth, edit: Edit) -> str:
    """What planted truth says of one mined edit: ``reference-wrong`` when it corrects a planted
    error and nothing else (:func:`_within`), ``unsure`` when it matches only a record convention
    (not an error, yet not the panel's mishearing either) or also rewrites correct words around an
    error, ``reference-right`` when it matches nothing planted (the panel misheard)."""
    cid = truth.resolve(edit.clip_id)
    if cid is None:
        raise InputFileError(
            truth.source or "calibration set",
            f"mined clip {edit.clip_id!r} is not in the set",
            "verify edits of prediction files made from this calibration set's manifests",
        )
    matched = [t for t in truth.items if t.clip_id == cid and edit_matches(edit, t)]
    if any(t.is_error and _within(edit, t) for t in matched):
        return REFERENCE_WRONG
    return UNSURE if matched else REFERENCE_RIGHT


def _within(edit: Edit, item: TruthItem) -> bool:
    """Whether ``edit`` corrects only ``item``'s span: an insertion at an omission's anchor, or a
    run of reference words inside the planted span. An edit that also rewrites correct reference
    words around an error is not a verified correction (``unsure``): a model that hears those
    words right would read as copying (``testing.err_worlds.span_label``, docs/validity.md)."""
    if edit.kind == INSERTION:
        return item.is_omission and edit.ref_indices[0] == item.ref_start
    if item.is_omission:
        return False
    return item.ref_start <= edit.ref_indices[0] and edit.ref_indices[-1] + 1 <= item.ref_stop


def truth_verification(truth: Truth, edits: Iterable[Edit], name: str = "") -> Verification:
    """Every edit of ``edits`` (a run's full-panel and leave-one-out edits) labelled by planted
    truth (:func:`edit_label`): an exact source, so verified accept-ref needs no precision bound."""
    labels = {edit_key(e): EditLabel(label=edit_label(truth, e)) for e in edits}
    return Verification(
        source=TRUTH, name=name or f"planted truth ({truth.source or 'calibration set'})", labels=labels
    )


def truth_verify(corpus_dir: str | Path, split: str | None = None) -> Verify:
    """The verification step (:data:`~asr_audit.probes.predfiles.verified.Verify`) of a calibration
    set's planted truth: reads the folder now (a bad folder fails before any work), labels a
    run's edits when called (``asr-audit refdis --truth DIR``, ``[probes.refdis] truth = "DIR"``)."""
    truth = load_truth(corpus_dir, split)
    return partial(truth_verification, truth)


def check_references(truth: Truth, references: Mapping[str, str]) -> list[str]:
    """Prediction keys whose reference text differs from the calibration manifest's (the truth's token
    indices only hold for the manifest's references), and raises on keys not in the set."""
    bad = []
    for key, ref in references.items():
        cid = truth.resolve(key)
        if cid is None:
            raise InputFileError(
                truth.source or "calibration set",
                f"prediction clip {key!r} is not in the set",
                "score prediction files made from this calibration set's manifests (or pass the right --split)",
            )
        if ref.strip() != truth.clips[cid].reference.strip():
            bad.append(key)
    return bad


__all__ = [
    "CONVENTION",
    "CURVE_THRESHOLDS",
    "CalibScore",
    "CurvePoint",
    "EditOutcome",
    "check_references",
    "edit_matches",
    "precision_recall_curve",
    "score_edits",
    "score_miner",
    "truth_verification",
    "truth_verify",
]
