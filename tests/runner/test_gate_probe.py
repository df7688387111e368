"""``[probes.gate]`` in a run: the same decision as ``asr-audit gate``, a report section, typed spec errors."""

from __future__ import annotations

import json
from pathlib import Path

from asr_audit.data import VOXPOPULI_EXAMPLES

SPEC = """
title = "gate"
seed = 1
output = "out"
[[corpus]]
name = "vox"
predictions = "{vox}"
panel = ["whisper-base.en", "distil-small.en", "wav2vec2-base-960h"]
[probes.gate]
{gate}
loo = false
resamples = 500
"""
PAIR = 'candidate = "whisper-tiny.en"\nbaseline = "whisper-small.en"'


def _spec(tmp_path: Path, gate: str) -> Path:
    spec = tmp_path / "audit.toml"
    spec.write_text(SPEC.format(vox=VOXPOPULI_EXAMPLES, gate=gate))
    return spec


def test_run_gate_matches_the_verb_and_reports_it(tmp_path: Path, run_cli) -> None:
    code, _, err = run_cli("run", _spec(tmp_path, PAIR + "\nmin_effect = { wer = 2.5 }"), "--no-progress")
    assert code == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (entry,) = [e for e in results["probes"] if e["probe"] == "gate"]
    by_run = entry["result"]
    assert by_run["decision"] == "pass" and by_run["options"]["min_effect_points"]["wer"] == 2.5
    code, _, err = run_cli(
        "gate", "--preds", VOXPOPULI_EXAMPLES, "--candidate", "whisper-tiny.en", "--baseline", "whisper-small.en",
        "--panel", "whisper-base.en,distil-small.en,wav2vec2-base-960h", "--no-loo", "--resamples", "500",
        "--seed", "1", "--min-effect", "wer=2.5,accept_ref=2,wer_inflation=0.5", "--json", tmp_path / "g.json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads((tmp_path / "g.json").read_text())["tests"] == by_run["tests"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Regression gate — vox" in html and "pass: no regression of whisper-tiny.en" in html
    assert (tmp_path / "out" / "tables" / "gate-vox.csv").read_text().startswith("measure,candidate,baseline")


def test_spec_errors_name_the_table_and_key(tmp_path: Path, run_cli) -> None:
    for gate, message in (
        ('baseline = "whisper-small.en"', "[probes.gate] candidate is missing"),
        (PAIR + "\nlevel = 0.9", "[probes.gate] level = 0.9 must be in (0, 0.5)"),
        (PAIR + '\nmin_effect = "big"', '[probes.gate] min_effect = "big" is not a number or a table'),
        (PAIR.replace("whisper-tiny.en", "nope"), "[probes.gate] candidate = 'nope' is not a model of corpus 'vox'"),
    ):
        code, _, err = run_cli("run", _spec(tmp_path, gate), "--no-progress")
        assert code == 2 and message in err and "fix:" in err, (gate, err)
