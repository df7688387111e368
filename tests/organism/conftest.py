"""Fixtures for the model-organism tests: isolated cache and organism folders."""

from __future__ import annotations

import pytest

import asr_audit.cli.organism  # noqa: F401  (registers `asr-audit organism` until the lead lists it in VERB_MODULES)


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path, tmp_path_factory, monkeypatch):
    """Model caches go to one shared temporary directory; organism deltas to a per-test one."""
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "asr-audit-cache"))
    monkeypatch.setenv("ASR_AUDIT_ORGANISM_DIR", str(tmp_path / "organism"))
