"""Audio verification with a real scoring model (Whisper tiny.en in PyTorch) on the shipped LibriVox
clips: a spurious opener added to the reference is verified as wrong, a word the panel dropped
but the reader said is verified as right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.data import LIBRIVOX_MANIFEST

pytestmark = pytest.mark.slow


def test_the_audio_prefers_what_was_said(tmp_path: Path, run_cli) -> None:
    rows = [json.loads(x) for x in LIBRIVOX_MANIFEST.read_text().splitlines() if x.strip()][:3]
    preds = tmp_path / "preds"
    preds.mkdir()
    for m in ("p1", "p2", "p3", "p4"):
        lines = []
        for i, r in enumerate(rows):
            ref = f"Madam President, {r['text']}" if i == 0 else r["text"]
            words = r["text"].lower().split()
            hyp = " ".join(words[:-1]) if i == 1 else " ".join(words)  # the panel drops the last word of clip 1
            lines.append(json.dumps({"audio_filepath": r["audio_filepath"], "text": ref, "pred_text": hyp}))
        (preds / f"{m}.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "clean.jsonl"
    code, _, err = run_cli(
        "refdis", "--preds", preds, "--panel", "p1,p2,p3,p4", "--no-loo", "--preset", "paper", "--write-corrected", out,
        "--verify-with", "whisper-tiny.en-pt", "--audio-root", LIBRIVOX_MANIFEST.parent,
    )  # fmt: skip
    assert code == 0, err
    got = {json.loads(x)["audio_filepath"]: json.loads(x) for x in out.read_text().splitlines()}
    opener = got[rows[0]["audio_filepath"]]["changes"]
    assert [c["from"] for c in opener] == ["madam president"]
    assert opener[0]["audio_verification"]["prefers"] == "corrected"
    dropped = got[rows[1]["audio_filepath"]]["changes"]
    assert dropped and dropped[0]["kind"] == "deletion"
    assert dropped[0]["audio_verification"]["prefers"] == "reference"


def test_refdis_verify_with_labels_the_edits(tmp_path: Path, run_cli) -> None:
    """``refdis --verify-with`` (no --write-corrected): the spurious opener is reference-wrong, the
    word the panel dropped is reference-right, and a model that copies the reference is scored on
    them; the verifier's own model, a panel member, is excluded and named."""
    rows = [json.loads(x) for x in LIBRIVOX_MANIFEST.read_text().splitlines() if x.strip()][:3]
    preds = tmp_path / "preds"
    preds.mkdir()
    for m in ("p1", "p2", "p3", "whisper-tiny.en", "copier"):
        lines = []
        for i, r in enumerate(rows):
            ref = f"Madam President, {r['text']}" if i == 0 else r["text"]
            words = r["text"].lower().split()
            hyp = ref if m == "copier" else " ".join(words[:-1]) if i == 1 else " ".join(words)
            lines.append(json.dumps({"audio_filepath": r["audio_filepath"], "text": ref, "pred_text": hyp}))
        (preds / f"{m}.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(
        "refdis", "--preds", preds, "--panel", "p1,p2,p3,whisper-tiny.en", "--no-loo", "--preset", "paper", "--json",
        out, "--verify-with", "whisper-tiny.en-pt", "--audio-root", LIBRIVOX_MANIFEST.parent,
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out.read_text())
    assert any("panel member whisper-tiny.en is a verifier" in n for n in data["verification"]["notes"])
    labels = {k.split("|")[0]: v["label"] for k, v in data["verification"]["audio"]["edits"].items()}
    assert labels == {rows[0]["audio_filepath"]: "reference-wrong", rows[1]["audio_filepath"]: "reference-right"}
    models = {m["model"]: m["verified"] for m in data["models"]}
    assert (models["copier"]["n_ref"], models["copier"]["n_eligible"]) == (1, 1)
    assert models["whisper-tiny.en"]["excluded"] and models["whisper-tiny.en"]["n_eligible"] == 0
    assert "audio verification by whisper-tiny.en-pt" in err
