"""refdis through its three front doors — ``asr-audit refdis --json``, ``[probes.refdis]`` in a spec
and ``asr_audit.api.refdis`` — gives the same numbers: one probe object, one options record.

The spec runs first on an empty text cache (the streamed columns, stored in the cache), the verb
second (the warm columns: it says so), the API on the prediction set (the plain path): the three
engines are compared too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from parity import as_json, spec_result

from asr_audit import api
from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL

PANEL = list(VOXPOPULI_PANEL)
# (verb flags, spec table / API keywords)
CASES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "anchor, no leave-one-out": (["--preset", "anchor", "--no-loo"], {"preset": "anchor", "loo": False}),
    "paper, leave-one-out": (["--preset", "paper"], {"preset": "paper"}),
    "paper, two models scored": (
        ["--preset", "paper", "--majority", "0.7", "--models", "distil-small.en,whisper-tiny.en"],
        {"preset": "paper", "majority": 0.7, "models": ["distil-small.en", "whisper-tiny.en"]},
    ),
}


@pytest.fixture(autouse=True)
def _own_text_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path / "cache"))


def _verb(run_cli: Any, out: Path, *flags: Any, warm: bool = False) -> dict[str, Any]:
    code, _, err = run_cli("refdis", "--panel", ",".join(PANEL), "--resamples", "50", "--json", out, *flags)
    assert code == 0, err
    assert not warm or "the whole set read as columns" in err, err
    return json.loads(out.read_text())


@pytest.mark.parametrize("case", list(CASES))
def test_the_verb_the_spec_and_the_api_agree(case: str, tmp_path: Path, run_cli: Any) -> None:
    flags, params = CASES[case]
    spec = spec_result(tmp_path / "spec", VOXPOPULI_EXAMPLES, PANEL, "refdis", {"resamples": 50, **params})
    verb = _verb(run_cli, tmp_path / "verb.json", "--preds", VOXPOPULI_EXAMPLES, *flags, warm=True)
    through_api = as_json(api.refdis(VOXPOPULI_EXAMPLES, PANEL, resamples=50, **params).to_dict())
    assert verb == spec == through_api
    assert verb["edits"] and verb["params"]["preset"] == params["preset"]


def test_labels_verify_the_same_edits_through_every_door(tmp_path: Path, run_cli: Any) -> None:
    from asr_audit.probes.predfiles.verified_labels import draw_sample, run_hash
    from asr_audit.store.labels import PANEL as PANEL_LABEL
    from asr_audit.store.labels import REFERENCE, LabelStore

    first = api.refdis(VOXPOPULI_EXAMPLES, PANEL, resamples=50).to_dict()
    labels = tmp_path / "spec" / "labels.sqlite"
    labels.parent.mkdir()
    with LabelStore(labels) as store:
        for i, s in enumerate(draw_sample(first, 12, seed=0)):
            store.add("ann", s.key, run_hash(first), REFERENCE if i % 3 == 0 else PANEL_LABEL, s.weight)
    verb = _verb(run_cli, tmp_path / "verb.json", "--preds", VOXPOPULI_EXAMPLES, "--labels", labels)
    spec = spec_result(
        tmp_path / "spec", VOXPOPULI_EXAMPLES, PANEL, "refdis", {"resamples": 50, "labels": "labels.sqlite"}
    )
    through_api = as_json(api.refdis(VOXPOPULI_EXAMPLES, PANEL, resamples=50, labels=str(labels)).to_dict())
    assert verb == spec and verb["models"] == through_api["models"]
    assert verb["verification"]["source"] == "human labels" and verb["verification"]["n_labelled"] == 12
    assert all("verified" in m for m in verb["models"])
    # the API returns the run's result; the doors that print add the labels' summary to its verification
    assert through_api["verification"].items() <= verb["verification"].items()


def _silent(voice: str, text: str) -> tuple[np.ndarray, int]:
    return np.zeros(1600 * (1 + len(text.split())), np.float32), 16000


def test_planted_truth_verifies_the_same_edits_through_every_door(tmp_path: Path, run_cli: Any) -> None:
    from asr_audit.calib.build import build_calibration
    from asr_audit.calib.generate import CalibConfig
    from asr_audit.calib.truth import load_truth
    from asr_audit.store.export import PredictionRecord, write_predictions

    calib, preds = tmp_path / "calib", tmp_path / "preds"
    build_calibration(calib, CalibConfig(n_sentences=20, error_rate=0.6), ["v1"], seed=5, synthesize=_silent)
    truth = load_truth(calib)
    rng = np.random.default_rng(1)
    misheard = {}
    for cid, c in truth.clips.items():
        words = c.spoken.split()
        words[0] = "mumble" if rng.random() < 0.35 else words[0]
        misheard[cid] = " ".join(words)
    panel = ["p1", "p2", "p3", "p4"]
    for model, hyp in {
        **dict.fromkeys(panel, misheard),
        "listener": {cid: c.spoken for cid, c in truth.clips.items()},
        "copier": {cid: c.reference for cid, c in truth.clips.items()},
    }.items():
        recs = [PredictionRecord(cid, truth.clips[cid].reference, h, None) for cid, h in hyp.items()]
        write_predictions(preds / f"{model}.jsonl", recs, include_time=False)
    code, _, err = run_cli(
        "refdis", "--preds", preds, "--panel", ",".join(panel), "--preset", "paper", "--resamples", "50",
        "--truth", calib, "--json", tmp_path / "verb.json",
    )  # fmt: skip
    assert code == 0, err
    verb = json.loads((tmp_path / "verb.json").read_text())
    spec = spec_result(
        tmp_path / "spec", preds, panel, "refdis", {"preset": "paper", "resamples": 50, "truth": str(calib)}
    )
    through_api = as_json(api.refdis(preds, panel, preset="paper", resamples=50, truth=str(calib)).to_dict())
    assert verb == spec == through_api
    assert verb["verification"]["source"] and all("verified" in m for m in verb["models"])
