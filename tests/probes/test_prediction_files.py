"""``ProbeInputs.files``: predictions read when a probe first asks for them, and not at all by a warm refdis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL
from asr_audit.probes.core.probe import PredictionFiles, ProbeInputs


def test_predictions_are_read_once_on_first_use() -> None:
    reads: list[int] = []

    def read() -> Any:
        reads.append(1)
        return load_predictions(VOXPOPULI_EXAMPLES)

    inputs = ProbeInputs(corpus="vox", files=PredictionFiles(VOXPOPULI_EXAMPLES, None, read))
    assert not inputs.predictions_read and reads == []
    assert inputs.predictions.models == inputs.predictions.models and len(reads) == 1
    assert inputs.predictions_read
    given = ProbeInputs(corpus="vox", predictions=inputs.predictions)
    assert given.predictions_read and given.predictions is inputs.predictions
    with pytest.raises(AttributeError):
        _ = given.no_such_field


def test_a_warm_refdis_reads_no_prediction_file_row(
    tmp_path: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    args = ["refdis", "--preds", VOXPOPULI_EXAMPLES, "--panel", ",".join(VOXPOPULI_PANEL), "--resamples", "30"]
    code, _, err = run_cli(*args, "--json", tmp_path / "cold.json")
    assert code == 0, err

    def no_reading(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a warm run read the prediction files")

    monkeypatch.setattr("asr_audit.cli.predictions.load_set", no_reading)
    code, _, err = run_cli(*args, "--json", tmp_path / "warm.json")
    assert code == 0 and "the whole set read as columns" in err, err
    assert json.loads((tmp_path / "warm.json").read_text()) == json.loads((tmp_path / "cold.json").read_text())
