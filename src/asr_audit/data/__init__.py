"""Data shipped with asr-audit (see each folder's NOTICE)."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).parent
VOXPOPULI_EXAMPLES = DATA_DIR / "voxpopuli"
VOXPOPULI_PANEL = ("wav2vec2-base-960h", "whisper-tiny.en", "whisper-base.en", "whisper-small.en")
LIBRIVOX = DATA_DIR / "librivox"  # three real LibriVox clips (BSD-2 / public domain, see NOTICE.md)
LIBRIVOX_MANIFEST = LIBRIVOX / "manifest.jsonl"
# the demo's organism pair, trained once (low-rank float16 differences from Whisper tiny.en, MIT;
# asr_audit.organism.shipped; regenerate: python benchmarks/demo_organism.py --write)
DEMO_ORGANISM_MANIFEST = DATA_DIR / "organism" / "demo-pair.json"


def voxpopuli_texts() -> list[str]:
    """Every reference and hypothesis of the VoxPopuli examples, file by file (sorted), row by row.

    Real English text for normalizer checks and benchmarks: 5 files x 150 rows x 2 = 1,500 strings.
    """
    import json

    texts: list[str] = []
    for path in sorted(VOXPOPULI_EXAMPLES.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts += [row["text"], row["pred_text"]]
    return texts
