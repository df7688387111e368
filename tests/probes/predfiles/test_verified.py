"""Verified edits: accept-ref split into copying (c) and hearing better (h) by a verification."""

from __future__ import annotations

import pytest

from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.verified import (
    AUDIO,
    LABELS_SOURCE,
    REFERENCE_RIGHT,
    REFERENCE_WRONG,
    TRUTH,
    UNSURE,
    EditLabel,
    Verification,
    edit_key,
    labels_from_pairs,
    verified_score,
    with_verification,
)
from asr_audit.stats.intervals import wilson


def _edit(clip: str, i: int, verdicts: dict[str, str], scored: tuple[str, ...] = ("m", "p1")) -> dict:
    return {
        "clip_id": clip,
        "kind": "substitution",
        "ref_indices": [i],
        "ref_tokens": [f"w{i}"],
        "alt_text": f"x{i}",
        "verdicts": verdicts,
        "scored": list(scored),
    }


def _result(edits: list[dict], loo: dict[str, list[dict]] | None = None) -> dict:
    return {"edits": edits, "loo_edits": loo or {}, "models": [{"model": "m"}, {"model": "p1"}]}


def test_copy_and_hears_better_are_separated() -> None:
    # 10 true errors where m writes the reference 2 times; 20 panel mishearings where m "agrees with
    # the reference" 18 times (it hears better): consensus accept-ref is high, c is not
    wrong = [_edit("a", i, {"m": "ref" if i < 2 else "consensus"}) for i in range(10)]
    right = [_edit("b", i, {"m": "ref" if i < 18 else "consensus"}) for i in range(20)]
    labels = {edit_key(e): EditLabel(label=REFERENCE_WRONG) for e in wrong}
    labels |= {edit_key(e): EditLabel(label=REFERENCE_RIGHT) for e in right}
    v = Verification(source=TRUTH, name="t", labels=labels)
    s = verified_score(_result(wrong + right), "m", v)
    assert (s.copy.k, s.copy.n) == (2, 10)
    assert (s.hears.k, s.hears.n) == (18, 20)
    assert (s.precision.k, s.precision.n) == (10, 30)
    assert s.copy_low == pytest.approx(wilson(2, 10).low)


def test_unlabelled_unsure_other_and_unscored_edits_do_not_count() -> None:
    edits = [
        _edit("a", 0, {"m": "ref"}),  # unlabelled
        _edit("a", 1, {"m": "ref"}),  # unsure
        _edit("a", 2, {"m": "other"}),  # labelled, not eligible
        _edit("a", 3, {"m": "ref"}, scored=("p1",)),  # not scored for m
        _edit("a", 4, {"m": "consensus"}),
    ]
    labels = labels_from_pairs(
        [(edit_key(edits[1]), UNSURE), (edit_key(edits[2]), REFERENCE_WRONG), (edit_key(edits[3]), REFERENCE_WRONG)]
        + [(edit_key(edits[4]), REFERENCE_WRONG)]
    )
    s = verified_score(_result(edits), "m", Verification(source=LABELS_SOURCE, name="l", labels=labels))
    assert (s.copy.k, s.copy.n) == (0, 1)
    assert s.n_edits == 4 and s.n_labelled == 2


def test_leave_one_out_edits_count_once() -> None:
    e = _edit("a", 0, {"m": "ref"})
    r = _result([e], loo={"m": [dict(e)]})
    labels = {edit_key(e): EditLabel(label=REFERENCE_WRONG)}
    assert verified_score(r, "m", Verification(source=TRUTH, name="t", labels=labels)).copy.n == 1


def test_inexact_source_bounds_copying_against_hearing_better() -> None:
    # a verifier of precision ~0.8: an observed 0.3 on its "reference-wrong" edits may be all
    # mislabelled hears-better edits, so the bound falls to 0
    edits = [_edit("a", i, {"m": "ref" if i < 15 else "consensus"}) for i in range(50)]
    labels = {edit_key(e): EditLabel(label=REFERENCE_WRONG) for e in edits}
    v = Verification(source=AUDIO, name="v", labels=labels, precision=wilson(80, 100))
    s = verified_score(_result(edits), "m", v)
    assert s.copy.rate == pytest.approx(0.3)
    assert s.copy_low == 0.0
    exact = verified_score(_result(edits), "m", Verification(source=TRUTH, name="t", labels=labels))
    assert exact.copy_low is not None and exact.copy_low > 0.15


def test_excluded_model_gets_nothing_verified() -> None:
    edits = [_edit("a", i, {"m": "ref"}) for i in range(12)]
    labels = {edit_key(e): EditLabel(label=REFERENCE_WRONG) for e in edits}
    v = Verification(source=AUDIO, name="v", labels=labels, precision=wilson(99, 100), excluded=("m",))
    s = verified_score(_result(edits), "m", v)
    assert s.excluded and s.copy.n == 0 and s.copy_low is None


def test_with_verification_adds_fields_and_keeps_input() -> None:
    edits = [_edit("a", 0, {"m": "ref", "p1": "consensus"})]
    r = _result(edits)
    labels = {edit_key(edits[0]): EditLabel(label=REFERENCE_WRONG)}
    out = with_verification(r, Verification(source=TRUTH, name="t", labels=labels))
    assert "verified" not in r["models"][0]
    assert out["models"][0]["verified"]["n_ref"] == 1
    assert out["verification"]["counts"][REFERENCE_WRONG] == 1


def test_weights_make_the_estimate_unbiased_for_the_population() -> None:
    # stratum A (weight 4): 1 of 2 copied; stratum B (weight 1): 0 of 2 -> (4*1) / (4*2 + 2) = 0.4
    edits = [_edit("a", i, {"m": "ref" if i == 0 else "consensus"}) for i in range(4)]
    labels = {edit_key(e): EditLabel(label=REFERENCE_WRONG, weight=4.0 if i < 2 else 1.0) for i, e in enumerate(edits)}
    s = verified_score(_result(edits), "m", Verification(source=LABELS_SOURCE, name="l", labels=labels))
    assert s.copy.rate == pytest.approx(0.4)
    assert s.copy.low <= 0.4 <= s.copy.high


@pytest.mark.parametrize("bad", [{"label": "maybe"}, {"label": REFERENCE_WRONG, "weight": 0.0}])
def test_bad_labels_are_refused(bad: dict) -> None:
    with pytest.raises(ConfigError):
        EditLabel(**bad)
