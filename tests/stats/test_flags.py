"""The flag registry: each rule on its boundary cases, and the refdis rule equal to the report's."""

from __future__ import annotations

import pytest

from asr_audit.errors import ConfigError
from asr_audit.stats import flags
from asr_audit.stats.flags import (
    FLAGS,
    available_flags,
    consensus_copying,
    consensus_inflated,
    copies_reference,
    difference_flagged,
    get_flag,
    lift_positive,
    switch_above_chance,
    wer_inflated,
)
from asr_audit.stats.intervals import wilson


def test_consensus_copying_matches_the_report_verdict() -> None:
    """The old claim level (n >= 10, lower bound >= 5%) is exactly where the report's sentence on
    consensus accept-ref stops saying "transcribes" / "too few" / "not distinguishable"."""
    from asr_audit.report import verdict
    from asr_audit.stats.intervals import wilson

    assert flags.MIN_EDITS_FOR_A_CLAIM == verdict.MIN_EDITS_FOR_A_CLAIM
    for n, k in [(9, 9), (10, 3), (10, 4), (40, 6), (40, 7), (100, 9), (100, 10), (300, 30), (10000, 700)]:
        w = wilson(k, n)
        entry = {"n_eligible": n, "n_ref": k, "accept_ref": w.rate, "ci_low": w.low, "ci_high": w.high}
        sentence = verdict.acceptref_sentence(entry)
        assert consensus_copying(entry) == ("unverified consensus edits" in sentence), (n, k, sentence)
        assert not copies_reference(entry), "consensus accept-ref alone never flags"


def _verified(k: int, n: int, **extra: object) -> dict:
    w = wilson(k, n)
    return {"n_eligible": n, "n_ref": k, "ci_low": w.low, "ci_high": w.high, "copy_low": w.low, **extra}


def test_copies_reference_reads_only_verified_edits() -> None:
    consensus = {"n_eligible": 300, "n_ref": 220, "ci_low": 0.68, "ci_high": 0.78}
    assert not copies_reference(consensus)
    assert copies_reference({**consensus, "verified": _verified(6, 20)})
    assert not copies_reference({**consensus, "verified": _verified(9, 9)})  # too few verified edits
    assert not copies_reference({**consensus, "verified": _verified(0, 40)})
    # an inexact source whose precision bound pulls c's lower bound under 5%
    assert not copies_reference({**consensus, "verified": {**_verified(8, 40), "copy_low": 0.0}})
    assert not copies_reference({**consensus, "verified": {**_verified(20, 40), "excluded": True}})


def test_wer_inflated_needs_the_verified_interval_above_zero() -> None:
    def m(low: float, n: int = 20) -> dict:
        return {"wer_inflation_ci_low": 5.0, "verified": {"wer_inflation_ci_low": low, "wer_n_clips": n}}

    assert wer_inflated(m(0.1))
    assert not wer_inflated(m(0.0))
    assert not wer_inflated(m(-1.0))
    assert not wer_inflated(m(0.5, 0))
    assert not wer_inflated({"wer_inflation_ci_low": 0.5, "wer_n_clips": 20})  # consensus only
    assert consensus_inflated({"wer_inflation_ci_low": 0.5, "wer_n_clips": 20})
    assert not consensus_inflated({"wer_inflation_ci_low": None, "wer_n_clips": 20})


def test_battery_row_is_holm_over_the_conditions() -> None:
    """One clear condition flags the row; six borderline ones (each p ~ 0.047) do not; a
    condition over too few sentences does not count."""
    from asr_audit.stats.flags import battery_row_flagged, difference_p_value, holm_rejected

    d = {"n_items": 80, "n_clusters": 40, "estimate": 0.1, "ci_high": 0.2}
    clear, borderline = d | {"ci_low": 0.05}, d | {"ci_low": 0.01}
    assert battery_row_flagged([clear]) and battery_row_flagged([clear, *[borderline] * 5])
    assert not battery_row_flagged([borderline] * 6) and not battery_row_flagged([])
    assert holm_rejected([borderline, clear, borderline]) == [1]
    assert not battery_row_flagged([d | {"ci_low": 0.09, "n_clusters": 12}])
    negative = {"n_items": 80, "n_clusters": 40, "estimate": -0.1, "ci_low": -0.2, "ci_high": -0.05}
    assert difference_p_value(negative) == difference_p_value(clear) and battery_row_flagged([negative])


def test_difference_flagged_is_two_sided_and_ignores_empty_comparisons() -> None:
    assert difference_flagged({"n_items": 30, "ci_low": 0.01, "ci_high": 0.2})
    assert difference_flagged({"n_items": 30, "ci_low": -0.3, "ci_high": -0.01})
    assert not difference_flagged({"n_items": 30, "ci_low": 0.0, "ci_high": 0.2})
    assert not difference_flagged({"n_items": 0, "ci_low": 0.5, "ci_high": 0.6})


def test_switch_above_chance_follows_the_probe_and_skips_undefined_rows() -> None:
    assert switch_above_chance({"switch": 0.8, "ci_low": 0.6, "ci_above_chance": True})
    assert not switch_above_chance({"switch": 0.8, "ci_low": 0.6, "ci_above_chance": False})
    assert switch_above_chance({"switch": 0.8, "ci_low": 0.55})
    assert not switch_above_chance({"switch": 0.6, "ci_low": 0.5})
    assert not switch_above_chance({"switch": None, "ci_low": None, "ci_above_chance": None})


def test_lift_positive() -> None:
    assert lift_positive({"mean": 0.1, "ci_low": 0.02, "ci_high": 0.2, "n": 40})
    assert not lift_positive({"mean": 0.1, "ci_low": -0.01, "ci_high": 0.2, "n": 40})
    assert not lift_positive({"mean": None, "ci_low": None, "ci_high": None, "n": 0})


def test_registry_levels_and_unknown_names() -> None:
    assert available_flags() == list(FLAGS)
    for f in FLAGS.values():
        assert f.level == (0.05 if f.sided in ("two-sided", "family-wise") else 0.025)
        assert f.to_dict()["name"] == f.name
    with pytest.raises(ConfigError, match="unknown flag 'nope'; valid: refdis.copies_reference"):
        get_flag("nope")


def test_claims_cite_the_measured_rate_of_their_setting(tmp_path) -> None:
    """A copying or inflation claim (on verified edits) ends with the stored false-positive rate of
    the flag in the setting the model was scored in; a sentence that accuses nobody cites nothing,
    and a consensus measurement accuses nobody."""
    from asr_audit.report import verdict
    from asr_audit.stats.flags import PANEL_MEMBER_LOO, TESTED_MODEL, measured_fpr

    verified = {**_verified(12, 40), "source": "planted truth", "accept_ref": 0.3}
    copier = {"n_eligible": 200, "n_ref": 60, "accept_ref": 0.3, "ci_low": 0.24, "ci_high": 0.37}
    for entry, setting in (
        ({**copier, "verified": verified}, TESTED_MODEL),
        ({**copier, "verified": verified, "in_panel": True}, PANEL_MEMBER_LOO),
    ):
        m = measured_fpr("refdis.copies_reference", setting)
        assert m is not None
        sentence = verdict.verified_sentence(entry)
        assert sentence is not None and sentence.endswith(m.note()), (setting, sentence)
        assert f"{100 * m.rate:.1f}%" in sentence and f"in {m.n} simulated datasets" in sentence
        assert "false-positive" not in verdict.acceptref_sentence(entry)
        # verified edits decide: the consensus sentence does not ask for them
        assert verdict.acceptref_sentence(entry).endswith("edits whose verified part decides")
    honest = {"n_eligible": 200, "n_ref": 2, "accept_ref": 0.01, "ci_low": 0.003, "ci_high": 0.036}
    assert "false-positive" not in verdict.acceptref_sentence(honest)
    inflated = {"wer_inflation": 1.4, "wer_inflation_ci_low": 0.9, "wer_inflation_ci_high": 1.9}
    assert "false-positive" not in verdict.inflation_sentence(inflated)  # consensus corrections: no claim
    v_inflated = {**inflated, "wer_n_clips": 40}
    m = measured_fpr("refdis.wer_inflated", TESTED_MODEL)
    assert m is not None and verdict.inflation_sentence({**inflated, "verified": v_inflated}).endswith(m.note())
    low = {**v_inflated, "wer_inflation_ci_low": -0.1}
    assert "false-positive" not in verdict.inflation_sentence({**inflated, "verified": low})
    both = {**verified, **v_inflated}
    line = verdict.model_verdict({**copier, **inflated, "verified": both, "in_panel": True}, loo=False)
    assert line.count("not calibrated: a panel member scored without leave-one-out") == 2 and line.endswith(".")


def test_stored_rates_load_from_the_benchmark_file(tmp_path) -> None:
    """The file the benchmark's ``--write-data`` writes is what :func:`measured_fpr` reads."""
    import importlib.util
    from pathlib import Path

    from asr_audit.testing.null_worlds import Calibration

    spec = importlib.util.spec_from_file_location(
        "null_calibration", Path(__file__).parents[2] / "benchmarks" / "null_calibration.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    row = Calibration(
        probe="refdis",
        flag="refdis.copies_reference",
        setting="s",
        level=0.025,
        null_world="",
        planted_world="",
        effect="",
        n_null=400,
        k_null=6,
        planted=None,
    )
    path = tmp_path / "rates.json"
    bench.write_data([row], {"refdis": 400}, 7, path, check={})
    got = flags._measured(path)[("refdis.copies_reference", "s")]
    assert (got.k, got.n, got.seed, got.n_datasets) == (6, 400, 7, 400)
    import json

    data = json.loads(path.read_text())
    assert data["code_hash"] and data["tuning_seeds"] and data["command"].startswith("python benchmarks/")
    assert got.note().startswith("(flag's false-positive rate 1.5% [0.7%, 3.2%] in 400 simulated datasets")
