"""Test helpers shared by tests/corpus, tests/audio, tests/store and tests/models (tests/conftest.py
puts this folder on ``sys.path``, so they import as ``audio_fixtures``).

The audio is three LibriVox clips shipped in src/asr_audit/data/librivox (linked as tests/support/fixtures/librivox) (see its NOTICE.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

LIBRIVOX = Path(__file__).parent / "fixtures" / "librivox"


# the three shortest of the five shipped clips keep these tests fast
SUBSET = ("0880", "0890", "0930")


def librivox_refs() -> dict[str, str]:
    lines = (LIBRIVOX / "transcription.txt").read_text().splitlines()
    return {k: v for k, v in (line.split(" ", 1) for line in lines if line.strip()) if k in SUBSET}


def build_librispeech(root: Path, speaker: str = "19", chapter: str = "198") -> Path:
    """A LibriSpeech-layout split folder holding the fixture clips."""
    d = root / "test-clean" / speaker / chapter
    d.mkdir(parents=True)
    lines = []
    for n, ref in sorted(librivox_refs().items()):
        utt = f"{speaker}-{chapter}-{n}"
        shutil.copy(LIBRIVOX / f"{n}.flac", d / f"{utt}.flac")
        lines.append(f"{utt} {ref}")
    (d / f"{speaker}-{chapter}.trans.txt").write_text("\n".join(lines) + "\n")
    return root / "test-clean"


def write_wav(path: Path, samples: np.ndarray, sr: int, subtype: str | None = None) -> Path:
    import soundfile as sf

    sf.write(str(path), samples, sr, subtype=subtype)
    return path


def read_clip(name: str) -> tuple[np.ndarray, int]:
    import soundfile as sf

    samples, sr = sf.read(str(LIBRIVOX / f"{name}.flac"), dtype="float32")
    return samples, sr


def write_manifest_rows(path: Path, rows: list[dict]) -> Path:
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# clip id -> the reason word expected in its failure message (None: must succeed)
BAD_MANIFEST_EXPECT = {
    "good": None,
    "stereo8k": None,
    "missing": "not found",
    "corrupt": "unreadable",
    "empty": "empty",
    "nan": "NaN",
    "long45": "longer than",
}


def build_bad_manifest(root: Path) -> Path:
    """A manifest of one good clip, one valid 8 kHz stereo clip and five broken ones."""
    import soxr

    root.mkdir(parents=True, exist_ok=True)
    refs = librivox_refs()
    x, sr = read_clip("0930")
    write_wav(root / "good.wav", x, sr)
    y, _ = read_clip("0880")
    y8 = soxr.resample(y, sr, 8000)
    write_wav(root / "stereo8k.wav", np.stack([y8, 0.5 * y8], axis=1), 8000)
    (root / "corrupt.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEnot really audio" * 10)
    write_wav(root / "empty.wav", np.zeros(0, dtype=np.float32), 16000)
    nan = x.copy()
    nan[100:110] = np.nan
    write_wav(root / "nan.wav", nan, sr, subtype="FLOAT")
    z, _ = read_clip("0890")
    write_wav(root / "long45.wav", np.tile(z, int(np.ceil(45 * sr / len(z))))[: 45 * sr], sr)
    rows = [
        {"audio_filepath": "good.wav", "text": refs["0930"], "id": "good"},
        {"audio_filepath": "stereo8k.wav", "text": refs["0880"], "id": "stereo8k"},
        {"audio_filepath": "missing.wav", "text": "nothing here", "id": "missing"},
        {"audio_filepath": "corrupt.wav", "text": "garbage", "id": "corrupt"},
        {"audio_filepath": "empty.wav", "text": "", "id": "empty"},
        {"audio_filepath": "nan.wav", "text": refs["0930"], "id": "nan"},
        {"audio_filepath": "long45.wav", "text": "long", "id": "long45"},
    ]
    return write_manifest_rows(root / "bad.jsonl", rows)


def build_gain_manifest(
    root: Path, gains: tuple[float, ...] = (1.0, 0.8), names: tuple[str, ...] | None = None
) -> Path:
    """Each fixture clip at each gain, as 16 kHz WAV: distinct audio, so distinct store keys."""
    root.mkdir(parents=True, exist_ok=True)
    refs = librivox_refs()
    rows = []
    for n, ref in sorted(refs.items()):
        if names is not None and n not in names:
            continue
        x, sr = read_clip(n)
        for g in gains:
            name = f"{n}_g{int(round(g * 100))}.wav"
            write_wav(root / name, (x * g).astype(np.float32), sr)
            rows.append({"audio_filepath": name, "text": ref, "duration": round(len(x) / sr, 4)})
    return write_manifest_rows(root / "gains.jsonl", rows)
