"""A fast, seeded subset of the null-calibration benchmark (``benchmarks/null_calibration.py``).

Each probe's null and planted worlds run on a few dozen datasets: the false-positive rate of
every flag that is correct today must not be above its nominal level beyond Monte-Carlo error,
and each planted effect must be caught at least sometimes. Known-broken flags are ``xfail``
(strict), so the fix that repairs them turns the test red until the marker is removed.
Full run and how to read it: ``docs/validity.md``.
"""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.errors import ConfigError
from asr_audit.testing.null_worlds import Calibration, calibrate, format_table

N = 60


def _run(probe: str, n: int, seed: int, **options: object) -> dict[str, Calibration]:
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
    assert row.n_null > 0
    assert row.status == "ok", (
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
    assert switch["switch.above_chance: one family row (mr)"].null_mean < 0.5  # a coin flip's min over arms


@pytest.fixture(scope="module")
def refdis() -> dict[str, Calibration]:
    return _run("refdis", 6, 0, n_clips=200, copy_grid=(0.3, 0.9))


def test_refdis_planted_copying_is_caught(refdis: dict[str, Calibration]) -> None:
    tested = refdis["refdis.copies_reference: tested model (not in panel)"]
    assert tested.power[0.3] == (6, 6)  # 30% copying on ~70 edits: caught every time
    assert refdis["refdis.copies_reference: panel member, leave-one-out"].power[0.3][0] > 0
    assert refdis["refdis.wer_inflated: tested model (not in panel)"].power[0.9][0] > 0  # copying 90% flatters WER


def test_refdis_tested_model_panel_member_and_wer_inflation_are_calibrated(refdis: dict[str, Calibration]) -> None:
    """Every refdis setting, including leave-one-out panel members (a 4-member panel: the smallest
    leave-one-out accepts); full run in docs/validity.md."""
    for key in (
        "refdis.copies_reference: tested model (not in panel)",
        "refdis.copies_reference: panel member, leave-one-out",
        "refdis.copies_reference: panel member, no leave-one-out",
        "refdis.wer_inflated: tested model (not in panel)",
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


def test_refdis_honest_models_accept_ref_is_near_zero(refdis: dict[str, Calibration]) -> None:
    for key in (
        "refdis.copies_reference: tested model (not in panel)",
        "refdis.copies_reference: panel member, leave-one-out",
    ):
        row = refdis[key]
        assert row.null_mean is not None and row.null_mean <= 0.02, f"{key}: mean accept-ref {row.null_mean:.3f}"


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
    """The FAIL rule: a Wilson interval of the FPR wholly above the nominal level."""
    bad = _row("battery.difference", 0.05, 200, 30)
    ok = _row("battery.difference", 0.05, 200, 14)
    assert (bad.status, ok.status) == ("FAIL", "ok")
    table = format_table([bad, ok])
    assert "0.150 [0.107, 0.206]" in table and "FAIL" in table
    # Monte-Carlo error at z = 3: 9 of 200 (4.5%) is not beyond it at a 2.5% level, 14 of 200 is
    assert _row("lift.positive", 0.025, 200, 9).status == "ok"
    assert _row("lift.positive", 0.025, 200, 14).status == "FAIL"


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
        assert m.n >= 300 and m.low <= row.level
    for flag, setting in (
        ("refdis.copies_reference", TESTED_MODEL),
        ("refdis.copies_reference", PANEL_MEMBER_LOO),
        ("refdis.wer_inflated", TESTED_MODEL),
    ):
        assert measured_fpr(flag, setting) is not None, (flag, setting)


@pytest.fixture(scope="module")
def battery_refdis() -> dict[str, Calibration]:
    return _run("battery-refdis", 30, 0, grid=(0.3,))


def test_battery_refdis_with_panel_mining_is_calibrated(battery_refdis: dict[str, Calibration]) -> None:
    """The battery's refdis measure without --spoken (references corrected by the panel, leave-one-out
    for a tested member): honest behaviour in both conditions shows no difference (issue 11, defect 2)."""
    for row in battery_refdis.values():
        _calibrated(row)
        _unbiased(row)
    _has_power(battery_refdis["battery.difference: no --spoken: tested model (not in panel)"])


def test_battery_refdis_world_sees_a_member_judging_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """The world can fail: were a tested panel member's items mined with its own outputs (no
    leave-one-out, defect 2), its null difference would be biased upwards."""
    from asr_audit.probes.battery import battery

    monkeypatch.setattr(battery, "panel_views", lambda panel, models: {m: tuple(panel) for m in models})
    row = _run("battery-refdis", 30, 0, grid=())["battery.difference: no --spoken: panel member, leave-one-out"]
    assert row.null_mean is not None and row.null_se is not None
    assert row.null_mean > 4 * row.null_se + 0.002, f"null estimate {row.null_mean:+.4f} (se {row.null_se:.4f})"
