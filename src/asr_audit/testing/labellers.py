"""Simulated labellers on synthetic worlds with planted truth: does verified accept-ref recover the
planted copy rate within its interval (issue 26's "done when")?

A world is a synthetic prediction set (:func:`asr_audit.testing.synthetic.make_prediction_set`)
with planted reference errors, in which the consensus panel also *mishears* some clips (every panel
member writes another last word where the reference is right): a mined edit there is
reference-right, and a model that writes the reference on it hears better than the panel. The
models: honest ones outside the panel (copy rate 0, they hear better than the panel on its
mishearings), copiers (copy rate 0.9 / 0.5: they write the reference on that share of the planted
errors, and hear better too), and panel members scored leave-one-out (they share the mishearings,
so hear worse), one of them a copier (0.3).

A run's edits are labelled by planted truth (reference-wrong where a planted error sits at the
edit's clip and position, else reference-right); the *planted copy rate* of a model is its
verified accept-ref with every edit so labelled. A simulated labeller who is right with
probability ``q`` labels a stratified sample of the edits (by kind and position; weights kept), a
second one labels a subset of it (double-labelled, for ``q``'s estimate). Two intervals are checked
per model, whether they hold the planted copy rate:

* ``plain``: the Wilson interval of accept-ref on the edits labelled reference-wrong (on Kish's
  effective size for weighted labels), as if the labels were truth;
* ``bounded``: ``[copy_low, copy_high]`` with the labels' precision estimated from the
  double-labelled agreement and the share labelled wrong
  (:func:`~asr_audit.probes.predfiles.verified.labelled_precision`), a bound valid whatever the
  model does on the mislabelled edits.

Everything is drawn from the seeds passed in. ``benchmarks/labellers.py`` runs the table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.probes.predfiles.verified import (
    LABELS_SOURCE,
    REFERENCE_RIGHT,
    REFERENCE_WRONG,
    TRUTH,
    EditLabel,
    Verification,
    copy_high,
    edit_key,
    labelled_precision,
    labeller_accuracy,
    verified_score,
)
from asr_audit.testing.synthetic import END, make_prediction_set

MISHEARD = "paris"  # what the whole panel writes for the last word of a misheard clip
COPY_SHARES = (0.9, 0.5, 0.3)  # the last copier sits in the panel


@dataclass(frozen=True, slots=True)
class World:
    """A refdis run on a synthetic set with planted errors and panel mishearings, with the truth."""

    result: Mapping[str, Any]  # the refdis result's to_dict()
    truth: Mapping[str, str]  # edit key -> reference-wrong | reference-right
    panel: tuple[str, ...]
    copy_shares: Mapping[str, float]  # generative copy share of every scored model
    n_misheard: int


def _mishear(folder: Path, panel: Sequence[str], clips: set[str]) -> None:
    """Every panel member writes :data:`MISHEARD` for the last word of ``clips``."""
    for path in folder.glob("*.jsonl"):
        model = path.name.split("_")[1]
        if model not in panel:
            continue
        rows = []
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            words = (row["pred_text"] or "").split()
            if row["audio_filepath"] in clips and words:
                core = words[-1].rstrip(",.;:?!")
                words[-1] = MISHEARD + words[-1][len(core) :]
                row["pred_text"] = " ".join(words)
            rows.append(json.dumps(row, ensure_ascii=False))
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def make_world(rng: np.random.Generator, folder: str | Path, n_clips: int = 300, mishear_rate: float = 0.15) -> World:
    """A world of ``n_clips`` clips (9 models: 6 honest, copiers :data:`COPY_SHARES`), panel = the
    first 4 honest models and the last copier, ``mishear_rate`` of the clips without a planted
    error at their end misheard by the panel; mined with the ``paper`` preset, leave-one-out."""
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    folder = Path(folder)
    s = make_prediction_set(n_clips, 9, rng=rng, folder=folder, copy_shares=COPY_SHARES)
    copiers = tuple(s.copying)
    panel = (*s.honest[:4], copiers[-1])
    ends = {p.clip_id for p in s.planted if p.position == END}
    misheard = {c for c in s.clip_ids if c not in ends and rng.random() < mishear_rate}
    _mishear(folder, panel, misheard)
    run = run_refdis(load_predictions(folder, None), panel, preset_params("paper"), n_resamples=10)
    planted = {(p.clip_id, p.position) for p in s.planted}
    truth = {}
    for e in [*run.edits, *(e for es in run.mining.loo_edits.values() for e in es)]:
        truth[edit_key(e)] = REFERENCE_WRONG if (e.clip_id, e.position) in planted else REFERENCE_RIGHT
    result = run.to_dict()
    shares = {m: float(s.copying.get(m, 0.0)) for m in s.models}
    return World(result, truth, panel, shares, len(misheard))


def planted_rate(world: World, model: str) -> float | None:
    """The model's accept-ref with every edit labelled by planted truth (its copy rate on this run)."""
    v = Verification(source=TRUTH, name="planted", labels={k: EditLabel(label=lab) for k, lab in world.truth.items()})
    r = verified_score(world.result, model, v).copy
    return r.rate if r.defined else None


def _flip(label: str) -> str:
    return REFERENCE_RIGHT if label == REFERENCE_WRONG else REFERENCE_WRONG


@dataclass(frozen=True, slots=True)
class Labelling:
    """One labeller's labels on a stratified sample, and the second labeller's agreement."""

    labels: Mapping[str, EditLabel]
    n_double: int
    n_agree: int


def label_sample(
    rng: np.random.Generator, world: World, q: float, n_sample: int = 120, n_double: int = 40
) -> Labelling:
    """A sample of ``n_sample`` edits stratified by kind and position (proportional, at least one per
    stratum; weight = stratum size / sampled), each labelled right with probability ``q``; the first
    ``n_double`` sampled edits labelled again by an independent labeller of the same ``q``."""
    strata: dict[str, list[str]] = {}
    for k in sorted(world.truth):
        _, kind, span, _ = k.split("|", 3)
        strata.setdefault(kind, []).append(k)  # kind, then position below
    by: dict[tuple[str, str], list[str]] = {}
    for kind, keys in strata.items():
        for k in keys:
            start = int(k.split("|")[2].split(":")[0])
            by.setdefault((kind, "start" if start == 0 else "other"), []).append(k)
    total = sum(len(v) for v in by.values())
    labels: dict[str, EditLabel] = {}
    sampled: list[str] = []
    for _, keys in sorted(by.items()):
        n_h = min(len(keys), max(1, round(n_sample * len(keys) / total)))
        pick = [keys[i] for i in rng.choice(len(keys), size=n_h, replace=False)]
        w = len(keys) / n_h
        for k in pick:
            truth = world.truth[k]
            labels[k] = EditLabel(label=truth if rng.random() < q else _flip(truth), weight=w)
            sampled.append(k)
    order = [sampled[i] for i in rng.permutation(len(sampled))][:n_double]
    agree = 0
    for k in order:
        truth = world.truth[k]
        second = truth if rng.random() < q else _flip(truth)
        agree += second == labels[k].label
    return Labelling(labels, len(order), agree)


@dataclass(frozen=True, slots=True)
class Trial:
    """One model, one labelling: the planted rate and the two intervals."""

    model: str
    planted: float
    plain: tuple[float, float]
    bounded: tuple[float, float]
    n_eligible: int

    def covers(self, which: str) -> bool:
        lo, hi = self.plain if which == "plain" else self.bounded
        return lo - 1e-12 <= self.planted <= hi + 1e-12


def trials(world: World, labelling: Labelling, models: Sequence[str] | None = None) -> list[Trial]:
    """Every model's planted rate and intervals under ``labelling`` (models with no labelled
    reference-wrong edit it wrote or corrected are left out: no interval)."""
    v = Verification(source=LABELS_SOURCE, name="simulated", labels=labelling.labels)
    q = labeller_accuracy(labelling.n_agree, labelling.n_double)
    out = []
    for m in models or [str(x["model"]) for x in world.result["models"]]:
        truth = planted_rate(world, m)
        s = verified_score(world.result, m, v)
        if truth is None or not s.copy.defined:
            continue
        p = labelled_precision(q, s.precision)
        bounded = verified_score(
            world.result, m, Verification(source=LABELS_SOURCE, name="", labels=v.labels, precision=p)
        )
        low = bounded.copy_low if bounded.copy_low is not None else 0.0
        high = copy_high(s.copy, p)
        out.append(Trial(m, truth, (s.copy.low, s.copy.high), (low, 1.0 if high is None else high), s.copy.n))
    return out


def model_kind(world: World, model: str) -> str:
    """``copier 0.9`` / ``honest`` and whether the model hears better than the panel (outside it)
    or worse (a panel member, scored leave-one-out)."""
    share = world.copy_shares.get(model, 0.0)
    who = f"copier {share:g}" if share else "honest"
    return f"{who}, {'panel (hears worse)' if model in world.panel else 'hears better than the panel'}"
