"""Null and planted worlds for every flag the audit raises: measured false-positive rate and power.

A *null world* simulates honest models (realistic error rates, identical behaviour in every
condition) and asks how often a flag of :mod:`asr_audit.stats.flags` is raised anyway; a
*planted world* gives a model a known effect (reference copying at a known share, a condition
that raises accept-ref by a known amount) and asks how often the flag catches it. Every check
runs the probe's real code through its public functions:

* ``refdis``: :func:`~asr_audit.testing.synthetic.make_prediction_set` writes a prediction set
  (4 honest panel models, one honest tested model, copiers at a grid of copy shares), and
  :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis` scores it in-process, with and without
  leave-one-out (a 4-member panel: the smallest leave-one-out accepts); further runs put a 30%
  copier in the panel (leave-one-out);
* ``switch``: :func:`~asr_audit.probes.predfiles.ortho.switch_rate` on an in-memory prediction set of
  Mr / Mister, Dr / Doctor, St / Saint items (a coin-flip writer vs models that track the
  reference's arm);
* ``courtesy``: :func:`~asr_audit.probes.battery.courtesy.eligible_clips` and
  :func:`~asr_audit.probes.battery.courtesy.courtesy_present` on text clips with spoken openers the
  reference omits, eligibility from the spoken text and (today's fallback) from the models;
* ``battery``, ``masked``: per-item 0/1 outcomes per sentence and condition, scored with
  :func:`~asr_audit.stats.did.paired_difference` / :func:`~asr_audit.stats.did.difference_in_differences`
  (the battery's statistics), masked items gated per condition as the masked measure does;
* ``lift``: per-item lifts with sentence effects, summarized by
  :func:`~asr_audit.probes.audio.lift.summarize_model`.

Everything is drawn from the ``numpy.random.Generator`` passed in. Results are
:class:`Calibration` records: one flag in one setting, its false-positive rate with a Wilson
interval, and its power over a grid of planted effects.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import ConfigError
from asr_audit.stats.flags import PANEL_MEMBER_LOO, TESTED_MODEL, Flag, difference_flagged, get_flag
from asr_audit.stats.intervals import Rate, wilson

# new probes go at the end: a probe's generator is default_rng([seed, its index])
PROBES = ("refdis", "battery", "courtesy", "switch", "masked", "lift", "battery-refdis", "gate")
POWER_TARGET = 0.8
# A flag FAILs when the Wilson lower bound of its false-positive rate at z = 3 (one-sided 0.13%)
# exceeds its nominal level: with a dozen rows, a table of correctly calibrated flags then shows a
# spurious FAIL about 2% of the time (at z = 1.96 it would be about 30%).
FAIL_Z = 3.0
# An "ok" must be able to see a flag running at 1.5x its nominal rate: the one-sided 95% upper
# bound of the measured rate is below 1.5x the level (issue 25, item 7).
OK_FACTOR = 1.5
OK_Z = 1.6448536269514722
N_RESAMPLES = 1000  # every probe's default bootstrap size

# The number each flag's result entry carries (its point estimate), averaged over null datasets:
# a null estimate away from its honest value shows a bias before it shows as false positives.
STATISTIC = {
    "refdis.copies_reference": "accept_ref",  # consensus, or verified (c) where a verification is given
    "refdis.wer_inflated": "wer_inflation",
    "battery.difference": "estimate",
    "battery.did": "estimate",
    "courtesy.difference": "estimate",
    "masked.difference": "estimate",
    "switch.above_chance": "switch",
    "lift.positive": "mean",
}

HONEST_ERRORS = (0.01, 0.05)  # per-word drop and substitution rates of honest synthetic models
DIFF_GRID = (0.05, 0.1, 0.15, 0.2, 0.3)
BATTERY_PLANTED = 0.2
TRACK_GRID = (0.6, 0.7, 0.8, 0.9)
SWITCH_PLANTED = 0.8
COURTESY_GRID = (0.1, 0.2, 0.3, 0.5)
COURTESY_PLANTED = 0.3
MASKED_GRID = (0.05, 0.1, 0.2, 0.3)
MASKED_PLANTED = 0.2
LIFT_GRID = (0.02, 0.05, 0.1, 0.2)
LIFT_PLANTED = 0.1


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """One flag in one setting: how often it fires on honest models, and on planted effects."""

    probe: str
    flag: str  # name in :data:`asr_audit.stats.flags.FLAGS`
    setting: str  # which model / mode is judged
    level: float  # the flag's nominal false-positive rate
    null_world: str
    planted_world: str
    effect: str  # what the planted grid varies
    n_null: int
    k_null: int  # null datasets on which the flag fired
    planted: float | None  # the reference planted effect (power reported at it)
    power: Mapping[float, tuple[int, int]] = field(default_factory=dict)  # effect -> (fired, datasets)
    seconds: float = 0.0
    null_mean: float | None = None  # mean of the entry's estimate (:data:`STATISTIC`) over null datasets
    null_se: float | None = None  # its Monte-Carlo standard error
    retired: bool = False  # a rule the audit no longer applies, measured to show what it did

    @property
    def fpr(self) -> Rate:
        return wilson(self.k_null, self.n_null)

    @property
    def status(self) -> str:
        """``FAIL``, ``ok`` or ``inconclusive``: two one-sided tests of the false-positive rate.

        ``FAIL``: above the nominal level beyond Monte-Carlo error (the Wilson lower bound at
        ``z = FAIL_Z`` is above the level). ``ok``: the one-sided 95% Wilson upper bound is below
        :data:`OK_FACTOR` x the level, so a flag running at 1.5x its nominal rate would not read
        ``ok`` (more than 95% of the time). Otherwise ``inconclusive``: too few datasets to tell.
        """
        if self.n_null == 0:
            return "n/a"
        if self.retired:
            return "retired rule"
        if wilson(self.k_null, self.n_null, z=FAIL_Z).low > self.level:
            return "FAIL"
        return "ok" if wilson(self.k_null, self.n_null, z=OK_Z).high < OK_FACTOR * self.level else "inconclusive"

    def power_at(self, effect: float | None) -> Rate | None:
        if effect is None or effect not in self.power:
            return None
        k, n = self.power[effect]
        return wilson(k, n)

    @property
    def mde(self) -> float | None:
        """The smallest planted effect of the grid with power >= 0.8 (``None``: none reached it)."""
        for eff in sorted(self.power):
            k, n = self.power[eff]
            if n and k / n >= POWER_TARGET:
                return eff
        return None

    def to_dict(self) -> dict[str, object]:
        fpr = self.fpr
        at = self.power_at(self.planted)
        return {
            "probe": self.probe,
            "flag": self.flag,
            "setting": self.setting,
            "level": self.level,
            "null_world": self.null_world,
            "planted_world": self.planted_world,
            "effect": self.effect,
            "n_null": self.n_null,
            "k_null": self.k_null,
            "fpr": fpr.rate,
            "fpr_ci_low": fpr.low,
            "fpr_ci_high": fpr.high,
            "status": self.status,
            "planted": self.planted,
            "power": None if at is None else at.rate,
            "power_ci_low": None if at is None else at.low,
            "power_ci_high": None if at is None else at.high,
            "power_grid": {
                str(e): {"k": k, "n": n, "power": k / n if n else None} for e, (k, n) in sorted(self.power.items())
            },
            "mde": self.mde,
            "statistic": STATISTIC.get(self.flag),
            "null_mean": self.null_mean,
            "null_se": self.null_se,
            "seconds": round(self.seconds, 2),
            "retired": self.retired,
        }


class _Tally:
    """Counts flags over datasets for one (flag, setting); turned into a :class:`Calibration`."""

    def __init__(
        self,
        probe: str,
        flag: str | Flag,
        setting: str,
        null_world: str,
        planted_world: str,
        effect: str,
        planted: float | None,
        estimate: bool = True,
        retired: bool = False,
    ) -> None:
        self.retired = retired
        self.flag: Flag = get_flag(flag) if isinstance(flag, str) else flag
        self.estimate = estimate  # average the entry's estimate over null datasets
        self.probe, self.setting, self.null_world = probe, setting, null_world
        self.planted_world, self.effect, self.planted = planted_world, effect, planted
        self.k_null = self.n_null = 0
        self.power: dict[float, list[int]] = {}
        self.estimates: list[float] = []

    def null(self, result: Mapping[str, object]) -> None:
        self.n_null += 1
        self.k_null += bool(self.flag(result))
        value = result.get(STATISTIC.get(self.flag.name, "")) if self.estimate else None
        if isinstance(value, (int, float)) and np.isfinite(value):
            self.estimates.append(float(value))

    def planted_result(self, effect: float, result: Mapping[str, object]) -> None:
        kn = self.power.setdefault(float(effect), [0, 0])
        kn[0] += bool(self.flag(result))
        kn[1] += 1

    def done(self, seconds: float) -> Calibration:
        return Calibration(
            probe=self.probe,
            flag=self.flag.name,
            setting=self.setting,
            level=self.flag.level,
            null_world=self.null_world,
            planted_world=self.planted_world,
            effect=self.effect,
            n_null=self.n_null,
            k_null=self.k_null,
            planted=self.planted,
            power={e: (k, n) for e, (k, n) in sorted(self.power.items())},
            seconds=seconds,
            retired=self.retired,
            null_mean=float(np.mean(self.estimates)) if self.estimates else None,
            null_se=(
                float(np.std(self.estimates, ddof=1) / np.sqrt(len(self.estimates)))
                if len(self.estimates) > 1
                else None
            ),
        )


Progress = Callable[[str], None] | None


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31 - 1))


# --------------------------------------------------------------------------- battery (stats level)


def _sentences(
    rng: np.random.Generator, n_range: tuple[int, int], per: Sequence[float]
) -> tuple[np.ndarray, list[str]]:
    """Item -> sentence index for ``n`` sentences (``n`` uniform in ``n_range``), ``k`` items each
    with probabilities ``per`` (for 1, 2, 3, ... items); plus the sentence labels (clusters)."""
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    counts = rng.choice(np.arange(1, len(per) + 1), size=n, p=np.asarray(per) / np.sum(per))
    return np.repeat(np.arange(n), counts), [f"s{j:03d}" for j in range(n)]


def _propensities(rng: np.random.Generator, n: int, mean: float, concentration: float = 2.0) -> np.ndarray:
    """Per-sentence probabilities of following the reference: Beta with the given mean."""
    return rng.beta(mean * concentration, (1 - mean) * concentration, size=n)


def _paired(
    rng: np.random.Generator, base: np.ndarray, treat: np.ndarray, item_sentence: np.ndarray, labels: Sequence[str]
) -> Mapping[str, object]:
    from asr_audit.stats.did import paired_difference

    clusters = [labels[j] for j in item_sentence]
    return paired_difference(
        baseline=base.tolist(), treated=treat.tolist(), clusters=clusters, rng=rng, n_resamples=N_RESAMPLES
    ).to_dict()


def calibrate_battery(
    rng: np.random.Generator,
    n_datasets: int,
    *,
    sentences: tuple[int, int] = (30, 60),
    grid: Sequence[float] = DIFF_GRID,
    progress: Progress = None,
) -> list[Calibration]:
    """Paired difference (original vs one condition) and DiD (donor x voice) of 0/1 refdis items.

    A dataset: 30-60 sentences with 1-3 reference errors each (items); each sentence has its own
    probability of following the reference (Beta, dataset mean 5-40%). Null: the same probability
    in every condition (the DiD world also has a donor effect of -0.1..+0.15, equal on both
    audios). Planted: the treated condition adds ``delta`` to every sentence's probability (capped
    at 1); for the DiD, the benchmark donor's effect on the benchmark audio is ``delta`` larger.
    """
    t0 = time.perf_counter()
    planted = BATTERY_PLANTED
    grid = tuple(float(x) for x in grid)
    null_world = (
        f"{sentences[0]}-{sentences[1]} sentences x 1-3 items, per-sentence accept-ref ~ Beta "
        "(mean 5-40%), identical in both conditions"
    )
    diff = _Tally(
        "battery",
        "battery.difference",
        "original vs one condition",
        null_world,
        "the condition adds delta to every sentence's accept-ref",
        "delta (accept-ref)",
        planted,
    )
    did = _Tally(
        "battery",
        "battery.did",
        "donor x voice (4 cells)",
        null_world + "; donor effect equal on both audios",
        "the benchmark donor adds delta more on the benchmark audio",
        "delta (accept-ref)",
        planted,
    )
    row_world = null_world + f"; {ROW_CONDITIONS} conditions against one original run (docs/battery.md's grid)"
    row_planted = f"one of the {ROW_CONDITIONS} conditions adds delta to every sentence's accept-ref"
    row = _Tally("battery", "battery.row", ROW_SETTING, row_world, row_planted, "delta (accept-ref)", planted)
    any_row = _Tally(
        "battery",
        OLD_ROW_FLAG,
        OLD_ROW_SETTING,
        row_world,
        row_planted,
        "delta (accept-ref)",
        planted,
        estimate=False,
        retired=True,
    )
    for i in range(n_datasets):
        item_s, labels = _sentences(rng, sentences, (0.5, 0.3, 0.2))
        mean = float(rng.uniform(0.05, 0.4))
        p = _propensities(rng, len(labels), mean)[item_s]
        n = len(item_s)
        diff.null(_paired(rng, rng.random(n) < p, rng.random(n) < p, item_s, labels))
        for d in grid:
            diff.planted_result(
                d, _paired(rng, rng.random(n) < p, rng.random(n) < np.minimum(p + d, 1), item_s, labels)
            )
        e = float(rng.uniform(-0.1, 0.15))
        pt = np.clip(p + e, 0, 1)
        did.null(_did(rng, p, pt, p, pt, item_s, labels))
        for d in grid:
            did.planted_result(d, _did(rng, p, np.clip(pt + d, 0, 1), p, pt, item_s, labels))
        # the summary row: every condition against the same original run
        original = rng.random(n) < p
        conditions = [_paired(rng, original, rng.random(n) < p, item_s, labels) for _ in range(ROW_CONDITIONS)]
        row.null({"differences": conditions})
        any_row.null({"differences": conditions})
        for d in grid:
            shifted = [_paired(rng, original, rng.random(n) < np.minimum(p + d, 1), item_s, labels), *conditions[1:]]
            row.planted_result(d, {"differences": shifted})
            any_row.planted_result(d, {"differences": shifted})
        if progress and (i + 1) % 100 == 0:
            progress(f"battery {i + 1}/{n_datasets}")
    secs = time.perf_counter() - t0
    return [diff.done(secs), did.done(secs), row.done(secs), any_row.done(secs)]


ROW_CONDITIONS = 6  # docs/battery.md's grid (noise, reverb, truncation, voices ...)
ROW_SETTING = "battery row: 6 conditions vs the original audio, Holm"  # = report.summary.BATTERY_ROW_SETTING
OLD_ROW_SETTING = "battery row: 6 conditions vs the original audio, OLD rule (any 5% test)"
OLD_ROW_FLAG = Flag(
    name="battery.row",
    probe="battery",
    rule=lambda r: any(difference_flagged(d) for d in r.get("differences", [])),
    level=0.05,
    sided="family-wise",
    reads="a model's battery differences[] entries",
    claim="the pre-Holm row: flagged when any condition's 5% test fires",
)


def _did(
    rng: np.random.Generator,
    a_control: np.ndarray,
    a_treated: np.ndarray,
    b_control: np.ndarray,
    b_treated: np.ndarray,
    item_s: np.ndarray,
    labels: Sequence[str],
) -> Mapping[str, object]:
    """A DiD on one draw of 0/1 items with the given per-item probabilities (a = benchmark audio)."""
    from asr_audit.stats.did import difference_in_differences

    n = len(item_s)
    clusters = [labels[j] for j in item_s]
    draw = [(rng.random(n) < q).astype(float).tolist() for q in (a_treated, a_control, b_treated, b_control)]
    return difference_in_differences(
        a_treated=draw[0],
        a_control=draw[1],
        a_clusters=clusters,
        b_treated=draw[2],
        b_control=draw[3],
        b_clusters=clusters,
        rng=rng,
        n_resamples=N_RESAMPLES,
    ).to_dict()


# --------------------------------------------------------------------------- masked (stats level)


def calibrate_masked(
    rng: np.random.Generator,
    n_datasets: int,
    *,
    sentences: tuple[int, int] = (30, 60),
    grid: Sequence[float] = MASKED_GRID,
    progress: Progress = None,
) -> list[Calibration]:
    """Masked recovery compared between two audios of the same sentences (battery masked measure).

    A dataset: 30-60 sentences with 1-2 masked numbers; per sentence a recovery probability (Beta,
    dataset mean 5-30%); an item is eligible in a condition when the model transcribes it
    unmasked (the intelligibility gate, 60-95% per dataset, drawn per condition), and the paired
    difference uses items eligible in both. Null: the same recovery probability on both audios.
    Planted: the benchmark audio (baseline) recovers ``delta`` more.
    """
    t0 = time.perf_counter()
    grid = tuple(float(x) for x in grid)
    tally = _Tally(
        "masked",
        "masked.difference",
        "benchmark audio vs another voice",
        f"{sentences[0]}-{sentences[1]} sentences x 1-2 masked numbers, recovery ~ Beta (mean 5-30%), "
        "gate 60-95% per condition, same recovery on both audios",
        "the benchmark audio recovers delta more",
        "delta (recovery)",
        MASKED_PLANTED,
    )

    def one(
        r_base: np.ndarray, r_other: np.ndarray, item_s: np.ndarray, labels: Sequence[str], gate: float
    ) -> Mapping[str, object]:
        n = len(item_s)
        both = (rng.random(n) < gate) & (rng.random(n) < gate)
        base, other = rng.random(n) < r_base, rng.random(n) < r_other
        return _paired(rng, base[both], other[both], item_s[both], labels)

    for i in range(n_datasets):
        item_s, labels = _sentences(rng, sentences, (0.7, 0.3))
        r = _propensities(rng, len(labels), float(rng.uniform(0.05, 0.3)))[item_s]
        gate = float(rng.uniform(0.6, 0.95))
        tally.null(one(r, r, item_s, labels, gate))
        for d in grid:
            tally.planted_result(d, one(np.minimum(r + d, 1), r, item_s, labels, gate))
        if progress and (i + 1) % 100 == 0:
            progress(f"masked {i + 1}/{n_datasets}")
    return [tally.done(time.perf_counter() - t0)]


# --------------------------------------------------------------------------- lift (stats level)


def calibrate_lift(
    rng: np.random.Generator,
    n_datasets: int,
    *,
    sentences: tuple[int, int] = (30, 60),
    grid: Sequence[float] = LIFT_GRID,
    progress: Progress = None,
) -> list[Calibration]:
    """Mean masked lift (nats / char) with the probe's sentence-clustered interval.

    A dataset: 30-60 sentences x 1-2 masked spans; lift = mu + sentence effect (normal, sd 0.1) +
    item noise (0.2 x Student t with 4 df, heavy tails); each span of a sentence is read in its own
    clip (voice) and the summary clusters by sentence (``sentences=``), as the probe does. Null: mu = 0 (the rest of the clip
    carries no cue to the hidden span). Planted: mu = delta.
    """
    from asr_audit.probes.audio.lift import summarize_model

    t0 = time.perf_counter()
    grid = tuple(float(x) for x in grid)
    tally = _Tally(
        "lift",
        "lift.positive",
        "masked condition",
        f"{sentences[0]}-{sentences[1]} sentences x 1-2 "
        "spans, lift = 0 + sentence effect (sd 0.1) + 0.2 t(4) item noise",
        "mean lift = delta",
        "delta (nats/char)",
        LIFT_PLANTED,
    )

    def one(mu: float, item_s: np.ndarray, labels: Sequence[str], u: np.ndarray) -> Mapping[str, object]:
        values = mu + u[item_s] + 0.2 * rng.standard_t(4, size=len(item_s))
        records = [
            _lift_record(f"{labels[j]}#{k}", f"{labels[j]}/voice-{k}", "masked", float(v))
            for k, (j, v) in enumerate(zip(item_s, values))
        ]
        # each span from its own clip (a voice) of its sentence: the probe clusters by sentence
        summary = summarize_model(
            records, rng, n_resamples=N_RESAMPLES, sentences={r.clip_id: r.clip_id.split("/")[0] for r in records}
        )
        return summary["conditions"]["masked"]["lift"]

    for i in range(n_datasets):
        item_s, labels = _sentences(rng, sentences, (0.7, 0.3))
        u = rng.normal(0, 0.1, size=len(labels))
        tally.null(one(0.0, item_s, labels, u))
        for d in grid:
            tally.planted_result(d, one(d, item_s, labels, u))
        if progress and (i + 1) % 100 == 0:
            progress(f"lift {i + 1}/{n_datasets}")
    return [tally.done(time.perf_counter() - t0), _calibrate_lift_decoys(rng, n_datasets, sentences, grid, progress)]


LIFT_DECOYS = 4  # the probe's default decoys per masked item (DEFAULT_DECOYS)


def _lift_record(item: str, clip: str, condition: str, value: float, decoy_of: str | None = None) -> Any:
    """A simulated :class:`~asr_audit.probes.audio.lift.LiftRecord` whose lift is ``value``."""
    from asr_audit.probes.audio.lift import LiftRecord

    return LiftRecord(
        model="sim",
        item_id=item,
        clip_id=clip,
        condition=condition,
        prefix="",
        target="45",
        tokens=(),
        logprobs=(),
        logp=value,
        logp_silent=0.0,
        chars=2,
        lift=value,
        decoy_of=decoy_of,
    )


def _calibrate_lift_decoys(
    rng: np.random.Generator,
    n_datasets: int,
    sentences: tuple[int, int],
    grid: Sequence[float],
    progress: Progress,
) -> Calibration:
    """The decoy contrast (``paired["masked-decoys"]``) in a world where the raw lift is *not*
    centred on 0: every dataset's model has its own silence offset ``o`` (normal, sd 0.4 nats/char:
    how much more or less it gives text over the all-zero clip, which silence-augmented fine-tuning
    moves), each masked clip its own effect (normal, sd 0.2) shared by the hidden number and its
    1-4 decoys (the same clip, prefix and slot), and every scored span its item noise (0.2 x
    Student t with 4 df). Null: the hidden number is exchangeable with its decoys. Planted: the
    hidden number's lift is ``delta`` higher than its decoys' (the clip retrieves it).

    In this null the raw lift's interval sits above 0 whenever ``o`` is positive and large
    enough, which is what the memorizer's control showed (docs/validity.md, section 1); the
    contrast has the offset and the clip effect cancel.
    """
    from asr_audit.probes.audio.lift import summarize_model

    t0 = time.perf_counter()
    tally = _Tally(
        "lift",
        "lift.positive",
        "masked-decoys contrast, silence offset",
        f"{sentences[0]}-{sentences[1]} sentences x 1-2 spans, 1-{LIFT_DECOYS} decoys each; lift = model "
        "offset (sd 0.4) + sentence (sd 0.1) + clip (sd 0.2) + 0.2 t(4) noise, hidden number and decoys alike",
        "hidden number's lift = its decoys' + delta",
        "delta (nats/char)",
        LIFT_PLANTED,
    )

    def one(
        delta: float, item_s: np.ndarray, labels: Sequence[str], base: np.ndarray, noise: list[np.ndarray]
    ) -> Mapping[str, object]:
        records = []
        for k, j in enumerate(item_s):
            item, clip = f"{labels[j]}#{k}", f"{labels[j]}/voice-{k}"
            records.append(_lift_record(item, clip, "masked", float(base[k] + noise[k][0] + delta)))
            records += [
                _lift_record(f"{item}#decoy{d}", clip, "decoy", float(base[k] + e), item)
                for d, e in enumerate(noise[k][1:])
            ]
        summary = summarize_model(
            records, rng, n_resamples=N_RESAMPLES, sentences={r.clip_id: r.clip_id.split("/")[0] for r in records}
        )
        return summary["paired"]["masked-decoys"]

    for i in range(n_datasets):
        item_s, labels = _sentences(rng, sentences, (0.7, 0.3))
        offset = rng.normal(0, 0.4)
        u = rng.normal(0, 0.1, size=len(labels))
        base = offset + u[item_s] + rng.normal(0, 0.2, size=len(item_s))
        noise = [0.2 * rng.standard_t(4, size=1 + int(rng.integers(1, LIFT_DECOYS + 1))) for _ in range(len(item_s))]
        tally.null(one(0.0, item_s, labels, base, noise))
        for d in grid:
            tally.planted_result(d, one(d, item_s, labels, base, noise))
        if progress and (i + 1) % 100 == 0:
            progress(f"lift decoys {i + 1}/{n_datasets}")
    return tally.done(time.perf_counter() - t0)


# --------------------------------------------------------------------------- switch rate (real probe)

SWITCH_FAMILIES = ("mr", "dr", "st")
_SWITCH_ARMS = {"mr": ("Mister", "Mr"), "dr": ("Doctor", "Dr"), "st": ("Saint", "St")}
_SWITCH_NAMES = ("Schulz", "Barroso", "Juncker", "Ashton", "Reding", "Buzek", "Martin", "Kelly")


def calibrate_switch(
    rng: np.random.Generator,
    n_datasets: int,
    *,
    arm_a: tuple[int, int] = (8, 30),
    arm_b: tuple[int, int] = (20, 80),
    grid: Sequence[float] = TRACK_GRID,
    coin: float = 0.5,
    progress: Progress = None,
) -> list[Calibration]:
    """Orthographic switch rate on Mr / Dr / St items with the probe's own "above chance" call.

    A dataset: per family 8-30 reference items in the expanded arm (Mister) and 20-80 in the
    abbreviated one (Mr), one clip each. Null: the model writes the expanded arm with
    probability ``coin`` whatever the reference says (0.5: a coin flip, the worst case of the
    null "does not track the convention"). Planted: it writes the reference's arm with
    probability ``t`` (tracking). A second null model sits on the boundary of the null
    hypothesis "switch <= 0.5": it writes Mister for half the Mister references and always
    writes Mr for Mr references (true switch exactly 0.5, the limiting arm is the small one).
    Settings: the coin flip's ``mr`` row, the boundary model's ``mr`` row, and the coin flip's
    "any row" (3 families + the pooled honorific row: the rate at which a model is called a tracker).
    """
    from asr_audit.corpus.predfiles import PredictionSet
    from asr_audit.corpus.records import PredictionFile, PredictionRow
    from asr_audit.probes.predfiles.ortho import switch_rate

    t0 = time.perf_counter()
    grid = tuple(float(x) for x in grid)
    null_world = (
        f"per family {arm_a[0]}-{arm_a[1]} expanded + {arm_b[0]}-{arm_b[1]} abbreviated items; "
        f"the model writes the expanded arm with p={coin:g} whatever the reference says"
    )
    row = _Tally(
        "switch",
        "switch.above_chance",
        "one family row (mr)",
        null_world,
        "the model writes the reference's arm with probability t",
        "tracking t",
        SWITCH_PLANTED,
    )
    anyrow = _Tally(
        "switch",
        "switch.above_chance",
        "any row of a model (3 families + pooled)",
        null_world,
        "the model writes the reference's arm with probability t",
        "tracking t",
        SWITCH_PLANTED,
        estimate=False,
    )
    boundary = _Tally(
        "switch",
        "switch.above_chance",
        "one family row (mr), boundary model",
        "as above; the model writes the expanded arm for 50% of expanded references and the "
        "abbreviated arm for every abbreviated one (true switch = 0.5)",
        "the model writes the reference's arm with probability t",
        "tracking t",
        SWITCH_PLANTED,
    )
    models = ["null", "boundary", *(f"track-{t:g}" for t in grid)]
    for i in range(n_datasets):
        refs: dict[str, str] = {}
        hyps: dict[str, dict[str, str]] = {m: {} for m in models}
        for fam in SWITCH_FAMILIES:
            n_a, n_b = int(rng.integers(arm_a[0], arm_a[1] + 1)), int(rng.integers(arm_b[0], arm_b[1] + 1))
            ref_arm = np.r_[np.zeros(n_a, dtype=int), np.ones(n_b, dtype=int)]
            names = rng.integers(len(_SWITCH_NAMES), size=len(ref_arm))
            u = rng.random((len(models), len(ref_arm)))
            for j, (arm, name) in enumerate(zip(ref_arm, names)):
                cid = f"{fam}-{j:03d}"
                template = "We heard {} " + _SWITCH_NAMES[name] + " in the debate on {}."
                refs[cid] = template.format(_SWITCH_ARMS[fam][arm], cid)
                for k, m in enumerate(models):
                    if k == 0:
                        out = 0 if u[k, j] < coin else 1
                    elif k == 1:
                        out = 1 if arm == 1 or u[k, j] >= 0.5 else 0
                    else:
                        out = arm if u[k, j] < grid[k - 2] else 1 - arm
                    hyps[m][cid] = template.format(_SWITCH_ARMS[fam][out], cid)
        files = tuple(
            PredictionFile(
                m,
                Path("null-calibration"),
                "null",
                "test",
                {cid: PredictionRow(cid, refs[cid], hyps[m][cid]) for cid in refs},
            )
            for m in models
        )
        pset = PredictionSet(files, dict(sorted(refs.items())), "null", "null-calibration", {f.model: f for f in files})
        result = switch_rate(pred_set=pset, families=list(SWITCH_FAMILIES), models=models)
        rows: dict[str, list[dict[str, object]]] = {m: [] for m in models}
        for r in (*result.rows, *result.pooled):
            rows[r.model].append(r.to_dict())
        for k, m in enumerate(models):
            mr = next(r for r in rows[m] if r["family"] == "mr")
            worst = next((r for r in rows[m] if row.flag(r)), rows[m][0])
            if k == 0:
                row.null(mr)
                anyrow.null(worst)
            elif k == 1:
                boundary.null(mr)
            else:
                row.planted_result(grid[k - 2], mr)
                anyrow.planted_result(grid[k - 2], worst)
                boundary.planted_result(grid[k - 2], mr)
        if progress and (i + 1) % 100 == 0:
            progress(f"switch {i + 1}/{n_datasets}")
    secs = time.perf_counter() - t0
    return [row.done(secs), boundary.done(secs), anyrow.done(secs)]


# --------------------------------------------------------------------------- courtesy (real probe)


@dataclass(frozen=True, slots=True)
class _TextClip:
    """The two fields of a clip that courtesy eligibility reads."""

    id: str
    reference: str


_OPENERS = (
    "Thank you, Mister President.",
    "Thank you very much.",
    "Thank you, Madam President.",
    "Thank you, Commissioner.",
)
_SUBJECTS = ("The committee", "The Council", "My group", "The rapporteur", "This House", "The Commission")
_VERBS = ("approved", "rejected", "debated", "amended", "welcomed")
_TOPICS = (
    "the fisheries report",
    "the energy package",
    "the budget for next year",
    "the rules on water quality",
    "the youth guarantee",
    "the transport directive",
    "the rights of workers",
    "the farm subsidies",
)
_WHEN = ("yesterday", "last week", "this morning", "in March", "after a long debate")


def _courtesy_corpus(rng: np.random.Generator, n_courtesy: int, n_plain: int) -> tuple[list[_TextClip], dict[str, str]]:
    """Distinct sentences; the first ``n_courtesy`` clips' audio opens with a courtesy the reference omits."""
    combos = rng.permutation(len(_SUBJECTS) * len(_VERBS) * len(_TOPICS) * len(_WHEN))[: n_courtesy + n_plain]
    clips, spoken = [], {}
    for k, c in enumerate(combos):
        c = int(c)
        s, c = divmod(c, len(_VERBS) * len(_TOPICS) * len(_WHEN))
        v, c = divmod(c, len(_TOPICS) * len(_WHEN))
        t, w = divmod(c, len(_WHEN))
        sentence = f"{_SUBJECTS[s]} {_VERBS[v]} {_TOPICS[t]} {_WHEN[w]}."
        cid = f"courtesy-{k:03d}"
        clips.append(_TextClip(cid, sentence))
        opener = _OPENERS[int(rng.integers(len(_OPENERS)))] if k < n_courtesy else ""
        spoken[cid] = f"{opener} {sentence}".strip()
    return clips, spoken


def calibrate_courtesy(
    rng: np.random.Generator,
    n_datasets: int,
    *,
    courtesy_clips: tuple[int, int] = (30, 60),
    plain_clips: int = 30,
    grid: Sequence[float] = COURTESY_GRID,
    progress: Progress = None,
) -> list[Calibration]:
    """Courtesy measure (1 = the spoken courtesy is absent), original vs one condition, paired.

    A dataset: 30-60 clips whose audio opens with a courtesy the reference omits, 30 without.
    Three honest models write the courtesy with their own probability (60-95%), the same in every
    condition. Eligibility (the real :func:`~asr_audit.probes.battery.courtesy.eligible_clips`) from the
    spoken text, or, as today without ``--spoken``, from the three models' outputs on the
    original audio. Planted: a model drops the courtesy ``delta`` more often on the original
    audio (it follows the reference), judged on the same eligible clips.
    """
    from asr_audit.probes.battery.courtesy import CourtesyClip, courtesy_present, eligible_clips
    from asr_audit.stats.did import paired_difference

    t0 = time.perf_counter()
    grid = tuple(float(x) for x in grid)
    null_world = (
        f"{courtesy_clips[0]}-{courtesy_clips[1]} clips opening with a courtesy the reference omits + "
        f"{plain_clips} without; 3 honest models keep it with p = 0.6-0.95, the same in both conditions"
    )
    tallies = {
        mode: _Tally(
            "courtesy",
            "courtesy.difference",
            f"eligibility from {label}",
            null_world,
            "the model drops the courtesy delta more often on the original audio",
            "delta (accept-ref)",
            COURTESY_PLANTED,
        )
        for mode, label in (
            ("spoken", "the spoken text"),
            ("models", "the panel without the tested model (no --spoken)"),
        )
    }

    def write(clips: Sequence[_TextClip], spoken: Mapping[str, str], keep: np.ndarray) -> dict[str, str]:
        return {c.id: spoken[c.id] if k else c.reference for c, k in zip(clips, keep)}

    def values(eligible: Sequence[CourtesyClip], hyps: Mapping[str, str]) -> list[int]:
        return [int(not courtesy_present(e.opener, hyps[e.clip_id])) for e in eligible]

    for i in range(n_datasets):
        n_c = int(rng.integers(courtesy_clips[0], courtesy_clips[1] + 1))
        clips, spoken = _courtesy_corpus(rng, n_c, plain_clips)
        has = np.array([k < n_c for k in range(len(clips))])
        q = rng.uniform(0.6, 0.95, size=3)
        original = [write(clips, spoken, has & (rng.random(len(clips)) < qm)) for qm in q]
        other = [write(clips, spoken, has & (rng.random(len(clips)) < qm)) for qm in q]
        planted = {
            d: (
                write(clips, spoken, has & (rng.random(len(clips)) < max(q[0] - d, 0.0))),
                write(clips, spoken, has & (rng.random(len(clips)) < q[0])),
            )
            for d in grid
        }
        for mode, tally in tallies.items():
            known = spoken if mode == "spoken" else {}
            # the battery's rule: the panel's outputs without the tested model (m0), never its own
            full = {f"m{k}": h for k, h in enumerate(original) if k != 0}
            eligible = eligible_clips(clips, known, full)
            clusters = [e.clip_id for e in eligible]
            base, treat = values(eligible, original[0]), values(eligible, other[0])
            tally.null(
                paired_difference(
                    baseline=base, treated=treat, clusters=clusters, rng=rng, n_resamples=N_RESAMPLES
                ).to_dict()
            )
            for d, (orig_d, other_d) in planted.items():
                tally.planted_result(
                    d,
                    paired_difference(
                        baseline=values(eligible, orig_d),
                        treated=values(eligible, other_d),
                        clusters=clusters,
                        rng=rng,
                        n_resamples=N_RESAMPLES,
                    ).to_dict(),
                )
        if progress and (i + 1) % 100 == 0:
            progress(f"courtesy {i + 1}/{n_datasets}")
    secs = time.perf_counter() - t0
    return [t.done(secs) for t in tallies.values()]


# --------------------------------------------------------------------------- battery refdis (real mining)

BATTERY_TEXT_GRID = (0.1, 0.2, 0.3)
BATTERY_TEXT_PLANTED = 0.3


def _transcribe(
    rng: np.random.Generator, written: Mapping[str, Sequence[Any]], style: Any, copy: float, cut: float = 0.0
) -> dict[str, str]:
    """One model's outputs on every clip (``written``: clip id -> its planted parts): each planted
    error copied from the reference with probability ``copy``, the model's own errors drawn anew;
    ``cut``: the share of clips whose audio lost its last 1-3 spoken words (truncation)."""
    from asr_audit.testing.synthetic import _render

    out = {}
    for cid, parts in written.items():
        copied = {p.planted for p in parts if p.planted is not None and copy > 0 and rng.random() < copy}
        words = [w for p in parts for w in (p.written if p.planted in copied else p.spoken)]
        if cut and rng.random() < cut:
            words = words[: max(1, len(words) - int(rng.integers(1, 4)))]
        out[cid] = _render(rng, words, style)
    return out


#: Honest degradation (battery-refdis): each condition multiplies every model's drop and
#: substitution rates, or truncates clips, with no copying at all. Omission-type edits (the
#: reference omits a spoken opener or closer) then read "ref" more often under the condition.
DEGRADATIONS: Mapping[str, tuple[float, float, float]] = {
    "noise": (3.0, 2.0, 0.0),  # (drop x, substitution x, truncated share)
    "reverb": (2.0, 1.5, 0.0),
    "truncation": (1.0, 1.0, 0.5),
    "other voice": (1.5, 2.0, 0.0),
}


def _degraded(style: Any, drop: float, sub: float) -> Any:
    from dataclasses import replace

    return replace(style, p_drop=min(0.5, style.p_drop * drop), p_sub=min(0.5, style.p_sub * sub))


def _judged(judge: Any, model: str, hyps: Mapping[str, str], normalize: Callable[[str], Any]) -> dict[str, int]:
    """The battery judge's 0/1 items of ``model`` on one condition's outputs (as the battery loops)."""
    per: dict[str, int] = {}
    for cid, text in hyps.items():
        for u in judge.units(cid):
            if judge.applies(u, model):
                per.update(judge.judge(u, normalize(text), model))
    return per


def calibrate_battery_refdis(
    rng: np.random.Generator,
    n_datasets: int,
    *,
    clips: tuple[int, int] = (30, 60),
    grid: Sequence[float] = BATTERY_TEXT_GRID,
    error_range: tuple[float, float] = HONEST_ERRORS,
    progress: Progress = None,
) -> list[Calibration]:
    """The battery's refdis measure without ``--spoken``: references corrected by the panel.

    Text level, real code: the battery's own judge builder (``_refdis_judge``: the panel's
    consensus on the original audio, leave-one-out for a tested panel member, never the tested
    model's own output) and its :class:`~asr_audit.probes.battery.battery.RefdisJudge` verdicts on
    each condition's outputs, paired by item and clustered by sentence as the battery does. A
    dataset: 30-60 synthetic Parliament clips, each with 1-2 planted reference errors (spurious /
    omitted openers and closers, substitutions); 4 honest panel models and an honest tested model
    (word drop and substitution rates 1-5% each) transcribe the original audio and one condition
    with the same behaviour (independent draws). The tested model and panel member 1 each copy
    every planted error with their own probability (5-40%), the same in both conditions, so that
    accept-ref varies and the test can fire. Null: the tested model (not in the panel) and panel
    member 1 (leave-one-out: its own outputs must not select its items). Planted: a model outside
    the panel copies with the tested model's probability on the original audio and ``delta`` more
    in the condition.
    """
    from asr_audit.corpus.clips import Clip, Corpus
    from asr_audit.probes.battery.battery import MeasureSettings, _refdis_judge
    from asr_audit.probes.battery.conditions import ConditionContext
    from asr_audit.probes.predfiles.refdis import RefdisParams
    from asr_audit.stats.did import paired_difference
    from asr_audit.testing.synthetic import _body, _plant, _style
    from asr_audit.text.normalize import get_normalizer, normalize_many
    from asr_audit.text.text2num import with_text2num

    t0 = time.perf_counter()
    grid = tuple(float(x) for x in grid)
    norm = with_text2num(get_normalizer("whisper"))

    def normalize(text: str) -> tuple[str, ...]:
        return tuple(normalize_many(norm, [text])[0].split())

    null_world = (
        f"{clips[0]}-{clips[1]} clips with 1-2 planted reference errors; 4 panel models + a tested model "
        f"(drop and substitution rates {error_range[0]:g}-{error_range[1]:g} each; the tested model and "
        "panel member 1 copy with p = 0.05-0.4), the same in both conditions; references corrected by "
        "the panel on the original audio"
    )
    planted_world = "a model outside the panel copies delta more often in the condition"
    tested = _Tally(
        "battery-refdis",
        "battery.difference",
        "no --spoken: tested model (not in panel)",
        null_world,
        planted_world,
        "delta (copy share)",
        BATTERY_TEXT_PLANTED,
    )
    member = _Tally(
        "battery-refdis",
        "battery.difference",
        "no --spoken: panel member, leave-one-out",
        null_world,
        "not measured (the planted model is outside the panel)",
        "delta (copy share)",
        None,
    )
    degraded_world = (
        null_world.replace(", the same in both conditions", "")
        + "; in the condition every model drops / substitutes more words or loses its clip's last words: "
        + "; ".join(
            f"{k} x{d:g} drops, x{u:g} substitutions, {c:.0%} truncated" for k, (d, u, c) in DEGRADATIONS.items()
        )
    )
    degraded_tested: dict[str, _Tally] = {}
    degraded_member: dict[str, _Tally] = {}
    for tallies_of, who in ((degraded_tested, "tested model (not in panel)"), (degraded_member, "panel member, LOO")):
        for name in (*DEGRADATIONS, "row"):
            row = name == "row"
            tallies_of[name] = _Tally(
                "battery-refdis",
                "battery.row" if row else "battery.difference",
                f"no --spoken: {who}, honest degradation: "
                + (f"row over the {len(DEGRADATIONS)} conditions (Holm)" if row else name),
                degraded_world,
                "not measured (power: the rows above)",
                "-",
                None,
                estimate=not row,
            )
    panel = [f"panel-{k + 1}" for k in range(4)]
    copiers = [f"copier-{d:g}" for d in grid]
    settings = MeasureSettings(mining=RefdisParams(), families=None, gate_max_wer=0.3)
    for i in range(n_datasets):
        n = int(rng.integers(clips[0], clips[1] + 1))
        corpus_clips, written = [], {}
        for c in range(n):
            parts: list[Any] = []
            kinds: list[tuple[str, str]] = []
            while not kinds:  # the battery's corpus: clips that carry a reference error
                parts, kinds = _plant(rng, _body(rng), (0.5, 0.5, 0.1))
            cid = f"battery/clip-{c:03d}"
            ref = " ".join(w for part in parts for w in part.written)
            corpus_clips.append(Clip(cid, ref, audio_path=f"{cid}.wav"))  # text only: no audio is read
            written[cid] = parts
        styles = {m: _style(rng, error_range) for m in [*panel, "tested", *copiers]}
        share = dict.fromkeys(panel, 0.0) | {
            panel[0]: float(rng.uniform(0.05, 0.4)),
            "tested": float(rng.uniform(0.05, 0.4)),
        }
        share |= dict.fromkeys(copiers, share["tested"])
        original = {m: _transcribe(rng, written, styles[m], share[m]) for m in [*panel, "tested", *copiers]}
        condition = {m: _transcribe(rng, written, styles[m], share[m]) for m in [*panel, "tested"]}
        condition.update(
            {m: _transcribe(rng, written, styles[m], min(share[m] + d, 1.0)) for m, d in zip(copiers, grid)}
        )
        corpus = Corpus("battery", "test", "null-calibration", tuple(corpus_clips))
        judge = _refdis_judge(
            corpus,
            ConditionContext(corpus.clips),
            original,
            normalize,
            settings,
            panel,
            ["tested", panel[0], *copiers],
        )

        def difference(
            m: str, judge: Any = judge, original: Any = original, condition: Any = condition
        ) -> Mapping[str, object]:
            base, treat = _judged(judge, m, original[m], normalize), _judged(judge, m, condition[m], normalize)
            keys = sorted(set(base) & set(treat))
            return paired_difference(
                [base[k] for k in keys],
                [treat[k] for k in keys],
                [k.split("#")[0] for k in keys],  # one clip per sentence: the clip is the cluster
                rng,
                N_RESAMPLES,
            ).to_dict()

        tested.null(difference("tested"))
        member.null(difference(panel[0]))
        for m, d in zip(copiers, grid):
            tested.planted_result(d, difference(m))
        # honest degradation: the same models, more dropped words / truncated clips, no copying
        for who, tallies_of in (("tested", degraded_tested), (panel[0], degraded_member)):
            diffs = []
            for name, (drop, sub, cut) in DEGRADATIONS.items():
                worse = _degraded(styles[who], drop, sub)
                condition[who] = _transcribe(rng, written, worse, share[who], cut)
                diffs.append({**difference(who), "condition": name})
                tallies_of[name].null(diffs[-1])
            tallies_of["row"].null({"differences": diffs})
        if progress and (i + 1) % 100 == 0:
            progress(f"battery-refdis {i + 1}/{n_datasets}")
    secs = time.perf_counter() - t0
    return [
        tested.done(secs),
        member.done(secs),
        *(t.done(secs) for t in degraded_tested.values()),
        *(t.done(secs) for t in degraded_member.values()),
    ]


# --------------------------------------------------------------------------- gate (real refdis + gate code)

GATE_GRID = (0.1, 0.3, 0.6)
GATE_PLANTED = 0.6
GATE_BASELINE_RATIO = (1.5, 2.5)  # the weaker baseline's error share / the candidate's


def calibrate_gate(
    rng: np.random.Generator,
    n_datasets: int,
    *,
    worlds: Sequence[str] | None = None,
    n_clips: int = 300,
    grid: Sequence[float] = GATE_GRID,
    progress: Progress = None,
) -> list[Calibration]:
    """The regression gate's decision in worlds that err like real models (:mod:`asr_audit.testing.err_worlds`).

    Per world and dataset: 4 panel members and, by :func:`~asr_audit.probes.predfiles.gate.run_gate`
    with the anchor preset and leave-one-out (the verb's defaults):

    * **equal models**: the honest tested model against its honest twin (same error share,
      independent draws), every minimum effect at 0 (the boundary: the worst case) and at the
      defaults, as shipped (no verification: WER only) and with edits verified by planted truth;
    * **a better listener**: the honest tested model as the candidate against an honest baseline
      :data:`GATE_BASELINE_RATIO` times less accurate: the gate as shipped (no verification: WER
      only), with planted truth, and the OLD gate on every consensus edit (retired);
    * planted: a candidate that copies the reference on a share ``c`` of the true errors against
      the honest twin, with planted truth (power).
    """
    from asr_audit.probes.predfiles.gate import DEFAULT_MIN_EFFECT, MEASURES, GateOptions, run_gate
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.probes.predfiles.verified import TRUTH, Verification
    from asr_audit.testing.err_worlds import WORLDS, simulate, truth_labels
    from asr_audit.text.align import AlignmentCache
    from asr_audit.text.normalize import clear_normalize_cache

    t0 = time.perf_counter()
    grid = tuple(float(x) for x in grid)
    names = list(worlds or WORLDS)
    planted_world = "the candidate copies the reference on a share c of the true errors; baseline: its honest twin"
    zero = GateOptions(min_effect=dict.fromkeys(MEASURES, 0.0))
    usual = GateOptions(min_effect=dict(DEFAULT_MIN_EFFECT))
    params = preset_params(preset="anchor", loo=True)
    tallies: dict[tuple[str, str], _Tally] = {}

    def tally(world: str, what: str, planted: bool = False, retired: bool = False) -> _Tally:
        if (world, what) not in tallies:
            tallies[(world, what)] = _Tally(
                "gate",
                "gate.regression",
                f"{world}: {what}",
                WORLDS[world].describe() + f"; {n_clips} clips; anchor preset, leave-one-out",
                planted_world if planted else "-",
                "copy share c",
                GATE_PLANTED if planted else None,
                estimate=False,
                retired=retired,
            )
        return tallies[(world, what)]

    for i in range(n_datasets):
        for world in names:
            w = simulate(
                rng, WORLDS[world], n_clips, copy_shares=(0.0, *grid), extras={"baseline": GATE_BASELINE_RATIO}
            )
            preds = _prediction_set(w)
            cache = AlignmentCache()
            seed = _seed(rng)
            twin = "copier-0"
            copiers = [f"copier-{c:g}" for c in grid]
            mined = run_refdis(
                preds=preds, panel=list(w.panel), params=params, seed=seed, cache=cache, n_resamples=10
            ).to_dict()
            truth = Verification(
                source=TRUTH,
                name="planted truth",
                labels={k: _label(v) for k, v in truth_labels(w, _run_edits(mined)).items()},
            )

            def decide(
                cand: str,
                base: str,
                options: Any,
                preds: Any = preds,
                w: Any = w,
                seed: int = seed,
                cache: Any = cache,
                **kw: Any,
            ) -> Mapping[str, object]:
                return run_gate(
                    preds, cand, base, params, panel=list(w.panel), options=options, seed=seed, cache=cache, **kw
                ).to_dict()

            tally(world, "equal models, min effect 0 (boundary), as shipped (no verification: WER only)").null(
                decide("tested", twin, zero)
            )
            tally(world, "equal models, default min effects, as shipped (no verification: WER only)").null(
                decide("tested", twin, usual)
            )
            tally(world, "equal models, min effect 0 (boundary), verified by planted truth").null(
                decide("tested", twin, zero, verification=truth)
            )
            equal = tally(world, "equal models, default min effects, verified by planted truth", planted=True)
            equal.null(decide("tested", twin, usual, verification=truth))
            for m, c in zip(copiers, grid):
                equal.planted_result(c, decide(m, twin, usual, verification=truth))
            tally(world, "better listener vs weaker baseline, as shipped (no verification: WER only)").null(
                decide("tested", "baseline", usual)
            )
            tally(world, "better listener vs weaker baseline, verified by planted truth").null(
                decide("tested", "baseline", usual, verification=truth)
            )
            tally(world, "better listener vs weaker baseline, OLD gate on consensus edits", retired=True).null(
                decide("tested", "baseline", usual, unverified_edits=True)
            )
            clear_normalize_cache()
        if progress and (i + 1) % 10 == 0:
            progress(f"gate {i + 1}/{n_datasets}")
    secs = time.perf_counter() - t0
    rows = [t.done(secs) for t in tallies.values()]
    return rows + _pooled(rows, names)


def _pooled(rows: Sequence[Calibration], worlds: Sequence[str]) -> list[Calibration]:
    """Rows of the same setting in every world (``"<world>: <what>"``) summed into ``"all worlds: <what>"``."""
    from dataclasses import replace

    out: dict[str, Calibration] = {}
    for r in rows:
        world, _, what = r.setting.partition(": ")
        if world not in worlds:
            continue
        if what not in out:
            out[what] = replace(
                r,
                setting=f"all worlds: {what}",
                null_world=f"every world of {', '.join(worlds)} pooled",
                k_null=0,
                n_null=0,
                power={},
            )
        p = out[what]
        power = {e: (p.power.get(e, (0, 0))[0] + k, p.power.get(e, (0, 0))[1] + n) for e, (k, n) in r.power.items()}
        out[what] = replace(p, k_null=p.k_null + r.k_null, n_null=p.n_null + r.n_null, power=power)
    return list(out.values())


# --------------------------------------------------------------------------- refdis in worlds that err like real models

WORLD_COPY_GRID = (0.1, 0.3, 0.6)
WORLD_PLANTED = 0.6
LABEL_QUALITY = (0.9, 0.95)  # simulated labellers: right with this probability
LABELS_PER_STRATUM = 40  # a stratified sample of the run's edits, by edit kind (annotate-sized)

# Verifications a refdis flag is measured under: none (the contract: never fires), planted truth
# (exact), one labeller of quality q on a stratified sample, two independent labellers (an edit
# counts only where they agree).
VERIFICATIONS = (
    "none",
    "truth",
    *(f"labels q={q:g}" for q in LABEL_QUALITY),
    *(f"2 labels q={q:g}" for q in LABEL_QUALITY),
    f"labels q={LABEL_QUALITY[0]:g}, every edit",
    f"2 labels q={LABEL_QUALITY[0]:g}, every edit",
)
#: A larger world run on every ``LARGE_EVERY``-th dataset: (world, clips). With few clips an
#: honest model has too few verified edits to be judged at all; at this size it is.
LARGE_WORLD = ("commercial", 1600)
LARGE_EVERY = 5


def _prediction_set(world: Any) -> Any:
    """A world's transcripts as an in-memory :class:`~asr_audit.corpus.predfiles.PredictionSet`."""
    from asr_audit.corpus.predfiles import add_prediction_files
    from asr_audit.corpus.records import PredictionFile, PredictionRow

    refs = world.references
    files = []
    for m in world.models:
        rows = {cid: PredictionRow(cid, refs[cid], world.hypotheses[m][cid], line=k + 1) for k, cid in enumerate(refs)}
        files.append(PredictionFile(model=m, path=Path(f"{m}.jsonl"), dataset="world", split="test", rows=rows))
    return add_prediction_files(None, files, source="null world")


def _run_edits(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every edit of a refdis result (full panel and leave-one-out panels), each once."""
    from asr_audit.probes.predfiles.verified import edit_key

    seen: dict[str, Mapping[str, Any]] = {}
    for e in [*result.get("edits", []), *(x for es in result.get("loo_edits", {}).values() for x in es)]:
        seen.setdefault(edit_key(e), e)
    return list(seen.values())


def sampled_labels(
    rng: np.random.Generator,
    truth: Mapping[str, str],
    kinds: Mapping[str, str],
    *,
    quality: float,
    labellers: int = 1,
    per_stratum: int = LABELS_PER_STRATUM,
) -> Any:
    """Simulated human labels as the shipped rule reads them: a stratified sample (by edit kind) of
    ``per_stratum`` edits each, weighted by the inverse inclusion probability; each of
    ``labellers`` annotators is right with probability ``quality`` (an edit truth calls unsure is
    "neither"); the rows go through
    :func:`~asr_audit.probes.predfiles.verified_labels.labels_verification`, so the edits' labels
    (majority, disagreement unsure) and the labels' precision (the labeller accuracy measured on
    the edits two annotators labelled; none with one annotator) are the shipped ones."""
    from asr_audit.probes.predfiles.verified import REFERENCE_RIGHT, REFERENCE_WRONG
    from asr_audit.probes.predfiles.verified_labels import labels_verification
    from asr_audit.store.labels import NEITHER, PANEL, REFERENCE, LabelRow

    choice = {REFERENCE_WRONG: PANEL, REFERENCE_RIGHT: REFERENCE}
    wrong = {PANEL: REFERENCE, REFERENCE: PANEL}
    rows: list[LabelRow] = []
    for kind in sorted(set(kinds.values())):
        keys = sorted(k for k in truth if kinds[k] == kind)
        take = [keys[i] for i in rng.permutation(len(keys))[:per_stratum]]
        weight = len(keys) / len(take) if take else 1.0
        for key in take:
            right = choice.get(truth[key], NEITHER)
            for a in range(labellers):
                says = right if right == NEITHER or rng.random() < quality else wrong[right]
                rows.append(
                    LabelRow(
                        id=len(rows),
                        annotator=f"sim{a}",
                        time=0.0,
                        edit_key=key,
                        run_hash="",
                        choice=says,
                        weight=weight,
                    )
                )
    return labels_verification(rows, name=f"{labellers} simulated labeller(s), q = {quality:g}")


def _verified_view(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A refdis model entry as the contract's flags read it (``verified`` from the verification)."""
    v = entry.get("verified")
    return {"accept_ref": None if not v else v.get("accept_ref"), "verified": v}


def _consensus_view(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The model entry as the OLD rule judged it: consensus accept-ref and consensus WER inflation
    treated as if verified (the contract's flags on this view decide exactly as the pre-contract
    rule did: n >= 10, upper bound above 0.10, Wilson low >= 0.05; inflation interval above 0)."""
    keys = ("n_eligible", "ci_low", "ci_high", "wer_inflation_ci_low", "wer_n_clips")
    v = {k: entry.get(k) for k in keys} | {"copy_low": entry.get("ci_low"), "excluded": False}
    return {"accept_ref": entry.get("accept_ref"), "wer_inflation": entry.get("wer_inflation"), "verified": v}


def calibrate_refdis(
    rng: np.random.Generator,
    n_datasets: int,
    *,
    worlds: Sequence[str] | None = None,
    n_clips: int = 400,
    copy_grid: Sequence[float] = WORLD_COPY_GRID,
    large: tuple[str, int] | None = LARGE_WORLD,
    progress: Progress = None,
) -> list[Calibration]:
    """The refdis flags in worlds that err like real models (:mod:`asr_audit.testing.err_worlds`).

    Per world and dataset: ``n_clips`` clips; an honest tested model more accurate than the 4-member
    panel, copiers of it at ``copy_grid`` (share of the true reference errors they write as the
    reference), scored with the verb's default (anchor preset, leave-one-out) by the real
    :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis`; panel member 1 under leave-one-out.
    Each flag of the contract (``stats/flags.py``) is measured under every verification of
    :data:`VERIFICATIONS`, and the OLD consensus rule on the same entries (what it would have
    flagged). ``wer_inflated`` needs the verified WER inflation (the refdis run's, contract item 2):
    where the entries do not carry it the flag cannot fire and only its unverified rows are listed.
    ``large``: a world run at that many clips on every :data:`LARGE_EVERY`-th dataset (its own rows).
    """
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.probes.predfiles.verified import TRUTH, Verification, with_verification
    from asr_audit.testing.err_worlds import WORLDS, simulate, truth_labels
    from asr_audit.text.align import AlignmentCache
    from asr_audit.text.normalize import clear_normalize_cache

    t0 = time.perf_counter()
    grid = tuple(float(x) for x in copy_grid)
    planted = WORLD_PLANTED if WORLD_PLANTED in grid else grid[-1]
    names = list(worlds or WORLDS)
    params = preset_params(preset="anchor", loo=True)
    tallies: dict[tuple[str, str, str, str], _Tally] = {}

    def tally(world: str, flag: str, role: str, how: str) -> _Tally:
        key = (world, flag, role, how)
        if key not in tallies:
            tested = role == "tested"
            clips = n_clips
            if world == "all":  # the settings the report cites (stats.flags.refdis_setting)
                setting = TESTED_MODEL if tested else PANEL_MEMBER_LOO
                described = f"every world of {', '.join(names)} pooled; verified by planted truth"
            else:
                setting = (
                    f"{world}: {'tested model' if tested else 'panel member, LOO'}, "
                    f"{'OLD consensus rule' if how == 'old' else 'verification: ' + how}"
                )
                spec_name, _, size = world.partition(" x")
                clips = int(size) if size else n_clips
                described = WORLDS[spec_name].describe()
            tallies[key] = _Tally(
                "refdis",
                flag,
                setting,
                described + f"; {clips} clips; anchor preset, leave-one-out",
                "a copier of the tested model writes the reference on a share c of true errors" if tested else "-",
                "copy share c",
                planted if tested else None,
                retired=how == "old",
            )
        return tallies[key]

    flags = ("refdis.copies_reference", "refdis.wer_inflated")
    for i in range(n_datasets):
        runs = [(world, world, n_clips) for world in names]
        if large is not None and i % LARGE_EVERY == 0:
            runs.append((f"{large[0]} x{large[1]}", large[0], large[1]))
        for world, spec_name, clips in runs:
            w = simulate(rng, WORLDS[spec_name], clips, copy_shares=grid)
            preds = _prediction_set(w)
            copiers = [m for m in w.models if m.startswith("copier-")]
            member = w.panel[0]
            cache = AlignmentCache()
            run = run_refdis(
                preds=preds,
                panel=list(w.panel),
                params=params,
                seed=_seed(rng),
                models=["tested", *copiers, member],
                cache=cache,
            )
            result: dict[str, Any] = run.to_dict()
            edits = _run_edits(result)
            truth = truth_labels(w, edits)
            inflation = _verified_inflation(rng, run, preds, ["tested", *copiers, member], truth, cache)
            kinds = {k: str(e["kind"]) for k, e in zip(truth, edits)}
            verifications: dict[str, Verification | None] = {
                "none": None,
                "truth": Verification(
                    source=TRUTH, name="planted truth", labels={k: _label(v) for k, v in truth.items()}
                ),
            }
            for n_lab, prefix in ((1, "labels"), (2, "2 labels")):
                for q in LABEL_QUALITY:
                    verifications[f"{prefix} q={q:g}"] = sampled_labels(rng, truth, kinds, quality=q, labellers=n_lab)
                q = LABEL_QUALITY[0]  # every edit labelled: the sample-size limit removed
                verifications[f"{prefix} q={q:g}, every edit"] = sampled_labels(
                    rng, truth, kinds, quality=q, labellers=n_lab, per_stratum=len(truth)
                )
            by_how: dict[str, dict[str, dict[str, Any]]] = {}
            for how, ver in verifications.items():
                scored: Mapping[str, Any] = result if ver is None else with_verification(result, ver)
                by_how[how] = {m["model"]: _verified_view(m) for m in scored["models"]}
            for m, entry in by_how["truth"].items():  # contract item 2, on planted truth
                entry["verified"] = {**entry["verified"], **inflation.get(m, {})}
                entry["wer_inflation"] = entry["verified"].get("wer_inflation")
            by_how["old"] = {m["model"]: _consensus_view(m) for m in result["models"]}
            for how, entries in by_how.items():
                carries = how in ("none", "old") or "wer_inflation_ci_low" in (entries["tested"]["verified"] or {})
                for flag in flags if carries else flags[:1]:
                    # "all": every world pooled, under planted truth: the rows the report cites
                    for where in (world, "all") if how == "truth" and world in names else (world,):
                        tally(where, flag, "tested", how).null(entries["tested"])
                        tally(where, flag, "member", how).null(entries[member])
                        for m, c in zip(copiers, grid):
                            tally(where, flag, "tested", how).planted_result(c, entries[m])
            clear_normalize_cache()
        if progress and (i + 1) % 10 == 0:
            progress(f"refdis {i + 1}/{n_datasets}")
    secs = time.perf_counter() - t0
    return [t.done(secs) for t in tallies.values()]


def _verified_inflation(
    rng: np.random.Generator,
    run: Any,
    preds: Any,
    models: Sequence[str],
    truth: Mapping[str, str],
    cache: Any,
) -> dict[str, dict[str, Any]]:
    """The verified WER inflation of the contract (item 2) under planted truth: WER against
    references corrected only by the edits truth calls reference-wrong, minus WER, with the
    refdis run's own inflation code (:func:`~asr_audit.probes.predfiles.inflation.wer_inflations`)."""
    from asr_audit.probes.predfiles.inflation import wer_inflations
    from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
    from asr_audit.probes.predfiles.refdis_run import run_normalizer
    from asr_audit.probes.predfiles.verified import REFERENCE_WRONG, edit_key

    clips = prepare_clips(preds, models, run_normalizer("whisper", run.params.preset), True, cache=cache)
    kept = {m: [e for e in run.mining.scored_edits(m) if truth.get(edit_key(e)) == REFERENCE_WRONG] for m in models}
    got = wer_inflations(clips, kept, cache, rng, N_RESAMPLES)
    return {
        m: {
            "wer_inflation": i.inflation,
            "wer_inflation_ci_low": i.ci_low,
            "wer_inflation_ci_high": i.ci_high,
            "wer_n_clips": i.n_clips,
        }
        for m, i in got.items()
    }


def _label(truth: str) -> Any:
    from asr_audit.probes.predfiles.verified import EditLabel

    return EditLabel(label=truth)


# --------------------------------------------------------------------------- provenance

#: Seeds the worlds, statistics and thresholds were tuned on (never the evaluation seed).
TUNING_SEEDS = tuple(range(900, 910))
#: The evaluation seed of the shipped rates, fixed before the evaluation run (7718 since battery.did
#: reads a t-widened p-value, checked on tuning seed 905 only: 4.9% [3.7, 6.4] of 1,000 honest
#: designs; 7717, the previous evaluation seed, measured the interval rule at 6.7% [5.3, 8.4]).
EVALUATION_SEED = 7718
#: The modules whose code makes the shipped rates (hashed into the data file by :func:`code_hash`).
CODE_FILES = (
    "testing/null_worlds.py",
    "testing/err_worlds.py",
    "testing/synthetic.py",
    "stats/flags.py",
    "stats/did.py",
    "stats/intervals.py",
    "stats/contrast.py",
    "probes/predfiles/refdis.py",
    "probes/predfiles/refdis_run.py",
    "probes/predfiles/refdis_score.py",
    "probes/predfiles/verified.py",
    "probes/predfiles/inflation.py",
    "probes/predfiles/gate.py",
    "probes/predfiles/ortho.py",
    "probes/battery/battery.py",
    "probes/battery/courtesy.py",
    "probes/audio/lift.py",
    "text/normalize.py",
    "text/align.py",
)
#: The small run stored with the shipped rates and recomputed by a test: (probe, datasets, options).
CHECK_RUN: tuple[tuple[str, int, dict[str, Any]], ...] = (
    ("battery", 30, {}),
    ("refdis", 1, {"n_clips": 120, "large": None}),
)


def code_hash() -> str:
    """SHA-256 over :data:`CODE_FILES` (path and bytes, in order): the code the stored rates come from."""
    import hashlib

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for rel in CODE_FILES:
        h.update(rel.encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    return h.hexdigest()


def check_run(seed: int = EVALUATION_SEED) -> dict[str, object]:
    """Every row's counts in the small runs of :data:`CHECK_RUN` (seed ``[seed, probe index]``, as the
    benchmark draws): a drift test recomputes them and compares exactly."""
    out: dict[str, object] = {}
    for probe, n, options in CHECK_RUN:
        rows = calibrate(probe, np.random.default_rng([seed, PROBES.index(probe)]), n, **dict(options))
        out[probe] = {
            "n_datasets": n,
            "seed": seed,
            "options": dict(options),
            "rows": {
                f"{r.flag}: {r.setting}": {"k_null": r.k_null, "n_null": r.n_null, "power": r.to_dict()["power_grid"]}
                for r in rows
            },
        }
    return out


# --------------------------------------------------------------------------- registry

CALIBRATORS: dict[str, Callable[..., list[Calibration]]] = {
    "refdis": calibrate_refdis,
    "battery": calibrate_battery,
    "courtesy": calibrate_courtesy,
    "switch": calibrate_switch,
    "masked": calibrate_masked,
    "lift": calibrate_lift,
    "battery-refdis": calibrate_battery_refdis,
    "gate": calibrate_gate,
}


def calibrate(
    probe: str, rng: np.random.Generator, n_datasets: int, *, progress: Progress = None, **options: object
) -> list[Calibration]:
    """Run the null and planted worlds of ``probe`` on ``n_datasets`` simulated datasets."""
    if probe not in CALIBRATORS:
        raise ConfigError(f"unknown probe {probe!r} for null calibration; valid: {', '.join(CALIBRATORS)}")
    if n_datasets < 1:
        raise ConfigError(f"--n-datasets {n_datasets} must be >= 1")
    return CALIBRATORS[probe](rng, n_datasets, progress=progress, **options)


def format_table(rows: Sequence[Calibration]) -> str:
    """One Markdown table: flag, nominal level, FPR with its Wilson interval, power, MDE, status."""
    header = (
        "probe",
        "flag",
        "setting",
        "nominal",
        "FPR [95% CI]",
        "null n",
        "null estimate",
        "planted",
        "power [95% CI]",
        "MDE (power >= 0.8)",
        "status",
    )
    lines = []
    for c in rows:
        f = c.fpr
        at = c.power_at(c.planted)
        grid_max = max(c.power) if c.power else None
        mde = c.mde
        mde_text = "-" if not c.power else f"{mde:g}" if mde is not None else f"> {grid_max:g}"
        lines.append(
            (
                c.probe,
                c.flag,
                c.setting,
                f"{c.level:.3f}",
                f"{f.rate:.3f} [{f.low:.3f}, {f.high:.3f}]",
                str(c.n_null),
                "-"
                if c.null_mean is None
                else f"{STATISTIC[c.flag]} {c.null_mean:+.3f}" + ("" if c.null_se is None else f" ({c.null_se:.3f})"),
                "-" if c.planted is None else f"{c.effect} = {c.planted:g}",
                "-" if at is None else f"{at.rate:.2f} [{at.low:.2f}, {at.high:.2f}]",
                mde_text,
                c.status,
            )
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(x).ljust(w) for x, w in zip(cells, widths)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(r) for r in lines)])
