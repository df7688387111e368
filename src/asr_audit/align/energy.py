"""Energy-based refinement of word spans: trim silence that an aligner left inside a word.

Whisper's attention DTW starts the first word at the first frame and lets words run into the
pauses after them. :func:`trim_to_speech` shrinks each span to the 20 ms frames whose energy
rises above a per-clip threshold (``max(noise floor + 10 dB, loud level - 45 dB)``, with floor
and loud level the 10th and 99th percentiles of frame energy). A span with no such frame is left
as it is, so no word vanishes; spans only ever shrink, so order and monotonicity are kept.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from asr_audit.align.records import WordTiming

SAMPLE_RATE = 16_000
FRAME = 320  # 20 ms
_FLOOR_DB = -100.0


def frame_energy_db(samples: np.ndarray, frame: int = FRAME) -> np.ndarray:
    """RMS energy in dBFS of consecutive ``frame``-sample frames (the last one zero-padded).

    >>> frame_energy_db(np.ones(640, dtype=np.float32)).round(1).tolist()
    [0.0, 0.0]
    """
    x = np.asarray(samples, dtype=np.float64)
    n = max(1, int(np.ceil(x.size / frame)))
    x = np.pad(x, (0, n * frame - x.size)).reshape(n, frame)
    rms = np.sqrt(np.mean(x * x, axis=1))
    return np.maximum(20 * np.log10(np.maximum(rms, 1e-12)), _FLOOR_DB)


def speech_threshold_db(energy: np.ndarray) -> float:
    """The energy above which a frame counts as speech (see the module docstring)."""
    floor, loud = np.percentile(energy, 10), np.percentile(energy, 99)
    return float(max(floor + 10.0, loud - 45.0))


def trim_to_speech(words: tuple[WordTiming, ...], samples: np.ndarray) -> tuple[WordTiming, ...]:
    """Shrink each word's span to its first..last frame above the speech threshold."""
    energy = frame_energy_db(samples)
    loud = energy > speech_threshold_db(energy)
    step = FRAME / SAMPLE_RATE
    duration = len(samples) / SAMPLE_RATE
    out = []
    for w in words:
        a, b = int(np.floor(w.start / step + 1e-6)), int(np.ceil(w.end / step - 1e-6))
        idx = np.flatnonzero(loud[a:b])
        if w.end <= w.start or idx.size == 0:
            out.append(w)
            continue
        start = max(w.start, (a + idx[0]) * step)
        end = min(w.end, (a + idx[-1] + 1) * step, duration)
        out.append(dataclasses.replace(w, start=round(start, 4), end=round(max(end, start), 4)))
    return tuple(out)
