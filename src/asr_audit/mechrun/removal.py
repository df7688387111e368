"""Removal arms of the organism's decision direction without the side effect (issue 14, fourth to
seventh sessions; ``benchmarks/mechanism.py`` steps ``fresh-*`` and ``fresh-gate2-*``).

Directional clamping (:func:`clamp_arm`), conditional mean ablation above a percentile of
faithful positions' projections (:func:`trigger_arm`), edits at the first text position
(:func:`at_first`), the session arm sets built from them (``clamp``, ``trigger``, ``combo``,
``push``, ``l0``-``l0d``, ``r5``-``r7``, layer subsets), the catalogue ``--arm`` names
(:func:`candidate_arms`, :func:`confirm_arms`: each chosen arm with a random and a shuffled
control) and the second round's gated pieces (:func:`gate2_parts`, :func:`gate2_arm`). What was
tried, in order, and why: ``docs/research/mechanism-log.md``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from asr_audit.errors import ConfigError
from asr_audit.mech.directions import Direction, random_direction
from asr_audit.mech.interventions import Gate, Intervention
from asr_audit.mechrun.arms import ablate_arm, control_of, decision_rank_arms, shuffled_arm
from asr_audit.mechrun.steer import Arm

CLAMP_AT = (0.0, 0.5, 0.25)  # caps, in multiples of |d| above voice B's decision-position mean


TRIGGER_Q = (95.0, 90.0)  # conditional ablation: percentiles of faithful positions' projections


def clamp_arm(ds: list[Direction], c: float, label: str, control: str = "", seed: int = 0) -> Arm:
    """Directional clamping at each direction's site: ``(h - mean_B) . d^`` capped at ``c * |d|``
    (positions at or below untouched); ``control`` = ``random`` (a random unit direction per site)
    or ``shuffled`` (``d^`` permuted), same centers and caps, from their own seeded generator (so
    adding arms never changes a control's draw or its cached rows)."""
    rng = np.random.default_rng([seed, 14])
    parts = []
    for d in ds:
        u = {
            "": d.basis[0],
            "random": random_direction(len(d.vector), 1.0, rng),
            "shuffled": rng.permutation(np.asarray(d.basis[0])),
        }[control]
        parts.append(Intervention.clamping([d.site], u[None, :], c * d.norm, center=np.asarray(d.mean_b), label=label))
    return Arm(label, tuple(parts))


def clamp_arms(ds: list[Direction], *, seed: int) -> list[Arm]:
    """Clamping of the decision direction at all decoder layers at each cap in ``CLAMP_AT``, with a
    random and a shuffled control at cap 0 (voice B's mean: the strongest clamp)."""
    arms = [clamp_arm(ds, c, f"clamp c={c:g} all") for c in CLAMP_AT]
    arms.append(clamp_arm(ds, 0.0, "random-0 clamp c=0 all", "random", seed))
    arms.append(clamp_arm(ds, 0.0, "shuffled clamp c=0 all", "shuffled", seed))
    return arms


def trigger_arm(
    ds: list[Direction], pos: dict[str, np.ndarray], q: float, label: str, control: str = "", seed: int = 0
) -> Arm:
    """Conditional mean ablation at each direction's site: a position whose ``(h - mean_B) . u``
    exceeds the ``q``-th percentile of the faithful positions' (``pos``) is moved down to voice B's
    decision-position mean (``u = d^``; controls: a random unit direction or ``d^`` permuted, each
    with the percentile of its own projections)."""
    rng = np.random.default_rng([seed, 14, int(q)])
    parts = []
    for d in ds:
        u = {
            "": np.asarray(d.basis[0]),
            "random": random_direction(len(d.vector), 1.0, rng),
            "shuffled": rng.permutation(np.asarray(d.basis[0])),
        }[control]
        mean_b = np.asarray(d.mean_b)
        t = max(0.0, float(np.percentile((pos[d.site] - mean_b) @ u, q)))
        parts.append(Intervention.clamping([d.site], u[None, :], 0.0, center=mean_b, trigger=t, label=label))
    return Arm(label, tuple(parts))


def trigger_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Conditional mean ablation of the decision direction at all layers, triggered above each
    percentile in ``TRIGGER_Q``; a random and a shuffled control at the first."""
    q0 = TRIGGER_Q[0]
    arms = [trigger_arm(ds, pos, q, f"trigger q{q:g} all") for q in TRIGGER_Q]
    arms.append(trigger_arm(ds, pos, q0, f"random-0 trigger q{q0:g} all", "random", seed))
    arms.append(trigger_arm(ds, pos, q0, f"shuffled trigger q{q0:g} all", "shuffled", seed))
    return arms


def combo_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Mean ablation at layers 1-2 (``fresh-layers``: most of the removal, no side effect) plus a
    milder edit at layers 0 and 3 (where mean ablation costs faithful WER): clamping at
    ``c = 0.5`` or ``0.25``, or the q95 trigger; mean ablation at layers 1-3; a random and a
    shuffled control of the first (same centers and caps)."""

    def arm(label: str, outer: list[Intervention]) -> Arm:
        return Arm(label, (*ablate_arm(ds[1:3], "mean", "x").interventions, *outer))

    outer = [ds[0], ds[3]]
    arms = [
        arm(f"mean-ablate L1-2 + clamp c={c:g} L0,L3", list(clamp_arm(outer, c, "x").interventions))
        for c in (0.5, 0.25)
    ]
    arms.append(arm("mean-ablate L1-2 + trigger q95 L0,L3", list(trigger_arm(outer, pos, 95.0, "x").interventions)))
    arms.append(ablate_arm(ds[1:4], "mean", "mean-ablate L1-3"))
    for control in ("random", "shuffled"):
        rng = np.random.default_rng([seed, 14, 1, 2])
        inner = ablate_arm(ds[1:3], "mean", "x", rng) if control == "random" else shuffled_arm(ds[1:3], rng)
        parts = (*inner.interventions, *clamp_arm(outer, 0.5, "x", control, seed).interventions)
        name = "random-0" if control == "random" else "shuffled"
        arms.append(Arm(f"{name} mean-ablate L1-2 + clamp c=0.5 L0,L3", parts))
    return arms


def push_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Layers 1-2 carry the removal without the side effect (``fresh-layers``, ``fresh-combo``);
    push them further: clamping at layers 1-2 at a cap below voice B's decision-position mean
    (``c = -0.5``, ``-1``); mean ablation at layers 1-2 plus the layer-0 trigger at the 75th
    percentile; a random and a shuffled control of the ``c = -0.5`` clamp (same caps)."""
    arms = [clamp_arm(ds[1:3], c, f"clamp c={c:g} L1-2") for c in (-0.5, -1.0)]
    arms.append(
        Arm(
            "mean-ablate L1-2 + trigger q75 L0",
            (*ablate_arm(ds[1:3], "mean", "x").interventions, *trigger_arm(ds[:1], pos, 75.0, "x").interventions),
        )
    )
    arms.append(clamp_arm(ds[1:3], -0.5, "random-0 clamp c=-0.5 L1-2", "random", seed))
    arms.append(clamp_arm(ds[1:3], -0.5, "shuffled clamp c=-0.5 L1-2", "shuffled", seed))
    return arms


def l0_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Mean ablation at layers 1-2 plus the layer-0 trigger at lower percentiles (50, 25: more of
    layer 0 moved toward its mean ablation, which removes more but costs faithful WER), clamping
    at layers 1-2 at ``c = -0.25``, and a random control of the q50 combination."""

    def arm(label: str, q: float, control: str = "") -> Arm:
        rng = np.random.default_rng([seed, 14, 3]) if control else None
        inner = ablate_arm(ds[1:3], "mean", "x", rng).interventions
        return Arm(label, (*inner, *trigger_arm(ds[:1], pos, q, "x", control, seed).interventions))

    arms = [arm(f"mean-ablate L1-2 + trigger q{q:g} L0", q) for q in (50.0, 25.0)]
    arms.append(clamp_arm(ds[1:3], -0.25, "clamp c=-0.25 L1-2"))
    arms.append(arm("random-0 mean-ablate L1-2 + trigger q50 L0", 50.0, "random"))
    return arms


def l0b_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Mean ablation at layers 1-2 plus layer 0 moved down all the way: clamping at voice B's mean
    (``c = 0``: unlike mean ablation it never moves a position up) and the trigger at the 10th
    percentile; a random and a shuffled control of the clamp combination."""
    inner = ablate_arm(ds[1:3], "mean", "x").interventions
    arms = [
        Arm("mean-ablate L1-2 + clamp c=0 L0", (*inner, *clamp_arm(ds[:1], 0.0, "x").interventions)),
        Arm("mean-ablate L1-2 + trigger q10 L0", (*inner, *trigger_arm(ds[:1], pos, 10.0, "x").interventions)),
    ]
    for control in ("random", "shuffled"):
        rng = np.random.default_rng([seed, 14, 4])
        inner_c = ablate_arm(ds[1:3], "mean", "x", rng) if control == "random" else shuffled_arm(ds[1:3], rng)
        parts = (*inner_c.interventions, *clamp_arm(ds[:1], 0.0, "x", control, seed).interventions)
        name = "random-0" if control == "random" else "shuffled"
        arms.append(Arm(f"{name} mean-ablate L1-2 + clamp c=0 L0", parts))
    return arms


def l0c_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """``fresh-l0b``'s best (layers 1-2 mean-ablated, layer 0 clamped at voice B's mean) plus layer 3
    clamped at voice B's mean or triggered at q95; layers 1-2 clamped a tenth of a gap below voice
    B's mean instead, with layer 0 clamped; a random control of the last (same caps)."""
    inner = ablate_arm(ds[1:3], "mean", "x").interventions
    l0 = clamp_arm(ds[:1], 0.0, "x").interventions
    arms = [
        Arm("mean-ablate L1-2 + clamp c=0 L0,L3", (*inner, *l0, *clamp_arm(ds[3:], 0.0, "x").interventions)),
        Arm(
            "mean-ablate L1-2 + clamp c=0 L0 + trigger q95 L3",
            (*inner, *l0, *trigger_arm(ds[3:], pos, 95.0, "x").interventions),
        ),
        Arm("clamp c=-0.1 L1-2 + clamp c=0 L0", (*clamp_arm(ds[1:3], -0.1, "x").interventions, *l0)),
    ]
    parts = (
        *clamp_arm(ds[1:3], -0.1, "x", "random", seed).interventions,
        *clamp_arm(ds[:1], 0.0, "x", "random", seed + 1).interventions,
    )
    arms.append(Arm("random-0 clamp c=-0.1 L1-2 + clamp c=0 L0", parts))
    return arms


def l0d_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Between ``fresh-l0b``'s best and ``fresh-l0c``'s ``c = -0.1``: clamping at voice B's mean at
    layers 0-2 (no position moved up), layers 1-2 clamped at ``c = -0.05`` with layer 0 at ``c = 0``,
    and a random control of the latter (same caps)."""
    l0 = clamp_arm(ds[:1], 0.0, "x").interventions
    arms = [
        clamp_arm(ds[:3], 0.0, "clamp c=0 L0-2"),
        Arm("clamp c=-0.05 L1-2 + clamp c=0 L0", (*clamp_arm(ds[1:3], -0.05, "x").interventions, *l0)),
    ]
    parts = (
        *clamp_arm(ds[1:3], -0.05, "x", "random", seed).interventions,
        *clamp_arm(ds[:1], 0.0, "x", "random", seed + 1).interventions,
    )
    arms.append(Arm("random-0 clamp c=-0.05 L1-2 + clamp c=0 L0", parts))
    return arms


def r5_arms(fam: dict[str, list[Direction]], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Fifth session (chosen on the tuning set, confirmed elsewhere): the direction fitted on every
    record-token position (the pooled ``voice`` family: voice A minus voice B on the same text, its
    center voice B's all-position mean) mean-ablated at all layers, alone and on top of
    ``fresh-l0b``'s best (decision direction mean-ablated at layers 1-2, layer 0 clamped at voice B's
    mean); that best with layer 0 clamped a tenth or a quarter of a gap below voice B's mean."""
    ds, vs = fam["decision"], fam["voice"]
    inner = ablate_arm(ds[1:3], "mean", "x").interventions
    best = (*inner, *clamp_arm(ds[:1], 0.0, "x").interventions)
    return [
        ablate_arm(vs, "mean", "voice mean-ablate all"),
        Arm(
            "mean-ablate L1-2 + clamp c=0 L0 + voice mean-ablate all",
            (*best, *ablate_arm(vs, "mean", "x").interventions),
        ),
        *(
            Arm(f"mean-ablate L1-2 + clamp c={c:g} L0", (*inner, *clamp_arm(ds[:1], c, "x").interventions))
            for c in (-0.1, -0.25)
        ),
    ]


def at_first(ds: list[Direction], how: str, first: int, label: str, c: float = 0.0) -> list[Intervention]:
    """Mean ablation (``mean``) or clamping at ``c`` gaps above voice B's mean (``clamp``) of each
    direction at the one decoder position ``first`` (the position that predicts the first text token)."""
    parts = []
    for d in ds:
        u, mean_b = np.asarray(d.basis[0])[None, :], np.asarray(d.mean_b)
        pos = (first, first + 1)
        if how == "mean":
            parts.append(Intervention.ablation([d.site], u, center=mean_b, positions=pos, label=label))
        else:
            parts.append(Intervention.clamping([d.site], u, c * d.norm, center=mean_b, positions=pos, label=label))
    return parts


def r6_arms(fam: dict[str, list[Direction]], om: list[Direction], first: int) -> list[Arm]:
    """Fifth session, second round: the sites ``fresh-l0b``'s best leaves are omission sites, decided
    at the first text token; the omission-edit direction edited at that one position (clamped at
    voice B's mean, or mean-ablated), at all layers or layers 1-2, on top of that best and alone."""
    ds = fam["decision"]
    best = (*ablate_arm(ds[1:3], "mean", "x").interventions, *clamp_arm(ds[:1], 0.0, "x").interventions)
    return [
        Arm("best + omission clamp c=0 first position all", (*best, *at_first(om, "clamp", first, "x"))),
        Arm("best + omission mean-ablate first position all", (*best, *at_first(om, "mean", first, "x"))),
        Arm("best + omission clamp c=0 first position L1-2", (*best, *at_first(om[1:3], "clamp", first, "x"))),
        Arm("omission clamp c=0 first position all", tuple(at_first(om, "clamp", first, "x"))),
    ]


def r7_arms(fam: dict[str, list[Direction]], om: list[Direction], first: int) -> list[Arm]:
    """Third round: ``r6``'s layers 1-2 first-position clamp removes all but one site but costs +1.2
    faithful WER points over the best; milder: a cap half or a quarter of a gap above voice B's
    mean (training voice-B decision positions sit at most 0.22 gaps above it, voice A's at least
    0.81), or one layer only."""
    ds = fam["decision"]
    best = (*ablate_arm(ds[1:3], "mean", "x").interventions, *clamp_arm(ds[:1], 0.0, "x").interventions)
    return [
        *(
            Arm(
                f"best + omission clamp c={c:g} first position L1-2",
                (*best, *at_first(om[1:3], "clamp", first, "x", c)),
            )
            for c in (0.5, 0.25)
        ),
        *(
            Arm(
                f"best + omission clamp c=0 first position L{i}",
                (*best, *at_first(om[i : i + 1], "clamp", first, "x")),
            )
            for i in (2, 1)
        ),
    ]


LAYER_SETS = ((0, 1, 2), (1, 2))  # mean ablation at fewer layers (all four: fresh-A)


def layer_arms(ds: list[Direction], decision: Path, sites: list[str], *, seed: int) -> list[Arm]:
    """Mean ablation of the decision direction at fewer decoder layers, the top paired-SVD direction
    (k = 1) at all layers (fresh-rank's arm), and a random control (same centers) per layer set."""
    arms = [ablate_arm([ds[i] for i in ls], "mean", f"mean-ablate L{ls[0]}-{ls[-1]}") for ls in LAYER_SETS]
    arms.append(decision_rank_arms(decision, sites, (1,), seed=seed)[0])
    for ls in LAYER_SETS:
        rng = np.random.default_rng([seed, 14, *ls])
        arms.append(ablate_arm([ds[i] for i in ls], "mean", f"random-0 mean-ablate L{ls[0]}-{ls[-1]}", rng))
    return arms


def candidate_arms(
    fam: dict[str, list[Direction]],
    pos: dict[str, np.ndarray],
    decision: Path,
    sites: list[str],
    *,
    seed: int,
    om: list[Direction] | None = None,
    first: int = 0,
) -> dict[str, Arm]:
    """Every non-control arm of the fourth and fifth sessions, by label (what ``--arm`` names)."""
    ds = fam["decision"]
    arms = [
        *(r6_arms(fam, om, first) + r7_arms(fam, om, first) if om else []),
        *clamp_arms(ds, seed=seed),
        *trigger_arms(ds, pos, seed=seed),
        *layer_arms(ds, decision, sites, seed=seed),
        *combo_arms(ds, pos, seed=seed),
        *push_arms(ds, pos, seed=seed),
        *l0_arms(ds, pos, seed=seed),
        *l0b_arms(ds, pos, seed=seed),
        *l0c_arms(ds, pos, seed=seed),
        *l0d_arms(ds, pos, seed=seed),
        *r5_arms(fam, pos, seed=seed),
        ablate_arm(ds, "mean", "mean-ablate all"),
    ]
    return {a.label: a for a in arms if not a.label.startswith(("random", "shuffled"))}


def confirm_arms(
    fam: dict[str, list[Direction]],
    pos: dict[str, np.ndarray],
    decision: Path,
    sites: list[str],
    labels: str,
    *,
    seed: int,
    om: list[Direction] | None = None,
    first: int = 0,
) -> list[Arm]:
    """The arms ``labels`` (``|``-separated; chosen on the tuning set), each with a random and a
    shuffled control."""
    cands = candidate_arms(fam, pos, decision, sites, seed=seed, om=om, first=first)
    arms: list[Arm] = []
    for j, label in enumerate(labels.split("|")):
        if label not in cands:
            raise ConfigError(f"--arm {label!r} is not an arm; valid: {', '.join(sorted(cands))}")
        arm = cands[label]
        rngs = (np.random.default_rng([seed, 14, 5, 2 * j + i]) for i in range(2))
        arms += [arm, *(control_of(arm, c, rng) for c, rng in zip(("random", "shuffled"), rngs))]
    return arms


# triggers: percentiles of the benchmark voice's faithful training positions' projections
GATE2_Q = (("q75", 75.0), ("q95", 95.0), ("q99", 99.0), ("max", 100.0))


FULL_ARM = "best + omission clamp c=0 first position L1-2"  # the seventh session's gated arm


def gate2_parts(
    fam: dict[str, list[Direction]],
    om: list[Direction],
    pos_a: dict[str, np.ndarray],
    first: int,
    *,
    seed: int,
    control: str = "",
) -> dict[str, tuple[Intervention, ...]]:
    """The pieces of the seventh session's arm and their conditional replacements, by name, each
    with ``control`` = ``random`` / ``shuffled`` (same sites, centers, caps, positions; a trigger at
    the same percentile of the control direction's own projections):

    * ``L1-2`` the decision direction mean-ablated at layers 1-2, every position;
    * ``L0`` layer 0 clamped at voice B's decision-position mean (``c = 0``);
    * ``om`` the omission direction clamped at ``c = 0`` at the first text position, layers 1-2;
    * ``A-q95 L1-2`` (``q75``, ``q99``, ``max``; and ``A-q99 L0``): the conditional version of ``L1-2``
      (of ``L0``): a position is moved to voice B's mean only where its projection exceeds that
      percentile of the projections of every decoder position of the benchmark voice's *training*
      clips with no planted edit (``pos_a``)."""
    ds = fam["decision"]
    if control:
        rng = np.random.default_rng([seed, 14, 9, 0 if control == "random" else 1])
        inner = ablate_arm(ds[1:3], "mean", "x", rng) if control == "random" else shuffled_arm(ds[1:3], rng)
        om_parts = control_of(Arm("x", tuple(at_first(om[1:3], "clamp", first, "x"))), control, rng).interventions
    else:
        inner = ablate_arm(ds[1:3], "mean", "x")
        om_parts = tuple(at_first(om[1:3], "clamp", first, "x"))
    parts = {
        "L1-2": inner.interventions,
        "L0": clamp_arm(ds[:1], 0.0, "x", control, seed).interventions,
        "om": om_parts,
        "A-q99 L0": trigger_arm(ds[:1], pos_a, 99.0, "x", control, seed).interventions,
    }
    for name, q in GATE2_Q:
        parts[f"A-{name} L1-2"] = trigger_arm(ds[1:3], pos_a, q, "x", control, seed).interventions
    return parts


# label -> its pieces, in the order they are applied (decision direction first, as in FULL_ARM)
GATE2_DIAG = {
    FULL_ARM: ("L1-2", "L0", "om"),
    "mean-ablate L1-2": ("L1-2",),
    "mean-ablate L1-2 + clamp c=0 L0": ("L1-2", "L0"),
    "clamp c=0 L0": ("L0",),
    "omission clamp c=0 first position L1-2": ("om",),
    "mean-ablate L1-2 + omission clamp c=0 first position L1-2": ("L1-2", "om"),
}


GATE2_EXTRA = {  # secondary, after the confirmation: the chosen arm without its layers 1-2 piece
    "clamp c=0 L0 + omission first L1-2": ("L0", "om"),
}


GATE2_ARMS = {
    **{
        f"A-trigger {name} L1-2 + clamp c=0 L0 + omission first L1-2": (f"A-{name} L1-2", "L0", "om")
        for name, _ in GATE2_Q
    },
    "A-trigger q99 L1-2 + omission first L1-2": ("A-q99 L1-2", "om"),
    "A-trigger q99 L0-2 + omission first L1-2": ("A-q99 L1-2", "A-q99 L0", "om"),
}


def gate2_arm(label: str, parts: dict[str, tuple[Intervention, ...]], gate: Gate, control: str = "") -> Arm:
    """The arm ``label`` of ``GATE2_DIAG`` / ``GATE2_ARMS`` under ``gate``; a control's label is
    prefixed ``random-0`` / ``shuffled``."""
    names = {**GATE2_DIAG, **GATE2_ARMS, **GATE2_EXTRA}[label]
    prefix = {"": "", "random": "random-0 ", "shuffled": "shuffled "}[control]
    return Arm(f"gated {prefix}{label}", tuple(iv for n in names for iv in parts[n]), gate)


__all__ = [
    "CLAMP_AT",
    "FULL_ARM",
    "GATE2_ARMS",
    "GATE2_DIAG",
    "GATE2_EXTRA",
    "GATE2_Q",
    "LAYER_SETS",
    "TRIGGER_Q",
    "at_first",
    "candidate_arms",
    "clamp_arm",
    "clamp_arms",
    "combo_arms",
    "confirm_arms",
    "gate2_arm",
    "gate2_parts",
    "l0_arms",
    "l0b_arms",
    "l0c_arms",
    "l0d_arms",
    "layer_arms",
    "push_arms",
    "r5_arms",
    "r6_arms",
    "r7_arms",
    "trigger_arm",
    "trigger_arms",
]
