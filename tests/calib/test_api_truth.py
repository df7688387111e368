"""``asr_audit.refdis(..., truth=DIR)``: a calibration folder's planted truth verifies the edits, as
``asr-audit refdis --truth DIR`` does (the same library step, the same numbers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import asr_audit
from asr_audit.calib.build import build_calibration
from asr_audit.calib.generate import CalibConfig
from asr_audit.calib.truth import load_truth
from asr_audit.options import OptionError
from asr_audit.store.export import PredictionRecord, write_predictions

PANEL = ["panel-a", "panel-b", "panel-c", "panel-d"]


@pytest.fixture(scope="module")
def calib_set(tmp_path_factory, fake_tts) -> Path:
    out = tmp_path_factory.mktemp("calib")
    build_calibration(out, CalibConfig(n_sentences=40, error_rate=0.6), ["v1"], seed=5, synthesize=fake_tts)
    return out


@pytest.fixture(scope="module")
def preds(calib_set: Path, tmp_path_factory) -> Path:
    """A panel that shares a mishearing of the first word on a third of the clips, a model that
    writes what was said and one that writes the record."""
    out = tmp_path_factory.mktemp("preds")
    truth = load_truth(calib_set)
    rng = np.random.default_rng(1)
    shared = {}
    for cid, c in truth.clips.items():
        words = c.spoken.split()
        if rng.random() < 0.35:
            words[0] = "mumble"
        shared[cid] = " ".join(words)
    hyps = {
        **dict.fromkeys(PANEL, shared),
        "listener": {cid: c.spoken for cid, c in truth.clips.items()},
        "copier": {cid: c.reference for cid, c in truth.clips.items()},
    }
    for model, by_clip in hyps.items():
        recs = [PredictionRecord(cid, truth.clips[cid].reference, h, None) for cid, h in by_clip.items()]
        write_predictions(out / f"{model}.jsonl", recs, include_time=False)
    return out


def test_truth_gives_the_verbs_verification(calib_set: Path, preds: Path, run_cli, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, _, err = run_cli(
        "refdis", "--preds", preds, "--panel", ",".join(PANEL), "--preset", "paper", "--truth", calib_set, "--json", out
    )
    assert code == 0, err
    got: dict[str, Any] = asr_audit.refdis(preds, PANEL, preset="paper", truth=str(calib_set)).to_dict()
    assert json.loads(json.dumps(got)) == json.loads(out.read_text())
    assert got["verification"]["source"] == "planted truth"
    assert all("verified" in m for m in got["models"])


def test_truth_and_labels_are_refused_together(calib_set: Path, preds: Path, tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"^refdis\("):
        asr_audit.refdis(preds, PANEL, truth=str(calib_set), labels=str(tmp_path / "labels.sqlite"))
