"""Probe options records: built from CLI flags or a TOML table by the same code, checked in one
place, and a bad value named as the user wrote it (the flag, or the spec's table and field)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from asr_audit.calib.probe import MinerCalibrationOptions
from asr_audit.errors import ConfigError
from asr_audit.options import OptionError, Surface
from asr_audit.probes.audio.continuation import ContinuationOptions
from asr_audit.probes.audio.lift import LiftOptions
from asr_audit.probes.audio.masked import MaskedOptions
from asr_audit.probes.battery.battery import BatteryOptions
from asr_audit.probes.predfiles.ortho import SwitchRateOptions
from asr_audit.probes.predfiles.refdis import RefdisParams, preset_params
from asr_audit.probes.predfiles.refdis_options import RefdisOptions

Build = Callable[[Mapping[str, Any], Surface], Any]


def _courtesy(values: Mapping[str, Any], surface: Surface) -> BatteryOptions:
    return BatteryOptions.from_mapping(values, surface, measure="courtesy")


COND = {"conditions": ["noise:10db"]}
# (probe table, builder, good values)
RECORDS: list[tuple[str, Build, dict[str, Any]]] = [
    (
        "refdis",
        RefdisOptions.from_mapping,
        {
            "preset": "paper",
            "majority": 0.7,
            "include_middle": False,
            "min_run_len": 2,
            "min_ref_match": 0.4,
            "min_consensus_cer": 0.2,
            "min_panel": 2,
            "loo": False,
            "resamples": 50,
        },
    ),
    ("switch_rate", SwitchRateOptions.from_mapping, {"families": ["honorific", "mr"], "min_per_arm": 3}),
    ("switch_rate", SwitchRateOptions.from_mapping, {"min_per_arm": 3, "denominator": "paper"}),
    (
        "masked",
        MaskedOptions.from_mapping,
        {"kind": "name", "method": "noise", "pad": 0.1, "gate_max_wer": 0.5, "min_duration": 0.2, "aligner": "whisper"},
    ),
    (
        "lift",
        LiftOptions.from_mapping,
        {"spans": "full", "method": "cut", "aligner": "sphinx", "resamples": 10, "gate_max_wer": 0.5},
    ),
    ("continue", ContinuationOptions.from_mapping, {"hide_words": 2, "extra_tokens": 8, "aligner": "sphinx"}),
    (
        "battery",
        BatteryOptions.from_mapping,
        {
            "measure": "ortho",
            "conditions": ["noise:10db", "reverb:0.6"],
            "donor_conv": ["talk.wav"],
            "spoken": "spoken.jsonl",
            "resamples": 100,
            "preset": "paper",
            "min_ref_match": 0.3,
            "families": ["mr"],
        },
    ),
]

# (probe table, builder, values with one bad field, that field, how its value is written in TOML)
BAD: list[tuple[str, Build, dict[str, Any], str, str]] = [
    ("refdis", RefdisOptions.from_mapping, {"majority": 1.5}, "majority", "1.5"),
    ("refdis", RefdisOptions.from_mapping, {"min_panel": 0}, "min_panel", "0"),
    ("refdis", RefdisOptions.from_mapping, {"min_run_len": 0}, "min_run_len", "0"),
    ("refdis", RefdisOptions.from_mapping, {"min_ref_match": 2.0}, "min_ref_match", "2.0"),
    ("refdis", RefdisOptions.from_mapping, {"min_consensus_cer": -0.1}, "min_consensus_cer", "-0.1"),
    ("refdis", RefdisOptions.from_mapping, {"preset": "bogus"}, "preset", '"bogus"'),
    ("refdis", RefdisOptions.from_mapping, {"resamples": 0}, "resamples", "0"),
    ("refdis", RefdisOptions.from_mapping, {"majority": "high"}, "majority", '"high"'),
    ("refdis", RefdisOptions.from_mapping, {"loo": 1}, "loo", "1"),
    ("switch_rate", SwitchRateOptions.from_mapping, {"min_per_arm": 0}, "min_per_arm", "0"),
    (
        "switch_rate",
        SwitchRateOptions.from_mapping,
        {"families": ["honorific", "bogus"]},
        "families",
        '["honorific", "bogus"]',
    ),
    ("switch_rate", SwitchRateOptions.from_mapping, {"denominator": "all"}, "denominator", '"all"'),
    ("masked", MaskedOptions.from_mapping, {"method": "blur"}, "method", '"blur"'),
    ("masked", MaskedOptions.from_mapping, {"kind": "colour"}, "kind", '"colour"'),
    ("masked", MaskedOptions.from_mapping, {"pad": -1.0}, "pad", "-1.0"),
    ("masked", MaskedOptions.from_mapping, {"gate_max_wer": -0.5}, "gate_max_wer", "-0.5"),
    ("masked", MaskedOptions.from_mapping, {"min_duration": -0.1}, "min_duration", "-0.1"),
    ("masked", MaskedOptions.from_mapping, {"max_per_clip": 0}, "max_per_clip", "0"),
    ("masked", MaskedOptions.from_mapping, {"aligner": "ouija"}, "aligner", '"ouija"'),
    ("lift", LiftOptions.from_mapping, {"spans": "everything"}, "spans", '"everything"'),
    ("lift", LiftOptions.from_mapping, {"method": "blur"}, "method", '"blur"'),
    ("lift", LiftOptions.from_mapping, {"resamples": 0}, "resamples", "0"),
    ("lift", LiftOptions.from_mapping, {"gate_max_wer": -0.5}, "gate_max_wer", "-0.5"),
    ("continue", ContinuationOptions.from_mapping, {"hide_words": 0}, "hide_words", "0"),
    ("continue", ContinuationOptions.from_mapping, {"extra_tokens": 0}, "extra_tokens", "0"),
    ("battery", BatteryOptions.from_mapping, {**COND, "measure": "vibes"}, "measure", '"vibes"'),
    ("battery", BatteryOptions.from_mapping, {"conditions": ["noise:loud"]}, "conditions", '["noise:loud"]'),
    ("battery", BatteryOptions.from_mapping, {**COND, "resamples": 0}, "resamples", "0"),
    ("battery", BatteryOptions.from_mapping, {**COND, "min_ref_match": 1.5}, "min_ref_match", "1.5"),
    ("battery", BatteryOptions.from_mapping, {**COND, "preset": "bogus"}, "preset", '"bogus"'),
    ("battery", BatteryOptions.from_mapping, {**COND, "families": ["bogus"]}, "families", '["bogus"]'),
    ("courtesy", _courtesy, {**COND, "study": "yes"}, "study", '"yes"'),
    ("miner_calibration", MinerCalibrationOptions.from_mapping, {"truth": "calib", "majority": 0.0}, "majority", "0.0"),
]


@pytest.mark.parametrize(
    ("probe", "build", "values", "field", "written"), BAD, ids=[f"{b[0]}-{b[3]}-{i}" for i, b in enumerate(BAD)]
)
def test_bad_value_names_the_toml_field(
    probe: str, build: Build, values: dict[str, Any], field: str, written: str
) -> None:
    with pytest.raises(OptionError) as info:
        build(values, Surface.toml("audit.toml", f"probes.{probe}"))
    msg = str(info.value)
    assert msg.startswith(f"audit.toml: [probes.{probe}] {field} = {written} "), msg
    assert "; fix: " in msg and "\n" not in msg and "--" not in msg.split("; fix:")[0]
    assert info.value.field == field


@pytest.mark.parametrize(
    ("probe", "build", "values", "field", "written"), BAD, ids=[f"{b[0]}-{b[3]}-{i}" for i, b in enumerate(BAD)]
)
def test_bad_value_names_the_flag(probe: str, build: Build, values: dict[str, Any], field: str, written: str) -> None:
    with pytest.raises(ConfigError) as info:
        build(values, Surface.cli())
    msg = str(info.value)
    assert msg.startswith("--" + field.replace("_", "-") + " "), msg
    assert "; fix: " in msg and "\n" not in msg and "[probes" not in msg and "audit.toml" not in msg


def test_a_renamed_flag_is_named_as_typed() -> None:
    with pytest.raises(ConfigError, match=r"^--probe 'vibes' is unknown \(valid: courtesy, masked, ortho, refdis\)"):
        BatteryOptions.from_mapping({**COND, "measure": "vibes"}, Surface.cli(measure="--probe"))


@pytest.mark.parametrize(("probe", "build", "values"), RECORDS, ids=[r[0] for r in RECORDS])
def test_cli_and_toml_build_the_same_record(probe: str, build: Build, values: dict[str, Any]) -> None:
    toml = build(values, Surface.toml("audit.toml", f"probes.{probe}"))
    # the CLI passes every flag; an optional flag left unset arrives as None
    cli = build({**values, "models": None} if probe in ("masked", "lift", "battery") else values, Surface.cli())
    assert cli == toml
    assert toml != build(dict(COND) if probe == "battery" else {}, Surface.cli())  # the values were not ignored


def test_unset_flags_take_the_defaults() -> None:
    flags = {
        "preset": "anchor",
        "majority": None,
        "include_middle": None,
        "min_run_len": None,
        "min_ref_match": None,
        "min_consensus_cer": None,
        "min_panel": None,
        "loo": True,
        "resamples": 1000,
    }
    assert RefdisOptions.from_mapping(flags, Surface.cli()) == RefdisOptions(mining=preset_params("anchor"))
    paper = RefdisOptions.from_mapping({"preset": "paper", "min_panel": 2}, Surface.toml("a.toml", "probes.refdis"))
    assert paper.mining == RefdisParams(preset="paper", majority=0.75, include_middle=True, min_panel=2)


def test_unknown_field_lists_the_known_ones() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^a\.toml: \[probes\.switch_rate\] colour = 1 is not an option of "
        r"switch_rate; fix: use denominator, families, language, min_per_arm, models$",
    ):
        SwitchRateOptions.from_mapping({"colour": 1}, Surface.toml("a.toml", "probes.switch_rate"))


def test_battery_needs_conditions() -> None:
    with pytest.raises(ConfigError, match=r"^a\.toml: \[probes\.courtesy\] conditions is missing; fix: e\.g\."):
        _courtesy({}, Surface.toml("a.toml", "probes.courtesy"))
    with pytest.raises(ConfigError, match=r"\[probes\.courtesy\] measure = \"refdis\" is not an option of courtesy"):
        _courtesy({**COND, "measure": "refdis"}, Surface.toml("a.toml", "probes.courtesy"))


def test_an_override_is_named_in_its_own_table() -> None:
    surface = Surface.toml("a.toml", "probes.refdis", {"min_panel": "corpus[1].probes.refdis"})
    with pytest.raises(ConfigError, match=r"^a\.toml: \[corpus\[1\]\.probes\.refdis\] min_panel = 0 must be >= 1"):
        RefdisOptions.from_mapping({"majority": 0.8, "min_panel": 0}, surface)


def test_records_are_frozen_and_keyword_only() -> None:
    from dataclasses import FrozenInstanceError

    opts = SwitchRateOptions(min_per_arm=2)
    with pytest.raises(FrozenInstanceError):
        opts.min_per_arm = 3  # type: ignore[misc]
    for cls in (RefdisParams, RefdisOptions, SwitchRateOptions, MaskedOptions, LiftOptions, ContinuationOptions):
        with pytest.raises(TypeError):
            cls(0.5)  # type: ignore[call-arg, arg-type]  # the wrong call under test
    # constructed directly (library use), a record speaks the CLI's flags
    with pytest.raises(ConfigError, match=r"^--majority 2 must be in \(0, 1\]; fix: "):
        RefdisParams(majority=2)
