"""The regression gate on the shipped VoxPopuli example predictions: decisions, exit codes, inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from asr_audit.cli import main
from asr_audit.errors import ConfigError, InputFileError

VOXPOPULI = Path(__file__).parents[2] / "fixtures" / "voxpopuli"
SMALL_PANEL = "whisper-tiny.en,whisper-base.en,distil-small.en"


def _gate(tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    out, md = tmp_path / "gate.json", tmp_path / "gate.md"
    rc = main(["gate", *args, "--no-loo", "--resamples", "500", "--json", str(out), "--markdown", str(md)])
    if rc == 2 and not out.exists():
        return rc, {}, ""
    return rc, json.loads(out.read_text()), md.read_text()


def test_a_worse_model_fails_and_the_reverse_passes(tmp_path: Path) -> None:
    """wav2vec2 (WER 20.8) against whisper-small.en (7.3): exit 1; swapped: exit 0 (one-sided)."""
    rc, d, md = _gate(
        tmp_path, "--preds", str(VOXPOPULI), "--candidate", "wav2vec2-base-960h", "--baseline", "whisper-small.en",
        "--panel", SMALL_PANEL,
    )  # fmt: skip
    assert rc == 1 and d["decision"] == "regression" and d["exit_code"] == 1
    wer = next(t for t in d["tests"] if t["measure"] == "wer")
    assert wer["status"] == "regression" and wer["lower_bound"] > wer["min_effect"] == 0.5
    assert wer["difference"] == pytest.approx(wer["candidate"] - wer["baseline"])
    assert abs(wer["candidate"] - 20.75) < 0.01 and abs(wer["baseline"] - 7.31) < 0.01
    assert md.startswith("### ❌ asr-audit gate: **wav2vec2-base-960h** regresses against **whisper-small.en**")
    assert "| WER | 20.75 | 7.31 | +13.44 |" in md
    rc, d, md = _gate(
        tmp_path, "--preds", str(VOXPOPULI), "--candidate", "whisper-small.en", "--baseline", "wav2vec2-base-960h",
        "--panel", SMALL_PANEL,
    )  # fmt: skip
    assert rc == 0 and d["decision"] == "pass" and md.startswith("### ✅")
    tests = {t["measure"]: t for t in d["tests"]}
    assert tests["wer"]["status"] == "pass" and tests["wer"]["difference"] < 0
    # unverified consensus edits: a better listener would raise accept-ref and inflation (issue 25)
    for m in ("accept_ref", "wer_inflation"):
        assert tests[m]["status"] == "not tested" and tests[m]["reason"].startswith("unverified consensus edits")


def test_two_result_files_equal_two_models_in_one_run(tmp_path: Path) -> None:
    """The candidate and baseline as files of their own give the same test as models of --preds."""
    args = ["--panel", "whisper-base.en,distil-small.en,wav2vec2-base-960h", "--min-effect", "wer=2"]
    _, by_name, _ = _gate(
        tmp_path, "--preds", str(VOXPOPULI), "--candidate", "whisper-tiny.en", "--baseline", "whisper-small.en", *args
    )
    _, by_file, _ = _gate(
        tmp_path, "--preds", str(VOXPOPULI), "--candidate", str(VOXPOPULI / "whisper-tiny.en.jsonl"),
        "--baseline", str(VOXPOPULI / "whisper-small.en.jsonl"), *args,
    )  # fmt: skip
    assert by_file["candidate"] == "candidate:whisper-tiny.en" and by_file["baseline"] == "baseline:whisper-small.en"
    assert by_file["tests"] == by_name["tests"]
    wer = next(t for t in by_name["tests"] if t["measure"] == "wer")
    assert wer["min_effect"] == 2.0 and wer["status"] == "pass" and wer["difference"] > 0  # worse, but not by 2 points


def test_too_few_clusters_is_undecided_with_exit_2(tmp_path: Path) -> None:
    """Clustered by the year of the session, the 150 clips are a handful of clusters: nothing is tested."""
    rc, d, md = _gate(
        tmp_path, "--preds", str(VOXPOPULI), "--candidate", "whisper-tiny.en", "--baseline", "whisper-small.en",
        "--panel", "whisper-base.en,distil-small.en,wav2vec2-base-960h", "--cluster-pattern", r"^(\d{4})",
    )  # fmt: skip
    assert rc == 2 and d["decision"] == "undecided" and d["clustering"] == r"pattern ^(\d{4})"
    assert all(t["status"] == "not tested" for t in d["tests"])
    assert "fewer than 30" in next(t["reason"] for t in d["tests"] if t["measure"] == "wer")
    assert md.startswith("### ⚠️ asr-audit gate: undecided")


def test_bad_inputs_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--preds", str(VOXPOPULI), "--panel", SMALL_PANEL, "--baseline", "whisper-small.en"]
    cases = [
        (
            ["--candidate", "nope"],
            "--candidate 'nope' is neither a model of the prediction folder nor a prediction file",
        ),
        (["--candidate", "whisper-small.en"], "are the same model 'whisper-small.en'"),
        (["--candidate", "distil-small.en", "--min-effect", "wer=x"], "--min-effect 'wer=x' is not a number"),
        (["--candidate", "distil-small.en", "--min-effect", "cer=1"], "'cer' is not a measure"),
        (["--candidate", "distil-small.en", "--measures", "wer,bleu"], "names an unknown measure"),
        (["--candidate", "distil-small.en", "--level", "0.7"], "--level 0.7 must be in (0, 0.5)"),
        (["--candidate", "distil-small.en", "--cluster-pattern", "zzz"], "has no group"),
        (["--candidate", "distil-small.en", "--cluster-pattern", "(zzz)"], "does not match clip id"),
    ]
    for extra, message in cases:
        assert main(["gate", *base, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "fix:" in err and len(err.strip().splitlines()) == 1, (extra, err)


def test_a_result_file_with_other_references_names_file_and_row(tmp_path: Path) -> None:
    from asr_audit.probes.predfiles.gate import gate_inputs

    rows = [json.loads(x) for x in (VOXPOPULI / "whisper-tiny.en.jsonl").read_text().splitlines()]
    rows[3]["text"] = "a different reference"
    cand = tmp_path / "cand.jsonl"
    cand.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputFileError, match=r"cand\.jsonl:4: clip .* has reference 'a different reference' here"):
        gate_inputs(str(VOXPOPULI), str(cand), "whisper-small.en")
    folder = tmp_path / "two"
    folder.mkdir()
    shutil.copy(VOXPOPULI / "whisper-base.en.jsonl", folder)
    with pytest.raises(ConfigError, match="fix: name a model of --preds"):
        gate_inputs(str(folder), "whisper-tiny.en", "whisper-base.en")


def test_contrast_equals_the_cluster_bootstrap_difference() -> None:
    """A two-column contrast draws the resamples cluster_bootstrap_difference draws: same bounds."""
    from asr_audit.stats.contrast import ratio_contrast
    from asr_audit.stats.intervals import cluster_bootstrap_difference

    rng = np.random.default_rng(3)
    num = rng.integers(0, 5, size=(40, 2)).astype(float)
    den = rng.integers(5, 20, size=(40, 2)).astype(float)
    est, low, high = cluster_bootstrap_difference(
        num[:, 0], den[:, 0], num[:, 1], den[:, 1], np.random.default_rng(7), 400, level=0.9
    )
    c = ratio_contrast(num, den, (1, -1), np.random.default_rng(7), n_resamples=400, alpha=0.05)
    assert (c.estimate, c.lower, c.upper) == pytest.approx((est, low, high))
    assert c.n_used == 400 and c.p_at_or_below is not None and 0 < c.p_at_or_below < 1


def test_markdown_escapes_model_names() -> None:
    from asr_audit.report.gate import gate_markdown, md_escape

    assert md_escape("a|b <img src=x>\nrow") == r"a\|b \<img src=x\> row"
    d = {
        "decision": "pass",
        "candidate": "evil|model",
        "baseline": "`base`",
        "options": {"level": 0.025, "bootstrap_resamples": 200},
        "tests": [],
        "mode": "two-reference",
        "panel": [],
        "n_clips": 3,
        "clustering": "clip",
        "n_edits": 0,
        "normalizer": {"name": "whisper"},
        "seed": 0,
    }
    md = gate_markdown(d)
    assert r"**evil\|model**" in md and r"**\`base\`**" in md


def test_gate_null_world_runs_the_real_gate() -> None:
    """One dataset of the gate's worlds: every setting tallied per world and pooled; the shipped
    gate (WER only without verified edits) passes a better listener; the largest planted copier
    is caught on verified edits in the family world (many true reference errors)."""
    from asr_audit.testing.null_worlds import calibrate

    rows = {r.setting: r for r in calibrate("gate", np.random.default_rng([0, 7]), 1, n_clips=200, grid=(0.6,))}
    shipped = "better listener vs weaker baseline, as shipped (no verification: WER only)"
    for world in ("independent", "commercial", "family", "wide", "all worlds"):
        assert rows[f"{world}: {shipped}"].k_null == 0
        assert rows[f"{world}: better listener vs weaker baseline, OLD gate on consensus edits"].retired
    assert rows["all worlds: equal models, default min effects, verified by planted truth"].n_null == 4
    assert rows["family: equal models, default min effects, verified by planted truth"].power[0.6] == (1, 1)


def test_verified_edits_gate_what_a_better_listener_cannot_move(tmp_path: Path) -> None:
    """With a verification, accept-ref is compared on edits labelled reference-wrong only: a
    verification that calls every edit reference-right leaves no judged edit to compare."""
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.gate import GateOptions, run_gate
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.verified import TRUTH, EditLabel, Verification

    preds = load_predictions(str(VOXPOPULI))
    params = preset_params(preset="anchor", loo=False)
    args = (preds, "whisper-small.en", "wav2vec2-base-960h", params)
    kw: dict[str, Any] = {"panel": SMALL_PANEL.split(","), "options": GateOptions(n_resamples=200)}
    old = {t.measure: t for t in run_gate(*args, **kw, unverified_edits=True).tests}
    assert old["accept_ref"].status != "not tested"
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.probes.predfiles.verified import edit_key

    mined = run_refdis(preds, SMALL_PANEL.split(","), params, models=list(args[1:3]))
    right = Verification(
        source=TRUTH, name="all right", labels={edit_key(e): EditLabel(label="reference-right") for e in mined.edits}
    )
    new = {t.measure: t for t in run_gate(*args, **kw, verification=right).tests}
    assert new["accept_ref"].status == "not tested" and new["accept_ref"].n_clusters == 0


def test_a_verification_step_labels_the_gates_own_edits() -> None:
    """``asr-audit gate --truth / --labels`` pass a step: it is called once on the run's every edit
    and gates as the verification it returns would."""
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.gate import GateOptions, run_gate
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.verified import TRUTH, EditLabel, Verification, edit_key

    preds = load_predictions(str(VOXPOPULI))
    params = preset_params(preset="anchor", loo=False)
    args = (preds, "whisper-small.en", "wav2vec2-base-960h", params)
    kw: dict[str, Any] = {"panel": SMALL_PANEL.split(","), "options": GateOptions(n_resamples=200)}
    seen: list[int] = []

    def step(edits):
        seen.append(len(edits))
        labels = {edit_key(e): EditLabel(label="reference-wrong") for e in edits}
        return Verification(source=TRUTH, name="all wrong", labels=labels)

    by_step = {t.measure: t for t in run_gate(*args, **kw, verification=step).tests}
    assert len(seen) == 1 and seen[0] > 0
    assert by_step["accept_ref"].status != "not tested"
    unverified = {t.measure: t for t in run_gate(*args, **kw, unverified_edits=True).tests}
    assert by_step["accept_ref"].difference == unverified["accept_ref"].difference  # every edit verified wrong


def test_gate_cli_refuses_two_verifications(tmp_path: Path, run_cli) -> None:
    labels = tmp_path / "labels.sqlite"
    labels.write_bytes(b"")
    code, _, err = run_cli(
        "gate", "--preds", VOXPOPULI, "--panel", SMALL_PANEL, "--candidate", "whisper-small.en",
        "--baseline", "wav2vec2-base-960h", "--truth", tmp_path, "--labels", labels,
    )  # fmt: skip
    assert code == 2 and "--truth and --labels" in err
