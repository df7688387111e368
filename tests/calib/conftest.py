"""Fixtures for the calibration-benchmark tests: an isolated cache and a fake synthesizer."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import asr_audit.cli.calib  # noqa: F401  (registers `asr-audit calib` until the lead lists it in VERB_MODULES)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """TTS and model caches go to one temporary directory, never the user's cache."""
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "asr-audit-cache"))


def fake_synthesize(voice: str, text: str) -> tuple[np.ndarray, int]:
    """A deterministic stand-in for TTS: a tone whose length and pitch follow the text and voice."""
    seed = int.from_bytes(hashlib.sha256(f"{voice}|{text}".encode()).digest()[:4], "big")
    n = 1600 * (1 + len(text.split()))
    t = np.arange(n) / 16000
    return (0.1 * np.sin(2 * np.pi * (200 + seed % 300) * t)).astype(np.float32), 16000


@pytest.fixture(scope="session")
def fake_tts():
    return fake_synthesize
