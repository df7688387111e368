"""Issue 12 defects 9, 11 and 15 below the CLI matrix: the output-path checks, the failure summary
that never prints 100,000 lines, and the audio header read before a long file is decoded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from asr_audit.errors import ConfigError
from asr_audit.outputs import MARKER, check_output_dir, check_output_file, mark_output_dir

if TYPE_CHECKING:
    from asr_audit.store.export import PredictionRecord


def test_output_dir_accepts_new_empty_and_marked(tmp_path: Path) -> None:
    assert check_output_dir(tmp_path / "new", "--out") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    check_output_dir(tmp_path / "empty", "--out")
    marked = mark_output_dir(tmp_path / "marked")
    (marked / "report.html").write_text("x")
    check_output_dir(marked, "--out")
    assert (marked / MARKER).is_file()


@pytest.mark.parametrize("force", [False, True])
def test_output_dir_refuses_root_and_home_even_forced(force: bool, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError, match="file-system root; fix: "):
        check_output_dir(Path("/"), "--out", force)
    with pytest.raises(ConfigError, match="home folder; fix: "):
        check_output_dir(Path("~"), "--out", force)


def test_output_dir_refuses_foreign_nonempty_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match=r"not asr-audit output .*fix: .*--force"):
        check_output_dir(tmp_path, "--out")
    check_output_dir(tmp_path, "--out", force=True)
    assert (tmp_path / "notes.txt").read_text() == "mine"  # nothing touched


def test_output_file_refuses_folders_and_paths_under_files(tmp_path: Path) -> None:
    assert check_output_file(None, "--json") is None
    with pytest.raises(ConfigError, match="is a folder"):
        check_output_file(tmp_path, "--json")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="lies under the file"):
        check_output_file(tmp_path / "f" / "deeper" / "r.json", "--json")


def test_failures_are_summarized_not_listed(capsys: pytest.CaptureFixture[str]) -> None:
    from asr_audit.cli.common import FAILURES_SHOWN, print_failures

    failures = [{"clip_id": f"clip{i}", "reason": f"audio file not found: /data/a/{i}.wav"} for i in range(100_000)]
    failures += [{"clip_id": "x", "reason": "HTTP 429 after 5 attempts"}]
    print_failures(failures, "clip(s) failed")
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) <= FAILURES_SHOWN + 6, len(lines)
    assert "100001 clip(s) failed" in err
    assert "and 99991 more" in err
    assert re.search(r"99990 x audio file not found", err)  # alike reasons counted together
    assert "1 x HTTP" in err


def test_long_wav_rejected_from_its_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clip longer than the backend's limit fails before its samples are decoded (defect 15)."""
    sf = pytest.importorskip("soundfile")
    from asr_audit.audio import io
    from asr_audit.corpus.clips import Clip

    path = tmp_path / "long.wav"
    sf.write(str(path), np.zeros(8000 * 40, dtype=np.float32), 8000)  # 40 s
    clip = Clip(id="long", reference="x", audio_path=str(path), corpus="c")

    def no_decode(*a: object, **k: object) -> None:
        raise AssertionError("decoded a clip its header already rejects")

    monkeypatch.setattr(sf, "read", no_decode)
    with pytest.raises(io.ClipAudioError, match=r"audio is 40.0 s, longer than the backend's maximum 30 s"):
        io.load_clip_audio(clip, max_duration=30)
    monkeypatch.undo()
    assert io.load_clip_audio(clip, max_duration=None).duration == pytest.approx(40.0)


def _record(hyp: str, ref: str = "a b") -> PredictionRecord:
    from asr_audit.store.export import PredictionRecord

    return PredictionRecord(clip_id="c1", reference=ref, hypothesis=hyp, duration=1.0, time=0.1)


def test_prediction_file_on_a_full_disk_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    from asr_audit import outputs
    from asr_audit.errors import InputFileError
    from asr_audit.store import export

    class Full:
        def __init__(self, fd: int, *a: object) -> None:
            os.close(fd)

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *a: object) -> None:
            return None

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outputs.os, "fdopen", Full)  # write_predictions writes through outputs.write_atomic
    with pytest.raises(InputFileError, match=r"p\.jsonl: disk full; fix: free disk space"):
        export.write_predictions(tmp_path / "p.jsonl", [_record("a b")])
    assert list(tmp_path.iterdir()) == []  # no half-written file, no temporary left


def test_prediction_file_with_a_lone_surrogate_is_one_line(tmp_path: Path) -> None:
    from asr_audit.errors import InputFileError
    from asr_audit.store.export import write_predictions

    with pytest.raises(InputFileError, match="lone surrogate"):
        write_predictions(tmp_path / "p.jsonl", [_record("a \ud800")])
    assert write_predictions(tmp_path / "q.jsonl", [_record("a b")]).read_text().count("\n") == 1
