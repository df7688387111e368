"""Paths of the audio-probe test fixtures (importable by name: conftest puts this folder on sys.path)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
MANIFEST = FIXTURES / "manifest.jsonl"
