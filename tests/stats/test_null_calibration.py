"""A fast, seeded subset of the null-calibration benchmark (``benchmarks/null_calibration.py``).

Each probe's null and planted worlds run on a few dozen datasets: the false-positive rate of
every flag that is correct today must not be above its nominal level beyond Monte-Carlo error,
and each planted effect must be caught at least sometimes. Known-broken flags are ``xfail``
(strict), so the fix that repairs them turns the test red until the marker is removed.
Full run and how to read it: ``docs/validity.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from asr_audit.errors import ConfigError
from asr_audit.testing.null_worlds import Calibration, calibrate, format_table

N = 60


def _run(probe: str, n: int, seed: int, **options: Any) -> dict[str, Calibration]:
    """Rows by ``"flag: setting"``."""
    rows = calibrate(probe, np.random.default_rng([seed, 11]), n, **options)
    return {f"{r.flag}: {r.setting}": r for r in rows}


@pytest.fixture(scope="module")
def battery() -> dict[str, Calibration]:
    return _run("battery", N, 0, grid=(0.3,))


@pytest.fixture(scope="module")
def courtesy() -> dict[str, Calibration]:
    return _run("courtesy", 120, 0, grid=())


@pytest.fixture(scope="module")
def switch() -> dict[str, Calibration]:
    return _run("switch", 20, 0, grid=(0.9,))


def _calibrated(row: Calibration) -> None:
    """Not above its nominal rate beyond Monte-Carlo error (a few dozen datasets cannot show "ok")."""
    assert row.n_null > 0
    assert row.status != "FAIL", (
        f"{row.flag} ({row.setting}): FPR {row.fpr.rate:.3f} [{row.fpr.low:.3f}, "
        f"{row.fpr.high:.3f}] above nominal {row.level}"
    )


def _unbiased(row: Calibration, honest: float = 0.0) -> None:
    """The null datasets' mean estimate is the honest value within Monte-Carlo error."""
    assert row.null_mean is not None and row.null_se is not None
    assert abs(row.null_mean - honest) <= 4 * row.null_se + 0.002, (
        f"{row.flag} ({row.setting}): null estimate {row.null_mean:+.4f} (se {row.null_se:.4f}), honest {honest}"
    )


def _has_power(row: Calibration) -> None:
    assert row.power, f"{row.flag} ({row.setting}) has no planted world"
    k, n = row.power[max(row.power)]
    assert n > 0 and k > 0, f"{row.flag} ({row.setting}) never caught the largest planted effect"


def test_battery_difference_and_did_are_calibrated(battery: dict[str, Calibration]) -> None:
    for row in battery.values():
        if row.flag == "battery.row":
            continue  # test_battery_row_is_family_wise
        _calibrated(row)
        _unbiased(row)
        _has_power(row)


def test_masked_and_lift_are_calibrated() -> None:
    for probe in ("masked", "lift"):
        for row in _run(probe, 200, 0, grid=(0.3,)).values():
            _calibrated(row)
            _unbiased(row)
            _has_power(row)


def test_courtesy_with_spoken_text_is_calibrated(courtesy: dict[str, Calibration]) -> None:
    row = courtesy["courtesy.difference: eligibility from the spoken text"]
    _calibrated(row)
    _unbiased(row)
    _has_power(_run("courtesy", 20, 1, grid=(0.5,))["courtesy.difference: eligibility from the spoken text"])


def test_courtesy_without_spoken_text_is_unbiased(courtesy: dict[str, Calibration]) -> None:
    row = courtesy["courtesy.difference: eligibility from the panel without the tested model (no --spoken)"]
    _calibrated(row)
    _unbiased(row)


def test_switch_rate_is_calibrated(switch: dict[str, Calibration]) -> None:
    """A coin-flip writer and a model on the null's boundary (switch = 0.5) are not called trackers.

    (Issue 11 defect 6 reports ~11% "above chance" at a true switch rate of 0.5 for the
    minimum-arm interval; these null worlds measure it at or below 2.5%, see docs/validity.md.)
    """
    for row in switch.values():
        _calibrated(row)
        _has_power(row)
    null_mean = switch["switch.above_chance: one family row (mr)"].null_mean
    assert null_mean is not None and null_mean < 0.5  # a coin flip's min over arms


@pytest.fixture(scope="module")
def refdis() -> dict[str, Calibration]:
    return _run("refdis", 2, 0, n_clips=250, large=None)


def test_refdis_flags_need_a_verification(refdis: dict[str, Calibration]) -> None:
    """The contract: without a verification neither refdis flag fires, on honest models or copiers."""
    rows = [r for key, r in refdis.items() if key.endswith("verification: none")]
    assert len(rows) == 4 * 2 * 2  # 4 worlds x 2 flags x (tested, member)
    for r in rows:
        assert r.k_null == 0 and all(k == 0 for k, _ in r.power.values()), r.setting


def test_refdis_with_planted_truth_rarely_accuses_an_honest_model_and_catches_copiers(
    refdis: dict[str, Calibration],
) -> None:
    """Planted truth: the family world's 60% copier is seen; honest models are rarely flagged (not
    never: an edit joining a true error and a neighbouring mishearing reads "ref" for a model that
    hears better, docs/validity.md Results)."""
    truth = {k: r for k, r in refdis.items() if k.endswith("verification: truth")}
    assert truth["refdis.copies_reference: family: tested model, verification: truth"].power[0.6][0] > 0
    assert truth["refdis.copies_reference: family: tested model, verification: truth"].k_null == 0
    pooled = refdis["refdis.copies_reference: tested model (not in panel)"]
    assert pooled.n_null == 4 * 2 and pooled.k_null <= 1 and pooled.status != "FAIL"
    inflated = refdis["refdis.wer_inflated: tested model (not in panel)"]  # verified inflation (contract item 2)
    assert inflated.n_null == 4 * 2 and inflated.k_null == 0 and inflated.null_mean is not None


def test_the_old_consensus_rule_accuses_the_better_listener(refdis: dict[str, Calibration]) -> None:
    """What the issue saw: in the commercial world the honest, more accurate model is flagged by
    consensus accept-ref alone (the retired rule), on both datasets."""
    old = refdis["refdis.copies_reference: commercial: tested model, OLD consensus rule"]
    assert old.retired and old.status == "retired rule" and old.k_null == 2
    assert old.null_mean is not None and old.null_mean > 0.3


def test_refdis_rows_the_report_cites_never_fail(refdis: dict[str, Calibration]) -> None:
    for key in (
        "refdis.copies_reference: tested model (not in panel)",
        "refdis.copies_reference: panel member, leave-one-out",
        "refdis.wer_inflated: tested model (not in panel)",
        "refdis.wer_inflated: panel member, leave-one-out",
    ):
        _calibrated(refdis[key])


def test_a_three_member_panel_is_refused_for_leave_one_out() -> None:
    """Two voters are no consensus: the setting the full run measured at 34% false accusations with
    noisier panel models (docs/validity.md) is refused, not scored."""
    from asr_audit.errors import ConfigError
    from asr_audit.probes.predfiles.refdis import loo_quorum, preset_params

    assert loo_quorum(preset_params(preset="anchor", loo=True, min_panel=2)) == 3
    with pytest.raises(ConfigError, match="two are no consensus"):
        from asr_audit.options import Surface
        from asr_audit.probes.predfiles.refdis_options import RefdisOptions

        RefdisOptions.from_mapping({"min_panel": 2}, Surface.cli()).check_panel(3, Surface.cli())


def _row(
    flag: str,
    level: float,
    n: int,
    k: int,
    planted: float | None = None,
    power: dict[float, tuple[int, int]] | None = None,
) -> Calibration:
    return Calibration(
        probe="x",
        flag=flag,
        setting="s",
        level=level,
        null_world="",
        planted_world="",
        effect="d",
        n_null=n,
        k_null=k,
        planted=planted,
        power=power or {},
    )


def test_a_broken_flag_is_reported_as_fail() -> None:
    """The FAIL rule: a Wilson interval (z = 3) of the FPR wholly above the nominal level."""
    bad = _row("battery.difference", 0.05, 200, 30)
    table = format_table([bad])
    assert bad.status == "FAIL" and "0.150 [0.107, 0.206]" in table and "FAIL" in table
    # Monte-Carlo error at z = 3: 9 of 200 (4.5%) is not beyond it at a 2.5% level, 14 of 200 is
    assert _row("lift.positive", 0.025, 200, 9).status == "inconclusive"
    assert _row("lift.positive", 0.025, 200, 14).status == "FAIL"


def test_ok_is_a_test_that_sees_a_flag_at_one_and_a_half_times_nominal() -> None:
    """An "ok" needs the one-sided 95% upper bound below 1.5x the level: a flag running at 1.5x reads
    "ok" less than 5% of the time, one at its nominal rate with 500 datasets reads "ok"."""
    from math import comb

    def below(k: int, n: int, p: float) -> float:  # P(X <= k), X ~ Binomial(n, p)
        return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    assert _row("battery.difference", 0.05, 500, 25).status == "ok"
    assert _row("battery.difference", 0.05, 200, 10).status == "inconclusive"  # too few datasets to tell
    for level, n in ((0.05, 500), (0.025, 500), (0.025, 1000)):
        ok_k = [k for k in range(n + 1) if _row("x", level, n, k).status == "ok"]
        assert below(max(ok_k), n, 1.5 * level) < 0.05, (level, n)


def test_mde_is_the_smallest_effect_with_power_08() -> None:
    c = _row("battery.difference", 0.05, 10, 0, planted=0.2, power={0.1: (5, 10), 0.2: (8, 10), 0.3: (10, 10)})
    assert c.mde == 0.2 and c.to_dict()["power"] == 0.8


def test_unknown_probe_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown probe 'nope' for null calibration; valid: refdis"):
        calibrate("nope", np.random.default_rng(0), 1)


def test_same_seed_same_table() -> None:
    a = format_table(calibrate("lift", np.random.default_rng(3), 5))
    b = format_table(calibrate("lift", np.random.default_rng(3), 5))
    assert a == b


def test_lift_world_clusters_by_sentence_not_clip() -> None:
    """The lift world reads each span in its own clip and passes the sentence map, as the probe
    does: were the map ignored, every span would be its own cluster and the interval too narrow."""
    from asr_audit.probes.audio import lift

    seen: list[object] = []
    real = lift.summarize_model

    def spy(records, rng, n_resamples=1000, pairs=lift.PAIRS, sentences=None):
        seen.append(sentences)
        return real(records, rng, n_resamples, pairs, sentences)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lift, "summarize_model", spy)
        calibrate("lift", np.random.default_rng(0), 1, grid=())
    assert len(seen) == 2  # the raw lift world and the decoy-contrast world
    for sentences in seen:
        assert isinstance(sentences, dict) and len(set(sentences.values())) < len(sentences)
        assert all(clip.startswith(sentence + "/") for clip, sentence in sentences.items())


def test_stored_rates_come_from_the_settings_the_benchmark_measures(refdis: dict[str, Calibration]) -> None:
    """The shipped rates (``--write-data``) name the benchmark's own flags and settings, and the
    settings the report cites are among them, every one calibrated."""
    from asr_audit.stats.flags import (
        PANEL_MEMBER_LOO,
        TESTED_MODEL,
        measured_fpr,
    )

    for row in refdis.values():
        m = measured_fpr(row.flag, row.setting)
        assert m is not None, f"{row.flag} ({row.setting}) has no stored rate; regenerate with --write-data"
        assert m.n >= 200
    for flag, setting in (
        ("refdis.copies_reference", TESTED_MODEL),
        ("refdis.copies_reference", PANEL_MEMBER_LOO),
    ):
        m = measured_fpr(flag, setting)
        assert m is not None and m.n >= 1000 and m.high <= 0.025, (flag, setting)  # the rows the report cites


@pytest.fixture(scope="module")
def battery_refdis() -> dict[str, Calibration]:
    return _run("battery-refdis", 30, 0, grid=(0.3,))


def test_battery_refdis_with_panel_mining_is_calibrated(battery_refdis: dict[str, Calibration]) -> None:
    """The battery's refdis measure without --spoken (references corrected by the panel, leave-one-out
    for a tested member): honest behaviour in both conditions shows no difference (issue 11, defect 2)."""
    for key in (
        "battery.difference: no --spoken: tested model (not in panel)",
        "battery.difference: no --spoken: panel member, leave-one-out",
    ):
        _calibrated(battery_refdis[key])
        _unbiased(battery_refdis[key])
    _has_power(battery_refdis["battery.difference: no --spoken: tested model (not in panel)"])


def test_battery_refdis_world_sees_a_member_judging_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """The world can fail: were a tested panel member's items mined with its own outputs (no
    leave-one-out, defect 2), its null difference would be biased upwards."""
    from asr_audit.probes.battery import battery

    monkeypatch.setattr(battery, "panel_views", lambda panel, models: {m: tuple(panel) for m in models})
    row = _run("battery-refdis", 30, 0, grid=())["battery.difference: no --spoken: panel member, leave-one-out"]
    assert row.null_mean is not None and row.null_se is not None
    assert row.null_mean > 4 * row.null_se + 0.002, f"null estimate {row.null_mean:+.4f} (se {row.null_se:.4f})"


def test_battery_refdis_measures_honest_degradation(battery_refdis: dict[str, Calibration]) -> None:
    """Every degradation condition and the Holm row over them are measured for both roles; truncation
    (the audio loses its last words) moves accept-ref with no copying at all (docs/validity.md)."""
    from asr_audit.testing.null_worlds import DEGRADATIONS

    for who in ("tested model (not in panel)", "panel member, LOO"):
        for name in DEGRADATIONS:
            assert battery_refdis[f"battery.difference: no --spoken: {who}, honest degradation: {name}"].n_null == 30
        assert battery_refdis[f"battery.row: no --spoken: {who}, honest degradation: row over the 4 conditions (Holm)"]


def test_battery_row_is_family_wise(battery: dict[str, Calibration]) -> None:
    """The summary row over 6 conditions (Holm) holds 5%; the retired any-test row does not."""
    row = battery["battery.row: battery row: 6 conditions vs the original audio, Holm"]
    old = battery["battery.row: battery row: 6 conditions vs the original audio, OLD rule (any 5% test)"]
    _calibrated(row)
    assert old.retired and old.k_null >= row.k_null
    from asr_audit.report.summary import BATTERY_ROW_SETTING

    assert row.setting == BATTERY_ROW_SETTING


def test_shipped_rates_reproduce() -> None:
    """Drift: the data file's check run (a reduced run stored with the full one) recomputes exactly;
    the file carries its code hash, command, date and seeds."""
    import json

    from asr_audit.stats.flags import MEASURED_FPR_FILE
    from asr_audit.testing.null_worlds import CODE_FILES, EVALUATION_SEED, TUNING_SEEDS, check_run

    data = json.loads(MEASURED_FPR_FILE.read_text(encoding="utf-8"))
    assert data["seed"] == EVALUATION_SEED and EVALUATION_SEED not in TUNING_SEEDS
    assert data["tuning_seeds"] == list(TUNING_SEEDS) and data["code_files"] == list(CODE_FILES)
    assert len(data["code_hash"]) == 64 and data["command"].startswith("python benchmarks/null_calibration.py")
    assert check_run(data["seed"]) == data["check"], "the shipped rates no longer reproduce: rerun the full benchmark"
