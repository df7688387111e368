"""Verified edits: which mined edits are true reference errors, and accept-ref on those alone.

A consensus edit is a hypothesis that the reference is wrong. On the edits mined for a model,

    accept-ref = pi * c + (1 - pi) * h

where ``pi`` is the share of mined edits that are true reference errors (the miner's precision on
*this* data), ``c`` the rate at which the model writes the reference on true errors (copying: the
evidence) and ``h`` the rate at which it writes the reference where the panel misheard (hearing
better than the panel: no evidence of anything). Consensus accept-ref alone cannot separate ``c``
from ``h`` (``docs/refdis.md``). A :class:`Verification` says, for some edits, whether the
reference is wrong there — from planted truth (a calibration set, an organism set), from people
(``asr-audit annotate``), or from audio verification by models other than the tested one — and
:func:`verified_scores` splits each model's verdicts by it: ``c`` on reference-wrong edits and
``h`` on reference-right ones, with the source's precision ``pi``.

A source that is not exact (an audio verifier, a labeller) carries its own measured precision;
:attr:`VerifiedScore.copy_low` then bounds ``c`` from below allowing every mislabelled edit to be a
"hears better" edit the model wrote as the reference (``h = 1`` on them), so a better listener
cannot raise it:  ``c >= 1 - (1 - c_obs) / p`` at the lower bounds of ``c_obs`` and ``p``.

Edits are named by :func:`edit_key`, a readable string that is the same for an
:class:`~asr_audit.probes.predfiles.refdis.Edit` and its ``to_dict()`` form:

>>> edit_key({"clip_id": "c1", "kind": "substitution", "ref_indices": [3, 4], "ref_tokens": ["ad", "on"],
...           "alt_text": "at"})
'c1|substitution|3:5|ad on>at'
>>> edit_key({"clip_id": "c1", "kind": "insertion", "ref_indices": [0], "ref_tokens": [], "alt_text": "thank you"})
'c1|insertion|0:0|>thank you'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.refdis import CONSENSUS, INSERTION, REF, Edit, Mining
from asr_audit.stats.intervals import Rate, wilson

#: What a verification says of one edit.
REFERENCE_WRONG = "reference-wrong"  # a true reference error: the model writing the reference copies
REFERENCE_RIGHT = "reference-right"  # the panel misheard: the model writing the reference hears better
UNSURE = "unsure"  # neither rendering, or can't tell: not counted
LABELS = (REFERENCE_WRONG, REFERENCE_RIGHT, UNSURE)

#: Where a verification comes from.
TRUTH, LABELS_SOURCE, AUDIO = "planted truth", "human labels", "audio verification"
SOURCES = (TRUTH, LABELS_SOURCE, AUDIO)

#: Verified edits a model needs before a verified rate may support a claim (as for consensus edits).
MIN_VERIFIED_FOR_A_CLAIM = 10


def edit_key(edit: Edit | Mapping[str, Any]) -> str:
    """The key naming one mined edit: ``clip|kind|start:stop|reference span>panel rendering``."""
    if isinstance(edit, Edit):
        clip, kind, idx, ref, alt = edit.clip_id, edit.kind, edit.ref_indices, edit.ref_tokens, edit.alt_text
    else:
        clip, kind, idx = str(edit["clip_id"]), str(edit["kind"]), tuple(edit["ref_indices"])
        ref, alt = tuple(edit.get("ref_tokens") or ()), str(edit.get("alt_text") or "")
    start = int(idx[0]) if idx else 0
    stop = start if kind == INSERTION else (int(idx[-1]) + 1 if idx else 0)
    return f"{clip}|{kind}|{start}:{stop}|{' '.join(ref)}>{alt}"


@dataclass(frozen=True, slots=True, kw_only=True)
class EditLabel:
    """What a source says of one edit; ``weight`` is the inverse inclusion probability of a sampled
    edit (1 when every edit was verified), so weighted rates are unbiased for the whole edit set."""

    label: str
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise ConfigError(f"edit label {self.label!r} is not one of {', '.join(LABELS)}")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise ConfigError(f"edit label weight {self.weight!r} must be a finite number > 0")


@dataclass(frozen=True, slots=True, kw_only=True)
class Verification:
    """Labels for some of a run's edits, from one source.

    ``precision``: the source's own measured precision (the share of its "reference-wrong" calls
    that are true reference errors, e.g. an audio verifier's on planted truth), ``None`` for an
    exact source (planted truth). ``excluded``: models this source may not verify (a verifier never
    verifies its own model's edits). ``name`` says what verified, for the report.
    """

    source: str
    name: str
    labels: Mapping[str, EditLabel]
    precision: Rate | None = None
    excluded: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ConfigError(f"verification source {self.source!r} is not one of {', '.join(SOURCES)}")

    def to_dict(self) -> dict[str, object]:
        counts = {lab: sum(1 for v in self.labels.values() if v.label == lab) for lab in LABELS}
        return {
            "source": self.source,
            "name": self.name,
            "n_labelled": len(self.labels),
            "counts": counts,
            "precision": None if self.precision is None else self.precision.to_dict(),
            "excluded": list(self.excluded),
            "notes": list(self.notes),
        }


def weighted_rate(hits: Sequence[tuple[bool, float]]) -> Rate:
    """A weighted share with a Wilson interval on Kish's effective sample size; plain Wilson when
    every weight is 1.

    >>> weighted_rate([(True, 1.0), (False, 1.0), (False, 1.0)]) == wilson(1, 3)
    True
    >>> r = weighted_rate([(True, 3.0), (False, 1.0)]); (r.k, r.n, round(r.rate, 3))
    (1, 2, 0.75)
    """
    if not hits:
        return wilson(0, 0)
    ws = [w for _, w in hits]
    if all(w == 1.0 for w in ws):
        return wilson(sum(1 for h, _ in hits if h), len(hits))
    total = sum(ws)
    p = sum(w for h, w in hits if h) / total
    n_eff = total * total / sum(w * w for w in ws)
    n_round = max(1, round(n_eff))
    interval = wilson(round(p * n_round), n_round)
    return Rate(
        k=sum(1 for h, _ in hits if h), n=len(hits), rate=p, low=min(interval.low, p), high=max(interval.high, p)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifiedScore:
    """One model's verdicts split by a verification: ``copy`` (c) on reference-wrong edits, ``hears``
    (h) on reference-right edits; ``precision`` (pi) the share of its labelled edits that are
    reference errors; ``copy_low`` the lower bound of ``c`` allowing for the source's own precision."""

    model: str
    source: str
    n_edits: int  # edits this model is judged on
    n_labelled: int  # of those, labelled reference-wrong or reference-right
    copy: Rate
    hears: Rate
    precision: Rate
    copy_low: float | None  # None when copy is undefined
    excluded: bool = False  # the source may not verify this model (it is the verifier)

    def to_dict(self) -> dict[str, object]:
        c, h = self.copy.estimate(), self.hears.estimate()
        return {
            "source": self.source,
            "excluded": self.excluded,
            "n_edits": self.n_edits,
            "n_labelled": self.n_labelled,
            "n_eligible": self.copy.n,
            "n_ref": self.copy.k,
            "accept_ref": c[0],
            "ci_low": c[1],
            "ci_high": c[2],
            "copy_low": self.copy_low,
            "hears_better": h[0],
            "hears_better_ci_low": h[1],
            "hears_better_ci_high": h[2],
            "hears_better_n": self.hears.n,
            "precision": self.precision.to_dict(),
        }


def _copy_low(copy: Rate, precision: Rate | None) -> float | None:
    """The lower bound of ``c``: Wilson's, or for an inexact source ``1 - (1 - low) / p_low``."""
    if not copy.defined:
        return None
    if precision is None:
        return copy.low
    if not precision.defined or precision.low <= 0:
        return 0.0
    return max(0.0, 1.0 - (1.0 - copy.low) / precision.low)


def model_edits(result: Mapping[str, Any], model: str) -> list[Mapping[str, Any]]:
    """The edits (``to_dict`` form) a refdis result judges ``model`` on: those of the full panel and
    of its leave-one-out panel whose ``scored`` names it, each once."""
    seen: set[str] = set()
    out: list[Mapping[str, Any]] = []
    for e in [*result.get("edits", []), *result.get("loo_edits", {}).get(model, [])]:
        if model not in e.get("scored", ()):
            continue
        key = edit_key(e)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def verified_score(result: Mapping[str, Any], model: str, verification: Verification) -> VerifiedScore:
    """``model``'s verdicts on the edits of ``result`` that ``verification`` labels."""
    edits = model_edits(result, model)
    copied: list[tuple[bool, float]] = []
    heard: list[tuple[bool, float]] = []
    wrong: list[tuple[bool, float]] = []
    excluded = model in verification.excluded
    for e in [] if excluded else edits:
        lab = verification.labels.get(edit_key(e))
        if lab is None or lab.label == UNSURE:
            continue
        wrong.append((lab.label == REFERENCE_WRONG, lab.weight))
        verdict = e.get("verdicts", {}).get(model)
        if verdict not in (REF, CONSENSUS):
            continue
        (copied if lab.label == REFERENCE_WRONG else heard).append((verdict == REF, lab.weight))
    copy = weighted_rate(copied)
    return VerifiedScore(
        model=model,
        source=verification.source,
        n_edits=len(edits),
        n_labelled=len(wrong),
        copy=copy,
        hears=weighted_rate(heard),
        precision=weighted_rate(wrong),
        copy_low=_copy_low(copy, verification.precision),
        excluded=excluded,
    )


def verified_scores(result: Mapping[str, Any], verification: Verification) -> dict[str, VerifiedScore]:
    """:func:`verified_score` of every model of ``result`` (its ``models`` entries), by model."""
    return {m["model"]: verified_score(result, m["model"], verification) for m in result.get("models", [])}


def with_verification(result: Mapping[str, Any], verification: Verification) -> dict[str, Any]:
    """``result`` (a refdis ``to_dict``) with ``verification`` summarised at the top and each
    model entry's ``verified`` set to its :class:`VerifiedScore` (a new dict; ``result`` is kept)."""
    scores = verified_scores(result, verification)
    out = dict(result)
    out["verification"] = verification.to_dict()
    out["models"] = [{**m, "verified": scores[m["model"]].to_dict()} for m in result.get("models", [])]
    return out


#: A verification step: given every edit of a run (its full panel's and leave-one-out edits), the
#: labels some source gives them. Any source feeds one (``calib.score.truth_verification`` for
#: planted truth, a labels file, an audio verifier); ``run_refdis(..., verify=...)`` calls it once
#: after mining and records its result in ``models[i]["verified"]``.
Verify = Callable[[Sequence[Edit]], Verification]


def reference_wrong(edits: Iterable[Edit], verification: Verification, model: str) -> list[Edit]:
    """The edits of ``edits`` (those ``model`` is judged on) that ``verification`` labels
    reference-wrong: the only corrections the verified WER inflation applies (none for a model the
    source may not verify)."""
    if model in verification.excluded:
        return []
    out = []
    for e in edits:
        lab = verification.labels.get(edit_key(e))
        if lab is not None and lab.label == REFERENCE_WRONG:
            out.append(e)
    return out


def verify_mining(
    verify: Verify,
    mining: Mining,
    scored: Mapping[str, Sequence[Edit]],
    inflate: Callable[[dict[str, list[Edit]]], Mapping[str, Any]],
) -> tuple[Verification, Mapping[str, Any]]:
    """Run the verification step on a mining's every edit (full panel, then each leave-one-out
    panel's) and each model's WER inflation with only its reference-wrong edits applied:
    ``inflate(edits by model)`` is the run's own inflation function on the run's own resamples."""
    every = [*mining.edits, *(e for es in mining.loo_edits.values() for e in es)]
    verification = verify(every)
    return verification, inflate({m: reference_wrong(es, verification, m) for m, es in scored.items()})


def verified_inflation_fields(inflation: Any | None) -> dict[str, object]:
    """The WER-inflation fields ``models[i]["verified"]`` gains (verdict contract point 2), from an
    :class:`~asr_audit.probes.predfiles.inflation.Inflation` computed with only reference-wrong
    edits applied (``None``: not computed, every field ``None``)."""
    if inflation is None:
        return {"wer_inflation": None, "wer_inflation_ci_low": None, "wer_inflation_ci_high": None, "wer_n_clips": 0}
    return {
        "wer_inflation": inflation.inflation,
        "wer_inflation_ci_low": inflation.ci_low,
        "wer_inflation_ci_high": inflation.ci_high,
        "wer_n_clips": inflation.n_clips,
    }


def labels_from_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, EditLabel]:
    """Unweighted labels from ``(edit key, label)`` pairs (the last label of a key wins)."""
    return {key: EditLabel(label=label) for key, label in pairs}


def copy_high(copy: Rate, precision: Rate | None) -> float | None:
    """The upper bound of ``c`` matching :attr:`VerifiedScore.copy_low`: Wilson's for an exact
    source, else ``min(1, high / p_low)`` — every mislabelled edit a "hears worse" edit the model
    wrote as the panel (``h = 0`` on them), so a model worse than the panel cannot lower it. With
    ``copy_low`` it bounds ``c`` whatever the model does on the mislabelled edits.

    >>> copy_high(wilson(3, 10), None) == wilson(3, 10).high
    True
    >>> round(copy_high(wilson(3, 10), wilson(80, 100)), 3), copy_high(wilson(3, 10), wilson(0, 0))
    (0.848, 1.0)
    """
    if not copy.defined:
        return None
    if precision is None:
        return copy.high
    if not precision.defined or precision.low <= 0:
        return 1.0
    return min(1.0, copy.high / precision.low)


def labeller_accuracy(n_agree: int, n_double: int) -> Rate:
    """A labeller's accuracy ``q`` from ``n_double`` edits labelled by two people, ``n_agree`` of
    them alike: two labellers of accuracy ``q`` each, erring independently, agree with probability
    ``a = q^2 + (1 - q)^2``, so ``q = (1 + sqrt(2a - 1)) / 2`` (``q >= 1/2`` assumed), with the
    Wilson interval of ``a`` carried through (``a <= 1/2`` gives ``q = 1/2``: no information).

    >>> q = labeller_accuracy(45, 50); (round(q.rate, 3), round(q.low, 3), round(q.high, 3))
    (0.947, 0.878, 0.978)
    """
    a = wilson(n_agree, n_double)

    def q(x: float) -> float:
        return (1.0 + math.sqrt(max(0.0, 2.0 * x - 1.0))) / 2.0

    if not a.defined:
        return Rate(k=0, n=0, rate=0.5, low=0.5, high=1.0)
    return Rate(k=n_agree, n=n_double, rate=q(a.rate), low=q(a.low), high=q(a.high))


def labelled_precision(accuracy: Rate, share_wrong: Rate) -> Rate:
    """The precision of "reference-wrong" labels (the share of them that are true reference errors)
    from the labeller's ``accuracy`` q (:func:`labeller_accuracy`) and the share ``s`` of judged
    edits labelled reference-wrong: with ``pi`` the true share, ``s = pi q + (1 - pi)(1 - q)``, so
    ``p = pi q / s = q (s - 1 + q) / ((2q - 1) s)``. Its lower bound is the least ``p`` over ``q``
    in ``[q_low, q_high]`` and ``s`` in ``[s_low, s_high]`` (where ``pi`` is in [0, 1]); 0 when
    ``q_low <= 1/2``. The result's ``k``/``n`` are the labelled-wrong count and the judged edits.

    >>> p = labelled_precision(labeller_accuracy(45, 50), wilson(60, 100))
    >>> round(p.rate, 3), round(p.low, 3)
    (0.966, 0.88)
    >>> labelled_precision(labeller_accuracy(50, 100), wilson(60, 100)).low
    0.0
    """

    def p(q: float, s: float) -> float | None:
        if q <= 0.5 or s <= 0 or not (1.0 - q <= s <= q):
            return None
        return min(1.0, max(0.0, q * (s - 1.0 + q) / ((2.0 * q - 1.0) * s)))

    point = p(accuracy.rate, share_wrong.rate)
    if accuracy.low <= 0.5:
        return Rate(k=share_wrong.k, n=share_wrong.n, rate=point if point is not None else 0.0, low=0.0, high=1.0)
    qs = [accuracy.low + (accuracy.high - accuracy.low) * i / 50 for i in range(51)]
    ss = [share_wrong.low + (share_wrong.high - share_wrong.low) * i / 50 for i in range(51)]
    grid = [v for q in qs for s in ss if (v := p(q, s)) is not None]
    low = min(grid) if grid else 0.0
    rate = point if point is not None else low
    return Rate(k=share_wrong.k, n=share_wrong.n, rate=rate, low=min(low, rate), high=1.0)
