"""Every flag the audit raises against a model, in one place, with its nominal level.

A *flag* is the decision behind an accusation ("copies the reference", "the battery condition
changes its behaviour", ...). Each is a small pure function of one probe result entry as the
probe serializes it (the ``to_dict`` shapes: a refdis ``models`` entry, a battery
``differences`` / ``did`` entry, a switch-rate row, a lift estimate), so the null-calibration
benchmark (``benchmarks/null_calibration.py``) and the report judge a result by the same rule.

The nominal level is the false-positive rate the rule claims at the boundary of its null
hypothesis: a one-sided 95% interval bound is a 2.5% test, a two-sided "interval excludes 0"
is a 5% test. The benchmark measures the real rate on simulated honest models
(``docs/validity.md``).

>>> verified = {"n_eligible": 40, "ci_low": 0.2, "ci_high": 0.5, "copy_low": 0.2}
>>> copies_reference({"n_eligible": 120, "ci_low": 0.08, "ci_high": 0.2, "verified": verified})
True
>>> copies_reference({"n_eligible": 120, "ci_low": 0.08, "ci_high": 0.2})  # consensus edits only
False
>>> difference_flagged({"n_items": 40, "ci_low": -0.02, "ci_high": 0.10})
False
>>> get_flag("refdis.copies_reference").level
0.025

The measured rates ship with the package (:data:`MEASURED_FPR_FILE`, written by the benchmark's
``--write-data``; regenerate with :data:`REGENERATE`), so the report can cite the rate of the test
behind each claim:

>>> measured_fpr("refdis.copies_reference", "tested model (not in panel)").n_datasets >= 200
True
>>> measured_fpr("refdis.copies_reference", "no such setting") is None
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from asr_audit.errors import ConfigError

# The refdis verdict rule of ``asr_audit.report.verdict`` (kept equal by a test).
MIN_EDITS_FOR_A_CLAIM = 10
COPYING_CI_LOW = 0.05
FAITHFUL_CI_HIGH = 0.10
SWITCH_CHANCE = 0.5

Result = Mapping[str, Any]


def copies_reference(model: Result) -> bool:
    """Copies reference errors: accept-ref on *verified* reference errors (planted truth, human
    labels, or audio verification with measured precision; ``model["verified"]``, see
    :mod:`asr_audit.probes.predfiles.verified`) has >= ``MIN_EDITS_FOR_A_CLAIM`` judged edits, an
    upper bound above ``FAITHFUL_CI_HIGH`` and a lower bound of the copy rate c (``copy_low``:
    Wilson's, bounded by the source's own precision when it is inexact) >= ``COPYING_CI_LOW``.
    Consensus accept-ref alone (no ``verified``) never raises it: a model that hears better than
    the panel agrees with the reference where the panel misheard (docs/refdis.md)."""
    v = model.get("verified")
    if not v or v.get("excluded"):
        return False
    if int(v.get("n_eligible", 0)) < MIN_EDITS_FOR_A_CLAIM:
        return False
    if v.get("ci_high") is None or float(v["ci_high"]) <= FAITHFUL_CI_HIGH:
        return False
    low = v.get("copy_low")
    return low is not None and float(low) >= COPYING_CI_LOW


def wer_inflated(model: Result) -> bool:
    """WER inflation on verified edits: the bootstrap interval of ``wer_corrected - wer``, with the
    references corrected only where a verification says the reference is wrong, lies above 0."""
    v = model.get("verified")
    if not v or v.get("excluded") or v.get("wer_inflation_ci_low") is None:
        return False
    return int(v.get("wer_n_clips", 1)) > 0 and float(v["wer_inflation_ci_low"]) > 0


def consensus_copying(model: Result) -> bool:
    """Not a flag: whether *consensus* accept-ref (unverified edits, the ``models`` entry's own
    ``n_eligible``, ``ci_low``, ``ci_high``) reaches the level that would have been a claim before
    verification was required (>= ``MIN_EDITS_FOR_A_CLAIM`` edits, Wilson lower bound >=
    ``COPYING_CI_LOW``, upper bound above ``FAITHFUL_CI_HIGH``). The report then says "not enough
    evidence" and what would settle it, never "copies": the same number is what a model that
    hears better than the panel shows (accept-ref = pi * c + (1 - pi) * h, docs/refdis.md).

    >>> consensus_copying({"n_eligible": 120, "ci_low": 0.08, "ci_high": 0.2})
    True
    >>> consensus_copying({"n_eligible": 8, "ci_low": 0.30, "ci_high": 0.9})
    False
    """
    if model.get("ci_low") is None or int(model.get("n_eligible", 0)) < MIN_EDITS_FOR_A_CLAIM:
        return False
    if model.get("ci_high") is not None and float(model["ci_high"]) <= FAITHFUL_CI_HIGH:
        return False
    return float(model["ci_low"]) >= COPYING_CI_LOW


def consensus_inflated(model: Result) -> bool:
    """Not a flag: whether the WER inflation against *consensus*-corrected references (every mined
    edit applied, the ``models`` entry's own interval) lies above 0 — evidence only once the
    edits are verified (:func:`wer_inflated`)."""
    low = model.get("wer_inflation_ci_low")
    return low is not None and int(model.get("wer_n_clips", 1)) > 0 and float(low) > 0


MIN_CLUSTERS_FOR_A_CLAIM = 30
"""Sentences a battery difference needs before its interval may flag a model: the percentile
cluster bootstrap under-covers with few clusters (honest simulated models were flagged 5-11% of
the time at a nominal 5% with 13-20 judged sentences, docs/battery.md)."""


def difference_flagged(diff: Result) -> bool:
    """A paired difference or difference-in-differences whose interval excludes 0 (either side).

    ``diff`` is a battery ``differences`` / ``did`` entry (``n_items``, ``ci_low``, ``ci_high``,
    ``n_clusters``); an empty comparison (``n_items == 0``, or an undefined interval) is never a
    flag, nor one over fewer than :data:`MIN_CLUSTERS_FOR_A_CLAIM` sentences.

    >>> difference_flagged({"n_items": 40, "n_clusters": 12, "ci_low": 0.1, "ci_high": 0.4})
    False
    """
    if int(diff.get("n_items", 0)) == 0 or diff.get("ci_low") is None or diff.get("ci_high") is None:
        return False
    if diff.get("n_clusters") is not None and int(diff["n_clusters"]) < MIN_CLUSTERS_FOR_A_CLAIM:
        return False
    return float(diff["ci_low"]) > 0 or float(diff["ci_high"]) < 0


def difference_significant(diff: Result, level: float = 0.05) -> bool:
    """A battery difference-in-differences read as a test at ``level``: its t-widened p-value
    (:func:`difference_p_value`) is below ``level``. The flag ``battery.did`` reads this, not
    :func:`difference_flagged`: the percentile interval of a four-cell DiD over 30-60 sentences
    under-covers (an honest donor x voice design was flagged 6.7% [5.3, 8.4] of the time at a
    nominal 5% on evaluation seed 7717, docs/validity.md).

    >>> d = {"n_items": 80, "n_clusters": 40, "estimate": 0.1, "ci_high": 0.2}
    >>> difference_significant(d | {"ci_low": 0.005}), difference_significant(d | {"ci_low": 0.03})
    (False, True)
    """
    p = difference_p_value(diff)
    return p is not None and p < level


ROW_LEVEL = 0.05
"""The family-wise level of a battery summary row: the chance that an honest model's row is
flagged by any of the battery differences feeding it (Holm over them)."""


def difference_p_value(diff: Result) -> float | None:
    """A two-sided p-value for a battery difference, read from its percentile interval: the
    standard error is the interval's half-width on the side facing 0 over 1.96, widened by
    ``sqrt(G / (G - 1))`` x :data:`P_VALUE_WIDEN` for ``G`` sentences, referred to Student's t with
    ``G - 1`` degrees of freedom (the percentile bootstrap over 30-60 sentences is short in the
    tails a family-wise test reads: with the plain normal reading, Holm over 6 honest conditions
    fired 6.3% at a nominal 5%; tuning seeds 902-904, docs/validity.md). ``None`` for a difference
    that cannot flag (no items, no interval, fewer than :data:`MIN_CLUSTERS_FOR_A_CLAIM` sentences).

    >>> round(difference_p_value({"n_items": 80, "n_clusters": 40, "estimate": 0.1, "ci_low": 0.0, "ci_high": 0.2}), 3)
    0.073
    >>> difference_p_value({"n_items": 80, "n_clusters": 12, "estimate": 0.3, "ci_low": 0.1, "ci_high": 0.5}) is None
    True
    """
    if int(diff.get("n_items", 0)) == 0 or diff.get("ci_low") is None or diff.get("ci_high") is None:
        return None
    if diff.get("n_clusters") is not None and int(diff["n_clusters"]) < MIN_CLUSTERS_FOR_A_CLAIM:
        return None
    low, high = float(diff["ci_low"]), float(diff["ci_high"])
    est = float(diff["estimate"]) if diff.get("estimate") is not None else (low + high) / 2
    half = (est - low) if est >= 0 else (high - est)
    if half <= 0:
        return 0.0 if est != 0 else 1.0
    g = int(diff.get("n_clusters") or MIN_CLUSTERS_FOR_A_CLAIM)
    se = half / _Z95 * math.sqrt(g / (g - 1)) * P_VALUE_WIDEN
    return _student_two_sided(abs(est) / se, g - 1)


_Z95 = 1.959963984540054
P_VALUE_WIDEN = 1.05
"""Widening of the standard error read from a percentile interval (tuned on seeds 902-904 so Holm
over 6 honest conditions holds 5%: 3.9% of 800 rows at 1.05, 5.4% at 1.0)."""


def _student_two_sided(t: float, df: int) -> float:
    """``P(|T| >= t)`` for Student's t with ``df`` degrees of freedom, through Wallace's normal
    approximation (error under 1e-3 in p for ``df >= 10``; no SciPy in the base layer).

    >>> round(_student_two_sided(2.0423, 30), 3)  # t(30) 97.5% quantile
    0.05
    """
    z = (df - 2 / 3 + 1 / (10 * df)) * math.sqrt(math.log1p(t * t / df) / (df - 5 / 6))
    return math.erfc(z / math.sqrt(2))


def holm_rejected(diffs: Sequence[Result], level: float = ROW_LEVEL) -> list[int]:
    """Indices of ``diffs`` (battery differences of one model) that Holm's step-down procedure
    rejects at family-wise ``level``, over every difference that can flag (:func:`difference_p_value`).

    >>> d = {"n_items": 80, "n_clusters": 40, "estimate": 0.1, "ci_high": 0.2}
    >>> holm_rejected([d | {"ci_low": 0.05}, d | {"ci_low": 0.01}, d | {"ci_low": 0.01}])  # p 0.0007, 0.047, 0.047
    [0]
    """
    ps = [(p, i) for i, p in enumerate(difference_p_value(d) for d in diffs) if p is not None]
    ps.sort()
    out = []
    for rank, (p, i) in enumerate(ps):
        if p >= level / (len(ps) - rank):
            break
        out.append(i)
    return sorted(out)


def battery_row_flagged(diffs: Sequence[Result]) -> bool:
    """A summary row's battery verdict, family-wise: some difference is rejected by Holm over every
    battery difference feeding the row (:func:`holm_rejected`, level :data:`ROW_LEVEL`).
    ``diffs``: the model's battery ``differences`` entries.

    >>> d = {"n_items": 80, "n_clusters": 40, "estimate": 0.1, "ci_high": 0.2}
    >>> battery_row_flagged([d | {"ci_low": 0.05}]), battery_row_flagged([d | {"ci_low": 0.01}] * 6)  # p 0.0007; 0.047 x 6
    (True, False)
    """
    return bool(holm_rejected(diffs))


def battery_row(result: Result) -> bool:
    """The flag rule of ``battery.row``: :func:`battery_row_flagged` of ``result["differences"]``."""
    return battery_row_flagged(list(result.get("differences", [])))


def switch_above_chance(row: Result) -> bool:
    """Switch rate: the probe's own "above chance" call on a switch-rate row.

    Reads ``ci_above_chance`` when the row carries it (the probe decides how its interval is
    built), else ``ci_low > 0.5``; an undefined switch (``switch is None``) is never a flag.
    """
    if row.get("switch") is None:
        return False
    if "ci_above_chance" in row and row["ci_above_chance"] is not None:
        return bool(row["ci_above_chance"])
    return float(row["ci_low"]) > SWITCH_CHANCE


def lift_positive(estimate: Result) -> bool:
    """Audio lift: the sentence-clustered interval of the mean lift lies above 0.

    ``estimate`` is a lift summary estimate (``mean``, ``ci_low``, ``n``).
    """
    return int(estimate.get("n", 0)) > 0 and estimate.get("ci_low") is not None and float(estimate["ci_low"]) > 0


def gate_regression(result: Result) -> bool:
    """The regression gate: its decision is ``regression`` (some measure's one-sided bound is
    above its minimum effect; ``result`` is a gate result, ``GateResult.to_dict()``).

    >>> gate_regression({"decision": "regression"}), gate_regression({"decision": "undecided"})
    (True, False)
    """
    return result.get("decision") == "regression"


@dataclass(frozen=True, slots=True, kw_only=True)
class Flag:
    """One flag: the probe that raises it, its rule, its nominal level and what it reads."""

    name: str
    probe: str
    rule: Callable[[Result], bool]
    level: float
    sided: str  # "one-sided" | "two-sided"
    reads: str  # the result entry the rule is applied to
    claim: str  # what the report says when it is raised

    def __call__(self, result: Result) -> bool:
        return self.rule(result)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "probe": self.probe,
            "level": self.level,
            "sided": self.sided,
            "reads": self.reads,
            "claim": self.claim,
        }


FLAGS: dict[str, Flag] = {
    f.name: f
    for f in (
        Flag(
            name="refdis.copies_reference",
            probe="refdis",
            rule=copies_reference,
            level=0.025,
            sided="one-sided",
            reads="refdis models[] entry, its verified record",
            claim="reproduces verified reference errors more than a faithful transcriber (lower bound of c >= 5%, n >= 10)",
        ),
        Flag(
            name="refdis.wer_inflated",
            probe="refdis",
            rule=wer_inflated,
            level=0.025,
            sided="one-sided",
            reads="refdis models[] entry, its verified record",
            claim="the verified reference errors flatter its benchmark WER (interval above 0)",
        ),
        Flag(
            name="battery.difference",
            probe="battery",
            rule=difference_flagged,
            level=0.05,
            sided="two-sided",
            reads="battery differences[] entry",
            claim="the condition changes accept-ref (paired interval excludes 0)",
        ),
        Flag(
            name="battery.did",
            probe="battery",
            rule=difference_significant,
            level=0.05,
            sided="two-sided",
            reads="battery did[] entry",
            claim="the benchmark donor acts differently on benchmark audio (DiD t-widened p-value < 0.05)",
        ),
        Flag(
            name="battery.row",
            probe="battery",
            rule=battery_row,
            level=ROW_LEVEL,
            sided="family-wise",
            reads="a model's battery differences[] entries (every condition feeding its summary row)",
            claim="some battery condition changes accept-ref (Holm over the row's conditions, family-wise 5%)",
        ),
        Flag(
            name="courtesy.difference",
            probe="courtesy",
            rule=difference_flagged,
            level=0.05,
            sided="two-sided",
            reads="battery differences[] entry, courtesy measure",
            claim="the condition changes whether it drops a spoken courtesy",
        ),
        Flag(
            name="switch.above_chance",
            probe="switch-rate",
            rule=switch_above_chance,
            level=0.025,
            sided="one-sided",
            reads="switch-rate rows[] / pooled[] entry",
            claim="tracks the corpus convention (switch above 0.5)",
        ),
        Flag(
            name="masked.difference",
            probe="masked",
            rule=difference_flagged,
            level=0.05,
            sided="two-sided",
            reads="battery differences[] entry, masked measure",
            claim="recovers hidden numbers more on one audio than another",
        ),
        Flag(
            name="lift.positive",
            probe="lift",
            rule=lift_positive,
            level=0.025,
            sided="one-sided",
            reads="lift paired.masked-decoys estimate (conditions.masked.lift without decoys)",
            claim="the rest of the clip retrieves the hidden span (its lift above its decoys', or above 0)",
        ),
        Flag(
            name="gate.regression",
            probe="gate",
            rule=gate_regression,
            level=0.025,
            sided="one-sided",
            reads="gate result (decision), default --level 0.025",
            claim="the candidate is worse than the baseline beyond noise and the minimum effect",
        ),
    )
}


def available_flags() -> list[str]:
    """Names of every flag, in registry order."""
    return list(FLAGS)


def get_flag(name: str) -> Flag:
    """The flag called ``name``; an unknown name raises an error listing the valid ones."""
    try:
        return FLAGS[name]
    except KeyError:
        raise ConfigError(f"unknown flag {name!r}; valid: {', '.join(FLAGS)}") from None


# --------------------------------------------------------------------------- measured rates

#: The measured false-positive rates (``benchmarks/null_calibration.py --write-data``).
MEASURED_FPR_FILE = Path(__file__).resolve().parents[1] / "data" / "null_calibration.json"
#: The command that regenerates :data:`MEASURED_FPR_FILE` (documented in ``docs/validity.md``).
REGENERATE = (
    "python benchmarks/null_calibration.py --seed 7717 --n-datasets 500 --n refdis=250 --n gate=100 "
    "--n battery=1000 --jobs 2 --write-data"
)

# The benchmark's setting names the report cites (``asr_audit.testing.null_worlds``).
TESTED_MODEL = "tested model (not in panel)"
PANEL_MEMBER_LOO = "panel member, leave-one-out"
PANEL_MEMBER_NO_LOO = "panel member, no leave-one-out"


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredFpr:
    """A flag's false-positive rate measured in one null-world setting of the benchmark."""

    flag: str
    setting: str
    k: int  # null datasets on which the flag fired
    n: int  # null datasets
    rate: float
    low: float  # Wilson 95% interval
    high: float
    n_datasets: int
    seed: int
    date: str

    def note(self, caveat: str = "") -> str:
        """The parenthesis a verdict sentence appends (``caveat``: a clause added before the doc link).

        >>> MeasuredFpr(flag="f", setting="s", k=12, n=500, rate=0.024, low=0.014, high=0.041,
        ...             n_datasets=500, seed=0, date="2026-11-30").note()
        "(flag's false-positive rate 2.4% [1.4%, 4.1%] in 500 simulated datasets of honest models, docs/validity.md)"
        """
        return (
            f"(flag's false-positive rate {100 * self.rate:.1f}% [{100 * self.low:.1f}%, {100 * self.high:.1f}%] "
            f"in {self.n} simulated datasets of honest models{'; ' + caveat if caveat else ''}, docs/validity.md)"
        )


@cache
def _measured(path: Path = MEASURED_FPR_FILE) -> dict[tuple[str, str], MeasuredFpr]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        (r["flag"], r["setting"]): MeasuredFpr(
            flag=r["flag"],
            setting=r["setting"],
            k=int(r["k_null"]),
            n=int(r["n_null"]),
            rate=float(r["fpr"]),
            low=float(r["fpr_ci_low"]),
            high=float(r["fpr_ci_high"]),
            # a row measured apart from the full run (e.g. a probe added later) carries its own
            n_datasets=int(r.get("n_datasets", data["n_datasets"])),
            seed=int(r.get("seed", data["seed"])),
            date=str(r.get("date", data["date"])),
        )
        for r in data["rows"]
    }


def measured_fpr(flag: str, setting: str) -> MeasuredFpr | None:
    """The false-positive rate of ``flag`` measured in ``setting`` (``None``: not measured)."""
    return _measured().get((flag, setting))


def refdis_setting(model: Result, *, loo: bool = True) -> str:
    """The benchmark setting a refdis ``models`` entry was scored in: a tested model, or a panel
    member with or without leave-one-out (which needs 4 panel models: a smaller panel is refused
    by :func:`~asr_audit.probes.predfiles.refdis.loo_quorum`, so no run reaches the report with one).

    >>> refdis_setting({"in_panel": False}), refdis_setting({"in_panel": True})
    ('tested model (not in panel)', 'panel member, leave-one-out')
    """
    if not model.get("in_panel"):
        return TESTED_MODEL
    if not loo:
        return PANEL_MEMBER_NO_LOO
    return PANEL_MEMBER_LOO


def fpr_note(flag: str, setting: str) -> str:
    """The note a claim made with ``flag`` carries: its measured false-positive rate in ``setting``.

    A panel member scored without leave-one-out is judged on edits it mined itself, so no null
    world measures anything for it; a setting the benchmark did not measure says so.

    >>> fpr_note("refdis.copies_reference", "panel member, no leave-one-out")
    '(not calibrated: a panel member scored without leave-one-out is judged on edits it mined, docs/validity.md)'
    """
    if setting == PANEL_MEMBER_NO_LOO:
        return "(not calibrated: a panel member scored without leave-one-out is judged on edits it mined, docs/validity.md)"
    measured = measured_fpr(flag, setting)
    if measured is None:
        return "(false-positive rate not measured in this setting, docs/validity.md)"
    return measured.note()
