"""Cut a long recording into utterances at its pauses (pure functions over 16 kHz samples).

Frames of 20 ms count as speech when their energy rises above the per-recording threshold of
:func:`asr_audit.align.energy.speech_threshold_db` (or, in a recording with under 20 dB between its
quiet and loud frames, within 20 dB of its loud level). A pause is a run of non-speech frames at least
``min_pause`` long. From the first speech frame on, each utterance ends at the *longest* pause
that leaves it between ``min_s`` and ``max_s`` seconds (the later one on a tie); when no pause
lies in that window it is cut at ``max_s`` (``forced``). Utterances keep ``pad`` seconds of the
pause on either side; a tail shorter than ``min_s`` joins the previous utterance when the two fit
in ``max_s``, and is dropped as too short otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from asr_audit.align.energy import FRAME, SAMPLE_RATE, frame_energy_db, speech_threshold_db

MIN_RANGE_DB = 20.0  # below this spread between quiet and loud frames, the recording has no floor
SILENT_DB = -60.0  # a recording whose loud level stays below this has no speech

FRAME_S = FRAME / SAMPLE_RATE


@dataclass(frozen=True, slots=True)
class Segment:
    """One utterance: [start, end) in seconds; ``forced`` when no pause allowed a cut."""

    start: float
    end: float
    forced: bool = False

    @property
    def duration(self) -> float:
        return self.end - self.start


def pauses(speech: np.ndarray, min_frames: int) -> list[tuple[int, int]]:
    """[start, stop) frame runs of ``~speech`` at least ``min_frames`` long, strictly inside the speech.

    >>> pauses(np.array([1, 0, 0, 1, 0, 1, 1, 0, 0, 0], bool), 2)
    [(1, 3)]
    """
    idx = np.flatnonzero(speech)
    if idx.size == 0:
        return []
    first, last = int(idx[0]), int(idx[-1])
    out = []
    run_start = None
    for i in range(first, last + 1):
        if not speech[i]:
            if run_start is None:
                run_start = i
        elif run_start is not None:
            if i - run_start >= min_frames:
                out.append((run_start, i))
            run_start = None
    return out


def segment_speech(
    samples: np.ndarray,
    *,
    min_s: float = 2.0,
    max_s: float = 20.0,
    min_pause: float = 0.25,
    pad: float = 0.1,
) -> list[Segment]:
    """Utterances of a 16 kHz mono recording (see the module docstring)."""
    if not 0 < min_s < max_s:
        raise ValueError(f"need 0 < min_s < max_s, got {min_s}, {max_s}")
    energy = frame_energy_db(samples)
    loud = float(np.percentile(energy, 99))
    if loud < SILENT_DB:
        return []
    threshold = speech_threshold_db(energy)
    if loud - float(np.percentile(energy, 10)) < MIN_RANGE_DB:  # (almost) no quiet frames: speech throughout
        threshold = loud - MIN_RANGE_DB
    speech = energy > threshold
    idx = np.flatnonzero(speech)
    if idx.size == 0:
        return []
    total = len(samples) / SAMPLE_RATE
    first, last = int(idx[0]) * FRAME_S, (int(idx[-1]) + 1) * FRAME_S
    gaps = [(a * FRAME_S, b * FRAME_S) for a, b in pauses(speech, max(1, round(min_pause / FRAME_S)))]
    out: list[Segment] = []
    start = first
    while last - start > 1e-9:
        if last - start <= max_s:
            out.append(Segment(start, last))
            break
        window = [(b - a, a, b) for a, b in gaps if start + min_s <= a and a - start <= max_s]
        if window:
            _, a, b = max(window)
            out.append(Segment(start, a))
            start = b
        else:
            out.append(Segment(start, start + max_s, forced=True))
            start += max_s
    if len(out) > 1 and out[-1].duration < min_s:
        tail, prev = out.pop(), out.pop()
        if tail.end - prev.start <= max_s:
            out.append(Segment(prev.start, tail.end, prev.forced))
        else:
            out.append(prev)
    if out and out[0].duration < min_s and len(out) == 1:
        return []
    return [Segment(max(0.0, s.start - pad), min(total, s.end + pad), s.forced) for s in out]
