"""Scoring the consensus miner against planted truth, with simulated honest panels (fast)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from calib_edits import make_edit

from asr_audit.calib.build import build_calibration
from asr_audit.calib.generate import CalibConfig
from asr_audit.calib.score import check_references, edit_matches, score_edits, score_miner
from asr_audit.calib.truth import ClipInfo, Truth, TruthItem, load_truth
from asr_audit.corpus.predfiles import load_predictions
from asr_audit.errors import InputFileError
from asr_audit.probes.predfiles.refdis import DELETION, INSERTION, SUBSTITUTION, Edit, preset_params
from asr_audit.probes.predfiles.refdis_run import run_refdis
from asr_audit.store.export import PredictionRecord, write_predictions

PANEL = ["honest-a", "honest-b", "honest-c", "honest-d"]


def _noisy(text: str, rng: np.random.Generator, noise: float) -> str:
    """An honest transcript with its own small errors: sometimes one interior word dropped or changed."""
    words = text.split()
    if len(words) > 4 and rng.random() < noise:
        i = int(rng.integers(1, len(words) - 1))
        if rng.random() < 0.5:
            del words[i]
        else:
            words[i] = "mumble"
    return " ".join(words)


def write_panel(corpus: Path, out: Path, models: dict[str, str], seed: int = 0, noise: float = 0.3) -> Path:
    """Prediction files for every clip: model -> 'spoken' (honest, noisy) or 'reference' (copier)."""
    truth = load_truth(corpus)
    rng = np.random.default_rng(seed)
    for model, mode in models.items():
        recs = [
            PredictionRecord(
                c.clip_id, c.reference, _noisy(c.spoken, rng, noise) if mode == "spoken" else c.reference, None
            )
            for c in truth.clips.values()
        ]
        write_predictions(out / f"{model}.jsonl", recs, include_time=False)
    return out


@pytest.fixture(scope="module")
def calib_set(tmp_path_factory, fake_tts):
    out = tmp_path_factory.mktemp("calib")
    cfg = CalibConfig(n_sentences=150, error_rate=0.6)
    build_calibration(out, cfg, ["v1", "v2"], seed=11, synthesize=fake_tts)
    return out


def _score(corpus: Path, preds: Path, preset: str, panel=PANEL):
    pset = load_predictions(preds)
    result = run_refdis(pset, panel, preset_params(preset, loo=False), models=panel, n_resamples=1)
    return score_miner(load_truth(corpus), result, clip_ids=pset.clip_ids)


def test_exact_panel_recovers_every_boundary_error_and_nothing_else(calib_set, tmp_path) -> None:
    preds = write_panel(calib_set, tmp_path, dict.fromkeys(PANEL, "spoken"), noise=0.0)
    s = _score(calib_set, preds, "anchor")
    assert s.recall_boundary.n >= 80
    assert (s.recall_boundary.k, s.precision.k) == (s.recall_boundary.n, s.precision.n)
    assert s.recall.k == s.recall_boundary.k  # anchor mines no interior error
    assert not [m for m in s.missed if m.position != "middle"]


def test_honest_noisy_panel_recovers_boundary_errors(calib_set, tmp_path) -> None:
    preds = write_panel(calib_set, tmp_path, dict.fromkeys(PANEL, "spoken"))
    s = _score(calib_set, preds, "anchor")
    assert s.recall_boundary.n >= 80
    assert s.recall_boundary.rate >= 0.9  # a unanimous panel loses an edit when one member garbles it
    assert s.precision.rate >= 0.95 and s.precision.n >= 80
    assert s.recall_by_position["middle"].n > 0 and s.recall_by_position["middle"].k == 0  # anchor: boundary only
    assert s.conventions_mined.n > 100 and s.conventions_mined.k == 0
    assert s.n_false_on_conventions == 0


def test_paper_preset_adds_interior_runs_but_never_interior_omissions(calib_set, tmp_path) -> None:
    preds = write_panel(calib_set, tmp_path, dict.fromkeys(PANEL, "spoken"), noise=0.1)
    s = _score(calib_set, preds, "paper")
    kp = s.recall_by_kind_position
    assert kp["spurious_insertion_in_reference"]["middle"].rate >= 0.9
    assert kp["substitution"]["middle"].rate >= 0.9
    assert kp["omitted_in_reference"]["middle"].n > 0 and kp["omitted_in_reference"]["middle"].k == 0
    assert s.recall.rate > _score(calib_set, preds, "anchor").recall.rate


def test_a_panel_that_copies_the_reference_finds_nothing(calib_set, tmp_path) -> None:
    preds = write_panel(calib_set, tmp_path, dict.fromkeys(PANEL, "reference"))
    s = _score(calib_set, preds, "anchor")
    assert s.n_edits == 0 and s.recall.k == 0 and s.recall.n > 50 and s.precision.n == 0


def test_one_copier_in_a_unanimous_panel_blocks_mining(calib_set, tmp_path) -> None:
    preds = write_panel(calib_set, tmp_path, {"honest-a": "spoken", "honest-b": "spoken", "copier": "reference"})
    s = _score(calib_set, preds, "anchor", ["honest-a", "honest-b", "copier"])
    assert s.recall.k == 0


def _item(kind: str, start: int, stop: int, spoken: tuple[str, ...] = (), n: int = 10) -> TruthItem:
    return TruthItem("c", "s", 0, kind, "x", "start", start, stop, n, "", "", (), spoken)


def _edit(kind: str, idx: tuple[int, ...], alt: str = "") -> Edit:
    return make_edit(kind, idx, alt)


@pytest.mark.parametrize(
    ("edit", "item", "expected"),
    [
        (_edit(DELETION, (0, 1)), _item("spurious_insertion_in_reference", 0, 2), True),
        (_edit(DELETION, (2,)), _item("spurious_insertion_in_reference", 0, 2), False),
        (_edit(SUBSTITUTION, (9,), "people"), _item("substitution", 9, 10, ("people",)), True),
        (_edit(INSERTION, (0,), "thank you"), _item("omitted_in_reference", 0, 0, ("thank", "you")), True),
        (_edit(INSERTION, (10,), "thank you"), _item("omitted_in_reference", 0, 0, ("thank", "you")), False),
        (_edit(INSERTION, (0,), "well"), _item("omitted_in_reference", 0, 0, ("thank", "you")), False),
        (_edit(SUBSTITUTION, (0,), "thank you we"), _item("omitted_in_reference", 0, 0, ("thank", "you")), True),
        (_edit(DELETION, (0,)), _item("omitted_in_reference", 0, 0, ("thank", "you")), False),
        (_edit(INSERTION, (0,), "madam"), _item("spurious_insertion_in_reference", 0, 2), False),
        (_edit(DELETION, (3, 4)), _item("convention", 4, 5), True),
    ],
)
def test_matching_rule(edit: Edit, item: TruthItem, expected: bool) -> None:
    assert edit_matches(edit, item) is expected


def test_false_positives_are_labelled() -> None:
    clip = ClipInfo("c", "audio/c.wav", "s", "test", "v", "r", "s")
    truth = Truth({"c": clip}, (_item("convention", 4, 5), _item("substitution", 8, 9, ("x",))), "t")
    s = score_edits(truth, [_edit(DELETION, (4,)), _edit(DELETION, (6,)), _edit(SUBSTITUTION, (8,), "x")])
    assert [o.label for o in s.outcomes] == ["convention", "unexplained", "error"]
    assert (s.precision.k, s.precision.n, s.recall.k, s.recall.n) == (1, 3, 1, 1)
    assert (s.conventions_mined.k, s.n_false_on_conventions, s.n_false_unexplained) == (1, 1, 1)


def test_foreign_predictions_are_one_line_errors(calib_set, tmp_path) -> None:
    truth = load_truth(calib_set)
    with pytest.raises(InputFileError, match="not in the set"):
        check_references(truth, {"other-clip": "hello"})
    cid = next(iter(truth.clips))
    assert check_references(truth, {cid: "a different reference"}) == [cid]
    assert check_references(truth, {truth.clips[cid].audio_filepath: truth.clips[cid].reference}) == []


def test_cli_build_and_score(calib_set, tmp_path, run_cli, monkeypatch, fake_tts) -> None:
    import asr_audit.calib.build as build_mod

    preds = write_panel(calib_set, tmp_path / "preds", dict.fromkeys(PANEL, "spoken"), noise=0.0)
    code, out, err = run_cli(
        "calib",
        "score",
        "--corpus",
        calib_set,
        "--preds",
        preds,
        "--panel",
        ",".join(PANEL),
        "--json",
        tmp_path / "s.json",
    )
    assert code == 0, err
    assert "precision" in out and "recall, boundary errors" in out
    d = json.loads((tmp_path / "s.json").read_text())
    assert d["recall_boundary"]["rate"] == 1.0 and d["panel"] == PANEL and d["preset"] == "anchor"
    # a prediction set whose references are not the manifest's: one line, exit 2
    bad = tmp_path / "bad"
    write_predictions(bad / "m.jsonl", [PredictionRecord("nope", "x", "x", None)], include_time=False)
    code, out, err = run_cli("calib", "score", "--corpus", calib_set, "--preds", bad, "--panel", "m,m2,m3")
    assert code == 2 and "not in the set" in err and "Traceback" not in err
    # build through the CLI, with the fake synthesizer standing in for the TTS engines
    monkeypatch.setattr(build_mod, "resolve_voice", lambda v: v)
    monkeypatch.setattr("asr_audit.audio.voices.synthesize", fake_tts)
    code, out, err = run_cli(
        "calib",
        "build",
        "--out",
        tmp_path / "b",
        "--n-sentences",
        "5",
        "--voices",
        "x,y",
        "--kinds",
        "substitution=2,omitted_in_reference",
        "--positions",
        "start,end",
    )
    assert code == 0, err
    assert "wrote 10 clips" in out
    code, out, err = run_cli(
        "calib", "build", "--out", tmp_path / "c", "--n-sentences", "5", "--voices", "x", "--kinds", "bogus"
    )
    assert code == 2 and "--kinds" in err


def test_rates_over_sentences_read_in_several_voices_are_sentence_clustered(calib_set, tmp_path) -> None:
    """Defect 10: each planted error is read in two voices (v1, v2); the two items of a sentence are not
    independent trials, so recall's interval resamples sentences (Wilson over items was too narrow)."""
    from asr_audit.stats.intervals import wilson

    preds = write_panel(calib_set, tmp_path, dict.fromkeys(PANEL, "spoken"))
    s = _score(calib_set, preds, "paper")
    truth = load_truth(calib_set)
    errors = truth.errors()
    r = s.recall.to_dict()
    assert r["interval"] == "cluster-bootstrap" and r["n"] == len(errors)
    assert r["n_clusters"] == len({t.sentence_id for t in errors}) < r["n"]
    w = wilson(s.recall.k, s.recall.n)
    assert (r["ci_high"] - r["ci_low"]) > (w.high - w.low)  # the two voices mostly agree: wider than Wilson
    assert s.precision.to_dict()["interval"] in ("cluster-bootstrap", "cluster-wilson")
    # undefined stays undefined: a kind with no planted error has no recall, not 0
    empty = score_edits(truth.restrict([]), [], seed=0)
    assert empty.recall.to_dict()["rate"] is None and empty.precision.to_dict()["ci_low"] is None
    # the same seed gives the same intervals
    assert _score(calib_set, preds, "paper").recall == s.recall
