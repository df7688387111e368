"""Fixtures for store tests; helpers live in tests/corpus_audio/audio_fixtures.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus_audio"))

from audio_fixtures import build_librispeech  # noqa: E402


@pytest.fixture()
def librispeech_dir(tmp_path: Path) -> Path:
    return build_librispeech(tmp_path)
