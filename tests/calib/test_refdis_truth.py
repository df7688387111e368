"""refdis with a calibration set's planted truth as its verification (`--truth`, `[probes.refdis] truth`):
a copier is flagged on verified reference errors, a model that hears better than the panel is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from asr_audit.calib.build import build_calibration
from asr_audit.calib.generate import CalibConfig
from asr_audit.calib.score import truth_verify
from asr_audit.calib.truth import load_truth
from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.refdis import preset_params
from asr_audit.probes.predfiles.refdis_run import run_refdis
from asr_audit.stats.flags import consensus_copying, copies_reference, wer_inflated
from asr_audit.store.export import PredictionRecord, write_predictions

PANEL = ["panel-a", "panel-b", "panel-c", "panel-d"]


@pytest.fixture(scope="module")
def calib_set(tmp_path_factory, fake_tts):
    out = tmp_path_factory.mktemp("calib")
    build_calibration(out, CalibConfig(n_sentences=60, error_rate=0.6), ["v1"], seed=3, synthesize=fake_tts)
    return out


def _misheard(text: str, rng: np.random.Generator) -> str:
    """The whole panel's shared mishearing: on about a third of the clips the first word is heard
    as "mumble" by every member (a hard word, a common confusion)."""
    words = text.split()
    if rng.random() < 0.35:
        words[0] = "mumble"
    return " ".join(words)


def _own_errors(text: str, rng: np.random.Generator) -> str:
    """A member's own errors besides: one interior word changed on half of the clips."""
    words = text.split()
    if len(words) > 4 and rng.random() < 0.5:
        words[int(rng.integers(2, len(words) - 1))] = "garble"
    return " ".join(words)


@pytest.fixture(scope="module")
def preds(calib_set, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("preds")
    truth = load_truth(calib_set)
    rng = np.random.default_rng(0)
    shared = {cid: _misheard(c.spoken, rng) for cid, c in truth.clips.items()}
    hyps = {
        **{p: {cid: _own_errors(h, rng) for cid, h in shared.items()} for p in PANEL},
        "listener": {cid: c.spoken for cid, c in truth.clips.items()},  # hears better than the panel
        "copier": {cid: c.reference for cid, c in truth.clips.items()},  # writes the record
    }
    for model, by_clip in hyps.items():
        recs = [PredictionRecord(cid, truth.clips[cid].reference, h, None) for cid, h in by_clip.items()]
        write_predictions(out / f"{model}.jsonl", recs, include_time=False)
    return out


def test_truth_separates_the_copier_from_the_better_listener(calib_set, preds) -> None:
    params = preset_params("paper", loo=False)  # the closeness verdicts (the exact rule calls a partial
    # rendering of an omitted opener "ref": "thank you madam president" for the panel's "mumble you ...")
    result = run_refdis(load_predictions(preds), PANEL, params, n_resamples=200, verify=truth_verify(calib_set))
    d: dict[str, Any] = result.to_dict()
    models = {m["model"]: m for m in d["models"]}
    listener, copier = models["listener"], models["copier"]
    # on consensus edits alone the two are alike: both write the reference where the panel misheard
    assert consensus_copying(listener) and consensus_copying(copier)
    v = listener["verified"]
    assert v["n_eligible"] >= 10 and v["n_ref"] == 0 and v["hears_better"] == 1.0
    assert not copies_reference(listener) and not wer_inflated(listener)
    assert v["wer_inflation_ci_high"] < 0  # corrected only where the reference is wrong: it listens
    assert copies_reference(copier) and wer_inflated(copier)
    assert copier["verified"]["accept_ref"] == 1.0
    assert d["verification"]["source"] == "planted truth"
    # panel adequacy: the listener is more accurate than every panel member outside the edits
    assert listener["hears_better_than_panel"] and listener["wer_outside"] < listener["panel_wer_outside_median"]
    assert any(w.startswith("listener is more accurate") for w in d["panel_adequacy"]["warnings"])


def test_cli_truth_gives_the_library_result(calib_set, preds, run_cli, tmp_path) -> None:
    params = preset_params("paper")
    lib: dict[str, Any] = run_refdis(load_predictions(preds), PANEL, params, verify=truth_verify(calib_set)).to_dict()
    out = tmp_path / "r.json"
    args = ("refdis", "--preds", preds, "--panel", ",".join(PANEL), "--preset", "paper", "--truth", calib_set)
    code, _, err = run_cli(*args, "--json", out)
    assert code == 0, err
    got = json.loads(out.read_text())
    assert got["verification"] == json.loads(json.dumps(lib["verification"]))
    assert [m["verified"] for m in got["models"]] == json.loads(json.dumps([m["verified"] for m in lib["models"]]))
    assert got["panel_adequacy"] == json.loads(json.dumps(lib["panel_adequacy"]))
    # a warm run (the set read back as columns) gives the same
    code, _, err = run_cli(*args, "--json", tmp_path / "warm.json")
    assert code == 0, err
    assert json.loads((tmp_path / "warm.json").read_text())["models"] == got["models"]
    # a folder that is no calibration set: one line, exit 2, before any work
    code, _, err = run_cli("refdis", "--preds", preds, "--panel", ",".join(PANEL), "--truth", tmp_path)
    assert code == 2 and "calib build" in err and "Traceback" not in err


def test_spec_truth_verifies_the_run(calib_set, preds, run_cli, tmp_path) -> None:
    """``[probes.refdis] truth = "DIR"`` in a spec: the same verification, and the summary's verdicts
    (results.json) flag the copier on verified errors and clear the better listener."""
    spec = tmp_path / "audit.toml"
    spec.write_text(
        f'title = "t"\nseed = 0\noutput = "{tmp_path / "out"}"\nstore = "{tmp_path / "s.sqlite"}"\n'
        f'[[corpus]]\nname = "calib"\npredictions = "{preds}"\npanel = {json.dumps(PANEL)}\n'
        f'[probes.refdis]\npreset = "paper"\nloo = false\nresamples = 200\ntruth = "{calib_set}"\n'
        "[probes.switch_rate]\nskip = true\n",
        encoding="utf-8",
    )
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    refdis = next(p["result"] for p in results["probes"] if p["probe"] == "refdis")
    assert refdis["verification"]["source"] == "planted truth"
    verdicts = {r["model"]: r["verdict"] for r in results["summary"]}
    assert verdicts["copier"] == "flagged" and verdicts["listener"] == "not flagged"
    # a bad folder is refused with the spec's field named, before any work
    spec.write_text(spec.read_text(encoding="utf-8").replace(str(calib_set), str(tmp_path / "nope")), encoding="utf-8")
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 2 and "probes.refdis" in err and "truth" in err and "Traceback" not in err
