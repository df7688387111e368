"""Arms of the white-box experiments on the model organism (``benchmarks/mechanism.py``): ablation
and induction of per-site directions at chosen decoder layers, and their controls.

Each builder returns :class:`~asr_audit.mechrun.steer.Arm` records (one intervention per site) that
:func:`~asr_audit.mechrun.steer.run_steer` decodes under; controls (a random unit direction per
site, the direction's coordinates permuted) keep the sites, centers and caps of the arm they
control, and come from their own seeded generators so that adding an arm never changes a
control's draw (nor its cached rows). The removal arms of the later sessions are in
:mod:`asr_audit.mechrun.removal`; the research log that used them is ``docs/research/mechanism-log.md``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from asr_audit.errors import ConfigError
from asr_audit.mech.directions import Direction, paired_subspace, random_direction
from asr_audit.mech.interventions import Intervention
from asr_audit.mechrun.steer import Arm


def where_sets(ds: list[Direction], n_dec: int) -> list[tuple[str, list[Direction]]]:
    return [("L2", [ds[2]]), ("L3", [ds[3]]), ("all", ds[:n_dec])]


def ablate_arm(ds: list[Direction], how: str, label: str, rng: np.random.Generator | None = None) -> Arm:
    """Ablation at each direction's site: ``proj`` (h.d -> 0), ``centred`` (h.d -> the midpoint of
    the two voices' means), ``mean`` (h.d -> voice B's mean); with ``rng`` a random unit direction
    per site with the same center (the control)."""
    parts = []
    for d in ds:
        u = d.basis[0] if rng is None else random_direction(len(d.vector), 1.0, rng)
        mean_b = np.asarray(d.mean_b)
        center = {"proj": None, "centred": mean_b + d.vector / 2, "mean": mean_b}[how]
        parts.append(Intervention.ablation([d.site], u[None, :], center=center, label=label))
    return Arm(label, tuple(parts))


def induce_arm(ds: list[Direction], alpha: float, label: str, rng: np.random.Generator | None = None) -> Arm:
    parts = []
    for d in ds:
        v = d.vector if rng is None else random_direction(len(d.vector), d.norm, rng)
        parts.append(Intervention.induction([d.site], v, alpha, label=label))
    return Arm(label, tuple(parts))


def shuffled_arm(ds: list[Direction], rng: np.random.Generator) -> Arm:
    """Mean ablation of each direction with its coordinates permuted (the shuffled control)."""
    parts = [
        Intervention.ablation([d.site], rng.permutation(d.basis[0])[None, :], center=np.asarray(d.mean_b), label="x")
        for d in ds
    ]
    return Arm("x", tuple(parts))


def control_of(arm: Arm, control: str, rng: np.random.Generator) -> Arm:
    """``arm`` with each intervention's direction replaced by a random unit direction
    (``random``) or its own coordinates permuted (``shuffled``); same sites, centers and caps."""
    parts = []
    for iv in arm.interventions:
        b = np.asarray(iv.basis[0])
        u = random_direction(len(b), 1.0, rng) if control == "random" else rng.permutation(b)
        center = np.asarray(iv.center) if iv.center else None
        if iv.kind == "ablate" and iv.k == 1:
            parts.append(Intervention.ablation(iv.sites, u[None, :], center=center, positions=iv.positions, label="x"))
        elif iv.kind == "clamp" and iv.k == 1 and iv.trigger is None:
            parts.append(
                Intervention.clamping(iv.sites, u[None, :], iv.limit, center=center, positions=iv.positions, label="x")
            )
        else:
            raise ConfigError(f"no generic {control} control for a {iv.kind} part of rank {iv.k} with a trigger")
    name = "random-0" if control == "random" else "shuffled"
    return Arm(f"{name} {arm.label}", tuple(parts))


def site_arms(ds: list[Direction], n_dec: int, *, seed: int) -> list[Arm]:
    """Mean and centred ablation of the voice direction at L2, L3 and all decoder layers, with random
    (per site, same centers) controls and a shuffled control for the all-layer mean ablation."""
    rng = np.random.default_rng(seed)
    arms = [
        ablate_arm(sel, how, f"{how}-ablate {where}")
        for where, sel in where_sets(ds, n_dec)
        for how in ("mean", "centred")
    ]
    arms += [ablate_arm(ds, "mean", f"random-{i} mean-ablate all", rng) for i in range(2)]
    shuffled = [
        Intervention.ablation(
            [d.site], rng.permutation(d.basis[0])[None, :], center=np.asarray(d.mean_b), label="shuffled"
        )
        for d in ds
    ]
    return [*arms, Arm("shuffled mean-ablate all", tuple(shuffled))]


def decision_arms(ds: list[Direction], n_dec: int, *, seed: int) -> list[Arm]:
    """Mean ablation of the decision-position direction at L2, L3, all layers; negative induction
    (alpha = -2, the screen's best) at all layers; random controls of both (two for the mean
    ablation) and a shuffled one."""
    rng = np.random.default_rng(seed)
    arms = [ablate_arm(sel, "mean", f"mean-ablate {where}") for where, sel in where_sets(ds, n_dec)]
    arms += [induce_arm(ds, -2.0, "induce alpha=-2 all")]
    arms += [ablate_arm(ds, "mean", "random-0 mean-ablate all", rng)]
    arms += [induce_arm(ds, -2.0, f"random-{i} induce alpha=-2 all", rng) for i in range(2)]
    # drawn last, so the arms above keep their directions (and their cached rows)
    arms += [ablate_arm(ds, "mean", "random-1 mean-ablate all", rng)]
    shuffled = [
        Intervention.ablation(
            [d.site], rng.permutation(d.basis[0])[None, :], center=np.asarray(d.mean_b), label="shuffled"
        )
        for d in ds
    ]
    return [*arms, Arm("shuffled mean-ablate all", tuple(shuffled))]


def decision_rank_arms(path: Path, sites: list[str], ks: tuple[int, ...], *, seed: int) -> list[Arm]:
    """Mean ablation (to voice B's mean) of the top-k paired-SVD subspace of the decision-position
    differences (A - B per training edit) at every decoder layer at once, and a random subspace of
    the largest rank per site (same centers)."""

    rng = np.random.default_rng(seed)
    with np.load(path) as z:
        xa = {s: z[f"A{i}"] for i, s in enumerate(sites)}
        xb = {s: z[f"B{i}"] for i, s in enumerate(sites)}
    bases = {s: paired_subspace(xa[s], xb[s], max(ks))[0] for s in sites}

    def arm(label: str, k: int, random: bool = False) -> Arm:
        parts = []
        for s in sites:
            b = rng.standard_normal((k, bases[s].shape[1])) if random else bases[s][:k]
            parts.append(Intervention.ablation([s], b, center=xb[s].mean(0), label=label))
        return Arm(label, tuple(parts))

    return [arm(f"svd k={k} mean-ablate all", k) for k in ks] + [
        arm(f"random rank-{max(ks)} mean-ablate all", max(ks), random=True)
    ]


def large_induction_arms(ds: list[Direction], alphas: tuple[float, ...], *, seed: int) -> list[Arm]:
    """Induction of the voice direction at every decoder layer at each alpha, and a random direction
    per site of the same norm at each alpha."""
    rng = np.random.default_rng(seed)
    arms = []
    for a in alphas:
        arms.append(induce_arm(ds, a, f"induce alpha={a:g} all"))
        arms.append(induce_arm(ds, a, f"random-0 induce alpha={a:g} all", rng))
    return arms


__all__ = [
    "ablate_arm",
    "control_of",
    "decision_arms",
    "decision_rank_arms",
    "induce_arm",
    "large_induction_arms",
    "shuffled_arm",
    "site_arms",
    "where_sets",
]
