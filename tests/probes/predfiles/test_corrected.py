"""``refdis --write-corrected``: the cleaned benchmark on the VoxPopuli examples, its round trip
through the two-reference mode, and audio verification with a scoring test double."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL


@pytest.fixture(scope="module")
def cleaned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    from asr_audit.cli import main

    d = tmp_path_factory.mktemp("clean")
    args = ["refdis", "--preds", str(VOXPOPULI_EXAMPLES), "--panel", ",".join(VOXPOPULI_PANEL), "--resamples", "200"]
    assert main([*args, "--json", str(d / "r.json"), "--write-corrected", str(d / "clean.jsonl")]) == 0
    return d / "clean.jsonl", json.loads((d / "r.json").read_text())


def test_every_clip_once_with_its_changes(cleaned: tuple[Path, dict]) -> None:
    path, result = cleaned
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    originals = {}
    for f in VOXPOPULI_EXAMPLES.glob("*.jsonl"):
        for x in f.read_text().splitlines():
            r = json.loads(x)
            originals[r["audio_filepath"]] = r["text"].strip()
    assert [r["audio_filepath"] for r in rows] == sorted(originals)
    changed = [r for r in rows if r["changes"]]
    assert sum(len(r["changes"]) for r in rows) == result["n_edits"]
    assert {r["audio_filepath"] for r in changed} == {e["clip_id"] for e in result["edits"]}
    for r in rows:
        assert r["original_text"] == originals[r["audio_filepath"]]
        if not r["changes"]:
            assert r["text"] == r["original_text"] and r["text_form"] == "original"
        else:
            assert r["text_form"].startswith("normalized: whisper") and r["text"] != r["original_text"]
            for c in r["changes"]:
                assert c["kind"] in ("deletion", "substitution", "insertion") and "/" in c["panel_votes"]
                assert set(c["verdicts"]) == {"distil-small.en", *VOXPOPULI_PANEL}
                assert "audio_verification" not in c
    # a spurious opener the panel removed (docs/refdis.md's example), and one it heard differently
    madam = sorted((c["kind"], c["to"]) for r in changed for c in r["changes"] if c["from"] == "madam president")
    assert madam == [("deletion", ""), ("substitution", "dear colleagues")]


def test_the_cleaned_file_drives_the_two_reference_mode(cleaned: tuple[Path, dict], tmp_path: Path) -> None:
    """Re-scoring against the cleaned benchmark finds the panel's corrections as its diffs."""
    from asr_audit.cli import main

    path, panel = cleaned
    out = tmp_path / "two.json"
    args = ["refdis", "--preds", str(VOXPOPULI_EXAMPLES), "--corrected-refs", str(path), "--resamples", "200"]
    assert main([*args, "--json", str(out)]) == 0
    two = json.loads(out.read_text())
    assert two["mode"] == "two-reference" and two["n_edits"] == panel["n_edits"]
    assert sorted((e["clip_id"], e["kind"]) for e in two["edits"]) == sorted(
        (e["clip_id"], e["kind"]) for e in panel["edits"]
    )


class _Scorer:
    """TEST DOUBLE — scores a text by how many of its words the "audio" holds (one log-prob per word)."""

    capabilities = frozenset({"score"})

    def __init__(self, spoken: dict[str, str]) -> None:
        self.spoken = spoken

    def identity(self):
        from asr_audit.models.base import BackendIdentity, DecodeOptions

        return BackendIdentity("test-double:scorer", "0", DecodeOptions())

    def score(self, audios, prefixes, targets):
        from asr_audit.models.base import TokenScores

        said = set(self.spoken[str(int(audios[0][0]))].split())
        return [TokenScores(tuple(t.split()), tuple(-0.1 if w in said else -3.0 for w in t.split())) for t in targets]


def test_verification_records_what_the_audio_prefers() -> None:
    from asr_audit.errors import AuditError
    from asr_audit.probes.audio.verify import verify_changes
    from asr_audit.probes.predfiles.corrected import Change, CorrectedClip

    def change(cid: str, start: int, stop: int, to: tuple[str, ...]) -> Change:
        return Change(clip_id=cid, kind="deletion", position="start", start=start, stop=stop, reference=(),
                      replacement=to, votes=4, panel=4, miners=(), verdicts={})  # fmt: skip

    ref = ("madam", "president", "we", "agree")
    clips = [
        CorrectedClip(clip_id="1", original="", reference=ref, corrected=ref[2:], changes=(change("1", 0, 2, ()),)),
        CorrectedClip(clip_id="2", original="", reference=ref, corrected=ref[2:], changes=(change("2", 0, 2, ()),)),
        CorrectedClip(clip_id="3", original="", reference=ref, corrected=ref[2:], changes=(change("3", 0, 2, ()),)),
    ]
    spoken = {"1": "we agree", "2": "madam president we agree"}

    def load(cid: str) -> np.ndarray:
        if cid == "3":
            raise AuditError("3.wav: cannot read; fix: re-encode")
        return np.full(16000, float(cid), dtype=np.float32)

    got = verify_changes(clips, _Scorer(spoken), load)
    assert got[("1", 0)]["prefers"] == "corrected" and got[("1", 0)]["backend"] == "test-double:scorer"
    assert got[("2", 0)]["logp_reference"] == pytest.approx(-0.4) and got[("2", 0)]["logp_corrected"] == pytest.approx(
        -0.2
    )
    assert got[("2", 0)]["prefers"] == "tie"  # 0.2 nats: within the margin
    assert got[("3", 0)] == {"backend": "test-double:scorer", "error": "3.wav: cannot read; fix: re-encode"}


def test_write_corrected_errors(tmp_path: Path, run_cli) -> None:
    base = ["refdis", "--preds", VOXPOPULI_EXAMPLES]
    for args, message in (
        (["--panel", ",".join(VOXPOPULI_PANEL), "--verify-with", "whisper-tiny.en-pt"], "fix: set --audio-root"),
        (["--panel", ",".join(VOXPOPULI_PANEL), "--write-corrected", tmp_path / "c.jsonl", "--verify-with",
          "whisper-tiny.en-pt,whisper-base-pt", "--audio-root", tmp_path], "name one --verify-with backend"),
        (["--corrected-refs", VOXPOPULI_EXAMPLES / "whisper-tiny.en.jsonl", "--write-corrected", tmp_path / "c.jsonl"],
         "--write-corrected writes the panel's corrections"),
        (["--panel", ",".join(VOXPOPULI_PANEL), "--write-corrected", tmp_path / "c.jsonl", "--verify-with",
          "whisper-tiny.en-pt"], "fix: set --audio-root"),
    ):  # fmt: skip
        code, _, err = run_cli(*base, *args)
        assert code == 2 and message in err and "fix:" in err, (args, err)


def test_the_cleaned_file_gates_two_result_files_without_a_panel(cleaned: tuple[Path, dict], run_cli) -> None:
    path, _ = cleaned
    code, out, err = run_cli(
        "gate", "--candidate", VOXPOPULI_EXAMPLES / "whisper-tiny.en.jsonl", "--baseline",
        VOXPOPULI_EXAMPLES / "whisper-small.en.jsonl", "--corrected-refs", path, "--min-effect", "wer=2.5",
        "--resamples", "500",
    )  # fmt: skip
    assert code == 0, err
    assert "two-reference (corrected references)" in out and "| WER | 9.22 | 7.31 | +1.91 |" in out
