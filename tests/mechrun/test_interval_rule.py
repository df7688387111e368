"""The eighth session's rule on interval bounds and the paired accept-ref change it judges controls
by (``mechrun.measures.interval_rule``, ``accept_ref_changes``; issue 27: criteria on interval
bounds, controls where the clean rate is below 1.0 so that a control can fail)."""

from __future__ import annotations

import copy
from typing import Any

from asr_audit.calib.truth import TruthItem
from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.mechrun.measures import accept_ref_changes, interval_rule
from asr_audit.mechrun.steer import SteerArm, SteerResult
from asr_audit.stats.intervals import wilson


def _item(cid: str) -> TruthItem:
    # the record says "thank you very much" where the speaker said "very much"
    return TruthItem(
        cid, cid, 0, "spurious_insertion_in_reference", "opener", "start", 0, 2, 4, "Thank you", "",
        ("thank", "you"), (),
    )  # fmt: skip


def _result(arm_hyps: dict[str, str]) -> tuple[SteerResult, list[TruthItem], Corpus]:
    ids = [f"c{i}" for i in range(20)]
    clips = tuple(Clip(c, "Thank you very much.", f"/x/{c}.wav", speaker="A") for c in ids)
    clean = {c: ("thank you very much" if i < 10 else "very much") for i, c in enumerate(ids)}
    hyps = {"clean": clean, "random-0": clean, "arm": {**clean, **arm_hyps}}
    res = SteerResult({}, {}, "", "x", tuple(_arm(label) for label in ("clean", "random-0", "arm")), hyps)
    return res, [_item(c) for c in ids], Corpus("x", "test", "", clips)


def _arm(label: str) -> SteerArm:
    return SteerArm(label, None, wilson(0, 0), wilson(0, 0), 0, 0, 0, None, 0)


def test_accept_ref_change_is_paired_and_can_move_either_way() -> None:
    res, items, corpus = _result({"c0": "very much", "c1": "very much", "c15": "thank you very much"})
    out = accept_ref_changes(res, items, corpus, seed=0)
    assert out["random-0"] == {"change": 0.0, "low": 0.0, "high": 0.0, "n_sites": 20}  # nothing moved: no spread
    assert out["arm"]["change"] == -0.05  # 2 sites ref -> spoken, 1 spoken -> ref, of 20
    assert out["arm"]["low"] < -0.05 < 0 < out["arm"]["high"]


def _steps(control_change: float, arm_high: float = 0.1, wer_high: float = 0.005) -> dict[str, Any]:
    clean = {"label": "clean", "accept_ref": {"rate": 0.95, "ci_low": 0.88, "ci_high": 0.98}}
    arm = {"label": "gated x", "accept_ref": {"rate": 0.05, "ci_low": 0.02, "ci_high": arm_high}}
    ctrl = {"label": "gated random-0 x", "accept_ref": {"rate": 0.95, "ci_low": 0.88, "ci_high": 0.98}}
    change = {"gated x": {"change": 0.0, "low": 0.0, "high": wer_high}}
    moved = {
        "gated random-0 x": {"change": control_change, "low": control_change - 0.03, "high": control_change + 0.03}
    }
    a: dict[str, Any] = {
        "arms": [clean, arm, ctrl],
        "wer_change_faithful_sentences": change,
        "accept_ref_change": moved,
    }
    d = copy.deepcopy(a) | {"effect_share": 0.9}
    d["arms"][0]["accept_ref"]["rate"] = 0.5  # the unseen voice: clean below 1.0
    return {
        "fresh-gate-A": a,
        "fresh-gate-B": {"wer_change": change},
        "fresh-gate-C": {"wer_change": change},
        "fresh-gate-D": d,
    }


def _verdict(steps: dict[str, Any]) -> dict[str, Any]:
    verdict = interval_rule(steps)
    assert verdict is not None
    return verdict


def test_interval_rule_judges_bounds_not_points() -> None:
    steps = _steps(0.0)
    assert interval_rule({k: v for k, v in steps.items() if k != "fresh-gate-D"}) is None  # waits for D
    assert _verdict(steps)["pass"] is True
    assert _verdict(_steps(0.0, arm_high=0.2))["pass"] is False  # 0.20 > 0.2 x 0.95: the upper end counts
    assert _verdict(_steps(0.0, wer_high=0.011))["pass"] is False  # +1.1 point upper end, point +0.0
    verdict = _verdict(_steps(-0.09))  # a control that removes 9 points: its interval reaches -0.12
    assert verdict["pass"] is False
    failed = [k for k, ok in verdict["checks"].items() if not ok]
    assert failed == [
        "control gated random-0 x on A: accept-ref change within +-0.10",
        "control gated random-0 x on D: accept-ref change within +-0.10",
    ]
