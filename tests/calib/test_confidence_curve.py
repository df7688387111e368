"""The miner's operating point on a calibration set: rates at ``min_confidence``, and the
precision-recall curve over every edit's confidence (issue 13, section 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from calib_edits import make_edit

from asr_audit.calib.score import CURVE_THRESHOLDS, score_edits
from asr_audit.calib.truth import ClipInfo, Truth, TruthItem
from asr_audit.probes.predfiles.refdis import DELETION, INSERTION, Edit
from asr_audit.probes.predfiles.refdis_confidence import DEFAULT_MIN_CONFIDENCE


def _truth() -> Truth:
    """Two clips of one sentence each with one planted error: a spurious opener (tokens 0-1) and an
    omitted closer (anchor 6)."""
    clips = {
        cid: ClipInfo(cid, f"audio/{cid}.wav", cid.split("-")[0], "train", "v", "ref", "spoken")
        for cid in ("s1-v1", "s2-v1")
    }
    items = (
        TruthItem("s1-v1", "s1", 0, "spurious_insertion_in_reference", "opener", "start", 0, 2, 6, "", "", (), ()),
        TruthItem(
            "s2-v1", "s2", 0, "omitted_in_reference", "closer", "end", 6, 6, 6, "", "Thank you.", (), ("thank", "you")
        ),
    )
    return Truth(clips, items)


def _edit(clip: str, kind: str, idx: tuple[int, ...], confidence: float | None, alt: str = "") -> Edit:
    return make_edit(kind, idx, alt, clip=clip, confidence=confidence)


EDITS = [
    _edit("s1-v1", DELETION, (0, 1), 0.9),  # the spurious opener: a true positive
    _edit("s1-v1", DELETION, (4,), 0.2),  # a shared mishearing: false positive
    _edit("s2-v1", INSERTION, (6,), 0.6, "thank you"),  # the omitted closer: a true positive
]


def test_the_operating_point_filters_the_scored_edits_and_the_curve_spans_them_all() -> None:
    every = score_edits(_truth(), EDITS, n_resamples=10)
    assert (every.precision.k, every.precision.n, every.recall.k, every.recall.n) == (2, 3, 2, 2)
    kept = score_edits(_truth(), EDITS, n_resamples=10, min_confidence=0.5)
    assert (kept.precision.k, kept.precision.n, kept.recall.k, kept.recall.n) == (2, 2, 2, 2)
    assert [o.confidence for o in kept.outcomes] == [0.9, 0.6]
    strict = score_edits(_truth(), EDITS, n_resamples=10, min_confidence=0.7)
    assert (strict.recall.k, len(strict.missed)) == (1, 1) and strict.missed[0].kind == "omitted_in_reference"
    # the curve: all three edits at 0, the operating point's threshold added, nothing above 0.9
    curve = {p.threshold: p for p in strict.curve}
    assert sorted(curve) == sorted({*CURVE_THRESHOLDS, 0.7})
    assert (curve[0.0].n_edits, curve[0.0].n_true, curve[0.0].n_recalled) == (3, 2, 2)
    assert (curve[0.5].n_edits, curve[0.5].precision, curve[0.5].recall) == (2, 1.0, 1.0)
    assert (curve[0.7].n_edits, curve[0.7].recall) == (1, 0.5)
    assert curve[0.95].n_edits == 0 and curve[0.95].precision is None and curve[0.95].recall == 0.0
    d: dict[str, Any] = strict.to_dict()
    assert d["edits"][0]["confidence"] == 0.9 and len(d["curve"]) == len(strict.curve)
    assert d["curve"][0] == {
        "threshold": 0.0,
        "n_edits": 3,
        "n_true": 2,
        "precision": 0.6667,
        "n_recalled": 2,
        "n_errors": 2,
        "recall": 1.0,
    }


def test_an_edit_without_confidence_is_always_kept() -> None:
    given = [_edit("s1-v1", DELETION, (0, 1), None)]  # two-reference edits carry none
    s = score_edits(_truth(), given, n_resamples=10, min_confidence=0.99)
    assert s.precision.n == 1 and all(p.n_edits == 1 for p in s.curve)


FIXTURE = Path(__file__).parents[1] / "fixtures" / "calib-miner"
BUNDLED_PANEL = "whisper-tiny.en,whisper-base,sphinx-en-us"


def test_real_panel_mishearings_fall_below_the_default_operating_point(run_cli, tmp_path: Path) -> None:
    """Real transcripts (tuning seed 101): the panel's shared mishearings score below the default
    operating point, the planted errors above; ``calib score`` prints the curve and marks the point."""
    out = tmp_path / "s.json"
    code, stdout, err = run_cli(
        "calib", "score", "--corpus", FIXTURE, "--preds", FIXTURE / "preds", "--panel", BUNDLED_PANEL,
        "--preset", "paper", "--min-confidence", str(DEFAULT_MIN_CONFIDENCE), "--json", out,
    )  # fmt: skip
    assert code == 0, err
    assert "precision-recall curve" in stdout and "<- operating point" in stdout
    d = json.loads(out.read_text())
    assert d["params"]["min_confidence"] == DEFAULT_MIN_CONFIDENCE
    every = {p["threshold"]: p for p in d["curve"]}[0.0]
    assert (every["n_true"], every["n_edits"], every["n_recalled"], every["n_errors"]) == (7, 11, 7, 8)
    # the scored edits: every one a planted error, each with its confidence
    assert [e["label"] for e in d["edits"]] == ["error"] * 7
    assert all(DEFAULT_MIN_CONFIDENCE <= e["confidence"] <= 1 for e in d["edits"])
    assert (d["precision"]["k"], d["precision"]["n"], d["recall"]["k"], d["recall"]["n"]) == (7, 7, 7, 8)


def test_the_report_section_shows_the_operating_point_and_the_curve(tmp_path: Path) -> None:
    from asr_audit.calib.score import score_miner
    from asr_audit.calib.truth import load_truth
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.report.html import ReportContext
    from asr_audit.report.sections import miner_calibration_section

    pset = load_predictions(FIXTURE / "preds")
    panel = BUNDLED_PANEL.split(",")
    result = run_refdis(pset, panel, preset_params("paper", loo=False), models=panel, n_resamples=1)
    score = score_miner(load_truth(FIXTURE), result, clip_ids=pset.clip_ids, min_confidence=0.4).to_dict()
    sec = miner_calibration_section(ReportContext(tmp_path / "rep", {}), {"corpus": "calib", "result": score})
    assert "0.40 (operating point)" in sec.html and "7 / 7" in sec.html and "7 / 11" in sec.html
