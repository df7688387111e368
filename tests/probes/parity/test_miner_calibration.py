"""Parity of the probe ``miner_calibration``: ``asr-audit calib score --json``, a one-probe spec
(``asr-audit run``, results.json's entry) and ``asr_audit.calib_score`` give the same precision,
recall and curve on the same calibration set, predictions and panel (real transcripts of three
bundled models, tests/fixtures/calib-miner)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from asr_audit import api
from asr_audit.calib.build import build_calibration
from asr_audit.calib.generate import CalibConfig
from asr_audit.calib.truth import load_truth
from asr_audit.store.export import PredictionRecord, write_predictions

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


def _tone(voice: str, text: str) -> tuple[np.ndarray, int]:
    """A stand-in for TTS (the scores read the transcripts only): a tone as long as the text."""
    return np.full(800 * (1 + len(text.split())), 0.05, np.float32), 16000


def _three_doors(
    run_cli,
    tmp_path: Path,
    truth: Path,
    preds: Path,
    panel: list[str],
    same: tuple[tuple[str, ...], str, dict] = ((), "loo = false", {}),
) -> tuple[dict, dict, dict]:
    """The score through ``calib score --json``, a one-probe spec and the API; ``same`` is one set of
    options as the verb's flags, the spec's fields and the API's keywords."""
    flags, options, keywords = same
    code, _, err = run_cli("calib", "score", "--corpus", truth, "--preds", preds, "--panel", ",".join(panel),
                           *flags, "--json", tmp_path / "verb.json")  # fmt: skip
    assert code == 0, err
    spec = tmp_path / "audit.toml"
    spec.write_text(SPEC.format(preds=preds, panel=json.dumps(panel), truth=truth, options=options))
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (entry,) = [e for e in results["probes"] if e["probe"] == "miner_calibration"]
    score = json.loads(json.dumps(api.calib_score(truth, preds, panel, **keywords).to_dict()))
    return json.loads((tmp_path / "verb.json").read_text()), entry["result"], score


def test_a_spanish_set_is_mined_with_its_own_normalizer_at_every_door(tmp_path: Path, run_cli) -> None:
    """The spec's normalizer (whisper) is not the set's (basic-es): every door mines the set in its
    own language, so its record conventions (digits, Sr.) are not mined as errors."""
    truth, preds, panel = tmp_path / "es", tmp_path / "preds", ["p1", "p2", "p3"]
    build_calibration(truth, CalibConfig(n_sentences=40, error_rate=0.6, language="es"), ["v1"], 5, _tone)
    clips = load_truth(truth).clips.values()
    for model in panel:  # honest and exact: each writes what was said
        recs = [PredictionRecord(c.clip_id, c.reference, c.spoken, None) for c in clips]
        write_predictions(preds / f"{model}.jsonl", recs, include_time=False)
    verb, spec, score = _three_doors(run_cli, tmp_path, truth, preds, panel)
    assert verb == spec == score
    assert verb["precision"]["rate"] == 1.0 and verb["recall_boundary"]["rate"] == 1.0


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
    verb, spec, score = _three_doors(run_cli, tmp_path, FIXTURE, FIXTURE / "preds", PANEL, (flags, options, keywords))
    assert verb == spec == score
    assert verb["n_edits"] > 0 and verb["curve"]  # something was mined and scored
