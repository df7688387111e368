"""Probe options in an experiment spec: checked when the spec loads, every bad value named as the
TOML field it came from; and a spec and the CLI verb with the same values compute the same result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.errors import ConfigError
from asr_audit.runner.spec import load_spec

BASE = """
seed = 3
output = "out"
[[corpus]]
name = "vox"
predictions = "preds"
panel = ["a", "b", "c"]
{override}
[[corpus]]
name = "audio"
spec = "clips.jsonl"
[[model]]
name = "tiny"
spec = "whisper-tiny.en"
{probes}
"""


def load(tmp_path: Path, probes: str, override: str = "") -> object:
    p = tmp_path / "audit.toml"
    p.write_text(BASE.format(probes=probes, override=override))
    return load_spec(p)


@pytest.mark.parametrize(
    ("probes", "override", "expected"),
    [
        ("[probes.refdis]\nmajority = 2.0", "", r"\[probes\.refdis\] majority = 2\.0 must be in \(0, 1\]; fix: "),
        (
            '[probes.refdis]\nmajority = "high"',
            "",
            r"\[probes\.refdis\] majority = \"high\" is a str, expected a number",
        ),
        (
            '[probes.refdis]\npreset = "bogus"',
            "",
            r"\[probes\.refdis\] preset = \"bogus\" is unknown \(valid: anchor, paper\)",
        ),
        ("[probes.refdis]\nresamples = 0", "", r"\[probes\.refdis\] resamples = 0 must be >= 1"),
        (
            "[probes.refdis]",
            "[corpus.probes.refdis]\nmin_panel = 0",
            r"\[corpus\[0\]\.probes\.refdis\] min_panel = 0 must be >= 1",
        ),
        (
            '[probes.switch_rate]\nfamilies = ["bogus"]',
            "",
            r"\[probes\.switch_rate\] families = \[\"bogus\"\] names an unknown convention family 'bogus'",
        ),
        ("[probes.switch_rate]\nmin_per_arm = 0", "", r"\[probes\.switch_rate\] min_per_arm = 0 must be >= 1"),
        (
            '[probes.masked]\nmethod = "blur"',
            "",
            r"\[probes\.masked\] method = \"blur\" is unknown \(valid: silence, noise, cut\)",
        ),
        ('[probes.lift]\nspans = "refdis"', "", r"\[probes\.lift\] spans = \"refdis\" needs a refdis result file"),
        ('[probes.battery]\nmeasure = "refdis"', "", r"\[probes\.battery\] conditions is missing"),
        (
            '[probes.courtesy]\nconditions = ["noise:loud"]',
            "",
            r"\[probes\.courtesy\] conditions = \[\"noise:loud\"\] does not parse .*grammar:",
        ),
        (
            "[probes.miner_calibration]\ntruth = 3",
            "",
            r"\[probes\.miner_calibration\] truth = 3 is a int, expected a string",
        ),
    ],
)
def test_bad_probe_value_fails_at_load_naming_the_toml_field(
    tmp_path: Path, probes: str, override: str, expected: str
) -> None:
    with pytest.raises(ConfigError, match=expected) as info:
        load(tmp_path, probes, override)
    msg = str(info.value)
    assert msg.startswith(f"{tmp_path / 'audit.toml'}: ") and "\n" not in msg
    assert "--" not in msg.split("; fix:")[0]  # a spec user is never told a CLI flag


def test_good_probe_values_load(tmp_path: Path) -> None:
    spec = load(
        tmp_path,
        '[probes.refdis]\npreset = "paper"\nmin_panel = 2\n[probes.switch_rate]\nfamilies = ["mr"]\n'
        '[probes.masked]\npad = 0\n[probes.battery]\nconditions = ["noise:10db"]',
        "[corpus.probes.refdis]\nskip = true",
    )
    assert set(spec.probes) == {"refdis", "switch_rate", "masked", "battery"}  # type: ignore[attr-defined]


def test_an_audio_probe_on_prediction_files_names_the_corpus_table() -> None:
    from asr_audit.corpus.predfiles import PredictionSet
    from asr_audit.options import Surface
    from asr_audit.probes.core.probe import ProbeInputs, get_probe
    from asr_audit.runner.probes import load_probes

    load_probes()
    preds = ProbeInputs(corpus="preds", predictions=PredictionSet((), {}, "preds", "p", {}))
    with pytest.raises(ConfigError, match=r"has prediction files only; fix: give the corpus a manifest") as info:
        get_probe("lift")(preds, {}, Surface.toml("s.toml", "probes.lift"))
    assert "[[corpora]]" not in str(info.value)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--resamples", "0"], "--resamples 0 must be >= 1; fix: "),
        (["--min-panel", "0"], "--min-panel 0 must be >= 1; fix: "),
        (["--min-consensus-cer", "2"], "--min-consensus-cer 2.0 must be in [0, 1]; fix: "),
    ],
)
def test_bad_flag_names_the_flag(run_cli, vox_dir: Path, args: list[str], expected: str) -> None:
    code, _, err = run_cli(
        "refdis", "--preds", vox_dir, "--panel", "whisper-tiny.en,whisper-base.en,whisper-small.en", *args
    )
    assert code == 2 and expected in err and "[probes" not in err and "Traceback" not in err


def test_battery_probe_flag_is_named_as_typed(run_cli, tmp_path: Path) -> None:
    code, _, err = run_cli(
        "battery",
        "--model",
        "whisper-tiny.en",
        "--corpus",
        tmp_path / "x.jsonl",
        "--conditions",
        "noise:10db",
        "--probe",
        "vibes",
    )
    assert code == 2 and "--probe 'vibes' is unknown (valid: courtesy, masked, ortho, refdis)" in err


def test_spec_and_cli_with_the_same_values_give_the_same_refdis(tmp_path: Path, run_cli, vox_dir: Path) -> None:
    from asr_audit.runner.run import LocalExecutor, run_experiment

    panel = ["whisper-tiny.en", "whisper-base.en", "whisper-small.en"]
    spec_path = tmp_path / "audit.toml"
    spec_path.write_text(f"""
seed = 4
output = "out"
store = "store.sqlite"
[[corpus]]
name = "vox"
predictions = "{vox_dir}"
panel = {json.dumps(panel)}
[probes.refdis]
preset = "paper"
min_panel = 2
loo = false
majority = 0.7
resamples = 30
""")
    outcome = run_experiment(load_spec(spec_path), None, LocalExecutor(False))
    from_spec = next(e["result"] for e in outcome.results["probes"] if e["probe"] == "refdis")
    code, _, err = run_cli(
        "refdis",
        "--preds",
        vox_dir,
        "--panel",
        ",".join(panel),
        "--preset",
        "paper",
        "--min-panel",
        "2",
        "--no-loo",
        "--majority",
        "0.7",
        "--resamples",
        "30",
        "--seed",
        "4",
        "--normalize-workers",
        "1",
        "--json",
        tmp_path / "cli.json",
    )
    assert code == 0, err
    from_cli = json.loads((tmp_path / "cli.json").read_text())
    assert from_cli["params"] == from_spec["params"]
    assert from_cli == json.loads(json.dumps(from_spec))


def test_leave_one_out_quorum_is_refused_at_load_naming_the_toml_fields(tmp_path: Path) -> None:
    """Issue 11, defect 3: a panel of 3 with min_panel 3 leaves 2 models to mine each member's
    edits (two voters are no consensus): refused when the spec loads (before any inference), in
    the spec's own words."""
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "[probes.refdis]")
    msg = str(info.value)
    assert msg == (
        f"{tmp_path / 'audit.toml'}: corpus 'vox': leave-one-out ([probes.refdis] loo) mines each of the "
        "3 panel models' edits with the other 2, fewer than 3 ([probes.refdis] min_panel = 3, and 3 voters "
        "at least: two are no consensus), so its panel models cannot be judged fairly; fix: list at least 4 "
        "[panel] models or set [probes.refdis] loo = false"
    )
    with pytest.raises(
        ConfigError,
        match=r"\(\[corpus\[0\]\.probes\.refdis\] min_panel = 3, .*"
        r"set \[probes\.refdis\] loo = false",
    ):
        load(tmp_path, "[probes.refdis]\nmin_panel = 2", "[corpus.probes.refdis]\nmin_panel = 3")
    with pytest.raises(ConfigError, match=r"leave-one-out \(\[probes\.miner_calibration\] loo\)"):
        load(tmp_path, '[probes.miner_calibration]\ntruth = "calib"')


@pytest.mark.parametrize(
    ("probes", "override"),
    [
        ("[probes.refdis]\nloo = false", ""),  # no leave-one-out
        ("[probes.refdis]", "[corpus.probes.refdis]\nskip = true"),  # the corpus does not run it
        ("[probes.refdis]\nmin_panel = 4", ""),  # below min_panel: the run's own error names it
        ("[probes.miner_calibration]", ""),  # no calibration folder: the probe does not run
    ],
)
def test_leave_one_out_quorum_passes_where_it_holds_or_does_not_apply(
    tmp_path: Path, probes: str, override: str
) -> None:
    load(tmp_path, probes, override)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            'verify_with = ["hf:v"]\ncorrected_refs = "fixed.jsonl"',
            "[probes.refdis] verify_with verifies the panel's edits, but [probes.refdis] corrected_refs gives "
            "them; fix: mine with a panel (drop [probes.refdis] corrected_refs)",
        ),
        (
            'verify_with = ["hf:v"]\nlabels = "labels.sqlite"',
            "[probes.refdis] labels and [probes.refdis] verify_with are two verifications of the same edits; "
            "fix: name one of them",
        ),
        (
            "verify_margin = 0.5",
            "[probes.refdis] verify_margin is the audio verifiers' margin, and [probes.refdis] verify_with names "
            "none; fix: add [probes.refdis] verify_with or drop [probes.refdis] verify_margin",
        ),
    ],
)
def test_refdis_option_combinations_the_verb_refuses_are_refused_by_the_spec(
    tmp_path: Path, table: str, expected: str
) -> None:
    """The combinations ``asr-audit refdis`` refuses are refused when a spec loads, by the same rule
    (``RefdisOptions``), in the spec's words: file, table and key."""
    with pytest.raises(ConfigError) as info:
        load(tmp_path, f"[probes.refdis]\nloo = false\n{table}")
    assert str(info.value) == f"{tmp_path / 'audit.toml'}: {expected}"


def test_refdis_option_combinations_are_refused_on_the_command_line_in_its_words(run_cli, vox_dir: Path) -> None:
    """The same rules as the spec's, naming the flags."""
    for more, expected in (
        (["--verify-with", "hf:v", "--corrected-refs", "f.jsonl"], "--verify-with verifies the panel's edits, but "),
        (["--verify-with", "hf:v", "--labels", "l.sqlite"], "--labels and --verify-with are two verifications"),
        (["--verify-margin", "0.5"], "--verify-margin is the audio verifiers' margin, and --verify-with names none"),
    ):
        code, _, err = run_cli("refdis", "--preds", vox_dir, "--panel", "a,b,c", *more)
        assert code == 2 and f"error: {expected}" in err, err


def test_gate_refuses_two_verifications_in_a_spec(tmp_path: Path) -> None:
    (tmp_path / "calib").mkdir()
    with pytest.raises(ConfigError, match=r"\[probes\.gate\] truth and \[probes\.gate\] labels are two verifications"):
        load(
            tmp_path,
            '[probes.gate]\ncandidate = "a"\nbaseline = "b"\nloo = false\ntruth = "calib"\nlabels = "l.sqlite"',
        )
