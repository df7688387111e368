"""The cache's publish rule: a complete entry another process published is never deleted under its
readers; a half entry is replaced (``asr_audit.paths.publish_dir``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from asr_audit.paths import publish_dir


def _complete(d: Path) -> bool:
    return (d / "model.bin").is_file()


def _built(root: Path, name: str, payload: bytes) -> Path:
    d = root / name
    d.mkdir()
    (d / "model.bin").write_bytes(payload)
    return d


def test_a_lost_race_keeps_the_published_entry(tmp_path: Path) -> None:
    target = _built(tmp_path, "entry", b"first")
    reader = (target / "model.bin").open("rb")  # another process is reading the entry
    tmp = _built(tmp_path, "entry.tmp2", b"second")
    publish_dir(tmp, target, _complete)
    assert (target / "model.bin").read_bytes() == b"first" and reader.read() == b"first"
    assert tmp.is_dir()  # left for the caller's cleanup
    reader.close()


def test_a_missing_or_half_entry_is_replaced(tmp_path: Path) -> None:
    tmp = _built(tmp_path, "a.tmp1", b"new")
    publish_dir(tmp, tmp_path / "a", _complete)
    assert (tmp_path / "a" / "model.bin").read_bytes() == b"new" and not tmp.exists()
    half = tmp_path / "b"
    (half / "sub").mkdir(parents=True)  # no model.bin: not complete
    publish_dir(_built(tmp_path, "b.tmp1", b"whole"), half, _complete)
    assert (half / "model.bin").read_bytes() == b"whole" and not (half / "sub").exists()


def test_a_real_failure_is_not_taken_for_a_lost_race(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        publish_dir(tmp_path / "never-built", tmp_path / "c", _complete)
