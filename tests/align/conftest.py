"""Fixtures for the alignment tests: real clips in tests/align/fixtures (see NOTICE.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
LIBRIVOX_TEXT = "UNLESS TO BE RATHER COLD HEARTED AND RATHER SELFISH IS TO BE ILL DISPOSED"
ZORBLAX_TEXT = "Zorblax paid 2011 euros."
APPLES_TEXT = "She bought seven green apples at the market yesterday."


def read(name: str) -> np.ndarray:
    import soundfile as sf

    samples, sr = sf.read(str(FIXTURES / name), dtype="float32")
    assert sr == 16000 and samples.ndim == 1
    return samples


@pytest.fixture(scope="session")
def librivox() -> tuple[np.ndarray, str]:
    return read("librivox-0890.flac"), LIBRIVOX_TEXT


@pytest.fixture(scope="session")
def zorblax() -> tuple[np.ndarray, str]:
    return read("tts-zorblax.flac"), ZORBLAX_TEXT


@pytest.fixture(scope="session")
def apples() -> tuple[np.ndarray, str]:
    return read("tts-apples.flac"), APPLES_TEXT


@pytest.fixture(scope="session")
def sphinx_aligner():
    pytest.importorskip("pocketsphinx")
    from asr_audit.align.sphinx import SphinxAligner

    return SphinxAligner()
