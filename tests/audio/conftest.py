"""Fixtures for the audio transform and voice tests: short synthetic signals, an isolated cache."""

from __future__ import annotations

import numpy as np
import pytest

SR = 16_000


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test writes RIR/TTS caches into one temporary directory, never the user's cache."""
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "asr-audit-cache"))


@pytest.fixture()
def sine() -> np.ndarray:
    """2 s of a 220 Hz sine at amplitude 0.3 with a slow amplitude wobble (float32, 16 kHz)."""
    t = np.arange(2 * SR) / SR
    return (0.3 * np.sin(2 * np.pi * 220 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 1.5 * t))).astype(np.float32)
