"""Data shipped with asr-audit (see each folder's NOTICE)."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).parent
VOXPOPULI_EXAMPLES = DATA_DIR / "voxpopuli"
VOXPOPULI_PANEL = ("wav2vec2-base-960h", "whisper-tiny.en", "whisper-base.en", "whisper-small.en")
LIBRIVOX = DATA_DIR / "librivox"  # three real LibriVox clips (BSD-2 / public domain, see NOTICE.md)
LIBRIVOX_MANIFEST = LIBRIVOX / "manifest.jsonl"
