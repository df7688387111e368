"""The mechanism experiments' arms, pooling rule and gate rule as library functions
(``mechrun.arms``, ``mechrun.removal``, ``mechrun.measures``; ``benchmarks/mechanism.py``'s steps)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from asr_audit.errors import ConfigError
from asr_audit.mech.directions import direction_from_sets
from asr_audit.mech.interventions import Gate
from asr_audit.mechrun import arms as mk
from asr_audit.mechrun import removal as rm
from asr_audit.mechrun.measures import gate2_choice, gate2_pool, gate_rule

SITES = [f"decoder.layers.{i}.out" for i in range(4)]


def _family(prefix: str, rng: np.random.Generator) -> list:
    return [
        direction_from_sets(f"{prefix}-{s}", s, rng.normal(1, 1, (20, 8)), rng.normal(0, 1, (20, 8))) for s in SITES
    ]


@pytest.fixture
def fam():
    rng = np.random.default_rng(0)
    return {"voice": _family("voice", rng), "decision": _family("decision", rng)}, _family("om", rng)


def test_controls_keep_sites_and_centers_and_are_seeded(fam):
    f, _ = fam
    arm = mk.ablate_arm(f["decision"], "mean", "mean-ablate all")
    for control in ("random", "shuffled"):
        c = mk.control_of(arm, control, np.random.default_rng(1))
        assert [iv.sites for iv in c.interventions] == [iv.sites for iv in arm.interventions]
        assert [iv.center for iv in c.interventions] == [iv.center for iv in arm.interventions]
        assert c.interventions != arm.interventions and c.label.endswith(arm.label)
    # the same seed gives the same arms (a rerun reads its cached rows)
    assert mk.decision_arms(f["decision"], 4, seed=3) == mk.decision_arms(f["decision"], 4, seed=3)
    assert rm.clamp_arms(f["decision"], seed=3) != rm.clamp_arms(f["decision"], seed=4)


def test_confirm_arms_add_two_controls_and_name_unknown_arms(fam, tmp_path):
    f, om = fam
    pos = {s: np.random.default_rng(2).normal(0, 1, (30, 8)) for s in SITES}
    npz = tmp_path / "decision.npz"
    rng = np.random.default_rng(5)
    np.savez(
        npz,
        **{f"A{i}": rng.normal(1, 1, (10, 8)) for i in range(4)},
        **{f"B{i}": rng.normal(size=(10, 8)) for i in range(4)},
    )
    cands = rm.candidate_arms(f, pos, npz, SITES, seed=0, om=om, first=3)
    assert not any(label.startswith(("random", "shuffled")) for label in cands)
    label = "mean-ablate L1-2 + clamp c=0 L0"
    arms = rm.confirm_arms(f, pos, npz, SITES, label, seed=0, om=om, first=3)
    assert [a.label for a in arms] == [label, f"random-0 {label}", f"shuffled {label}"]
    with pytest.raises(ConfigError, match="is not an arm; valid"):
        rm.confirm_arms(f, pos, npz, SITES, "no such arm", seed=0, om=om, first=3)


def test_gate2_arms_are_built_from_named_pieces(fam):
    f, om = fam
    pos_a = {s: np.random.default_rng(3).normal(0, 1, (30, 8)) for s in SITES}
    parts = rm.gate2_parts(f, om, pos_a, 3, seed=0)
    gate = Gate.between(SITES[1], np.ones(8), np.zeros(8), label="g")
    full = rm.gate2_arm(rm.FULL_ARM, parts, gate)
    assert full.gate == gate and full.label == f"gated {rm.FULL_ARM}"
    assert full.interventions == (*parts["L1-2"], *parts["L0"], *parts["om"])
    control = rm.gate2_arm(rm.FULL_ARM, rm.gate2_parts(f, om, pos_a, 3, seed=0, control="random"), gate, "random")
    assert control.label == f"gated random-0 {rm.FULL_ARM}"


def _run(path, clean_k, arms):
    data = {
        "arms": [{"label": "clean", "accept_ref": {"k": clean_k, "n": 40, "rate": clean_k / 40}}]
        + [{"label": a, "accept_ref": {"k": k, "n": 40, "rate": k / 40}} for a, k, _ in arms],
        "wer_change_faithful_sentences": {
            a: {"change": ch, "words": 500.0, "clips_changed": 1, "n_clips": 20} for a, _, ch in arms
        },
    }
    path.write_text(json.dumps({"steer": {"fresh-gate2-A": data}}))
    return path


def test_pooled_rule_picks_the_highest_share_under_the_wer_limit(tmp_path):
    sets = [
        _run(tmp_path / "a.json", 30, [("strong", 0, 0.02), ("mild", 3, 0.0), ("milder", 6, 0.0)]),
        _run(tmp_path / "b.json", 34, [("strong", 1, 0.01), ("mild", 4, 0.004), ("milder", 6, 0.0)]),
    ]
    rows = gate2_pool(sets)
    assert [r["label"] for r in rows] == ["clean", "strong", "mild", "milder"]
    mild = rows[2]
    assert (mild["k"], mild["n"]) == (7, 80) and mild["share"] == pytest.approx(1 - (7 / 80) / (64 / 80))
    assert mild["faithful_change"] == pytest.approx(0.002)
    assert gate2_choice(rows) == "mild"  # "strong" removes more but costs +1.5 points
    assert gate2_choice(rows, limit=-0.01) is None


def test_gate_rule_waits_for_its_three_steps_and_checks_controls():
    clean = {"label": "clean", "accept_ref": {"rate": 0.9, "ci_low": 0.8, "ci_high": 0.97}}
    arm = {"label": "gated x", "accept_ref": {"rate": 0.05, "ci_low": 0.0, "ci_high": 0.2}}
    ctrl = {"label": "gated random-0 x", "accept_ref": {"rate": 0.5, "ci_low": 0.3, "ci_high": 0.7}}
    a = {
        "arms": [clean, arm, ctrl],
        "effect_share": 0.94,
        "wer_change_faithful_sentences": {"gated x": {"change": 0.0}},
    }
    other = {"wer_change": {"gated x": {"change": 0.001}}}
    assert gate_rule({"fresh-gate-A": a}) is None
    verdict = gate_rule({"fresh-gate-A": a, "fresh-gate-B": other, "fresh-gate-C": other})
    assert verdict["checks"]["share >= 0.80"] and not verdict["checks"]["gated random-0 x flat"]
    assert verdict["pass"] is False  # a control that moves accept-ref fails the rule
