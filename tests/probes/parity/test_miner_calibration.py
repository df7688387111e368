"""Parity of the probe ``miner_calibration``: ``asr-audit calib score --json``, a one-probe spec
(``asr-audit run``, results.json's entry) and ``asr_audit.calib_score`` give the same precision,
recall and curve on the same calibration set, predictions and panel (real transcripts of three
bundled models, tests/fixtures/calib-miner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit import api

FIXTURE = Path(__file__).parents[2] / "fixtures" / "calib-miner"
PANEL = ["whisper-tiny.en", "whisper-base", "sphinx-en-us"]
SPEC = """
title = "miner calibration parity"
seed = 0
output = "out"
[[corpus]]
name = "calib"
predictions = "{preds}"
panel = {panel}
[probes.miner_calibration]
truth = "{truth}"
{options}
"""


@pytest.mark.parametrize(
    ("flags", "options", "keywords"),
    [
        ((), "loo = false", {}),
        (
            ("--preset", "paper", "--min-confidence", "0.4"),
            'preset = "paper"\nmin_confidence = 0.4\nloo = false',
            {"preset": "paper", "min_confidence": 0.4},
        ),
    ],
)
def test_the_verb_the_spec_and_the_api_score_the_miner_alike(
    tmp_path: Path, run_cli, flags: tuple[str, ...], options: str, keywords: dict
) -> None:
    out = tmp_path / "verb.json"
    code, _, err = run_cli(
        "calib", "score", "--corpus", FIXTURE, "--preds", FIXTURE / "preds", "--panel", ",".join(PANEL),
        *flags, "--json", out,
    )  # fmt: skip
    assert code == 0, err
    verb = json.loads(out.read_text())

    spec = tmp_path / "audit.toml"
    spec.write_text(SPEC.format(preds=FIXTURE / "preds", panel=json.dumps(PANEL), truth=FIXTURE, options=options))
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (entry,) = [e for e in results["probes"] if e["probe"] == "miner_calibration"]

    score = api.calib_score(FIXTURE, FIXTURE / "preds", PANEL, **keywords).to_dict()

    assert entry["result"] == verb == json.loads(json.dumps(score))
    assert verb["n_edits"] > 0 and verb["curve"]  # something was mined and scored
