"""Small pure signal helpers shared by the transforms: levels, time <-> samples, length fitting.

Every function returns a new array and never modifies its input. Levels are computed in float64
and results are returned as float32.
"""

from __future__ import annotations

import math

import numpy as np

from asr_audit.errors import AuditError, require

Seconds = float
Decibels = float


class TransformError(AuditError):
    """A transform cannot be applied to this audio (a span outside the clip, a silent clip, ...)."""


def check_samples(samples: np.ndarray, sr: int) -> np.ndarray:
    """Validate mono float audio and return it as a contiguous float32 array (a copy if converted).

    >>> check_samples(np.zeros(3), 16000).dtype
    dtype('float32')
    """
    if not isinstance(sr, (int, np.integer)) or isinstance(sr, bool) or sr <= 0:
        raise TransformError(f"sample rate must be a positive integer, got {sr!r}; fix: pass sr=16000")
    x = np.asarray(samples)
    if x.ndim != 1:
        raise TransformError(
            f"expected mono samples shaped (n,), got shape {x.shape}; "
            "fix: average the channels first (asr_audit.audio.io.to_mono_16k)"
        )
    if x.size and not np.all(np.isfinite(x)):
        raise TransformError("samples hold NaN/inf values; fix: regenerate or re-encode the audio")
    return np.ascontiguousarray(x, dtype=np.float32)


def to_samples(t: Seconds, sr: int) -> int:
    """Seconds to the nearest sample index (round half to even, as :func:`round`).

    >>> to_samples(0.25, 16000), to_samples(-1.0, 16000)
    (4000, -16000)
    """
    return int(round(float(t) * sr))


def power(x: np.ndarray) -> float:
    """Mean square in float64 (0.0 for an empty array)."""
    if x.size == 0:
        return 0.0
    x64 = np.asarray(x, dtype=np.float64)
    return float(np.dot(x64, x64) / x64.size)


def rms(x: np.ndarray) -> float:
    """Root mean square in float64.

    >>> round(rms(np.array([3.0, -3.0])), 6)
    3.0
    """
    return math.sqrt(power(x))


def db_to_amplitude(db: Decibels) -> float:
    """``10 ** (db / 20)``.

    >>> db_to_amplitude(20.0)
    10.0
    """
    return float(10.0 ** (db / 20.0))


def snr_db(signal: np.ndarray, noise: np.ndarray) -> Decibels:
    """Measured SNR ``10 log10(sum signal^2 / sum noise^2)`` in dB (inf when the noise is zero)."""
    ps, pn = power(signal), power(noise)
    if pn == 0.0:
        return math.inf
    if ps == 0.0:
        return -math.inf
    return 10.0 * math.log10(ps / pn)


def fit_length(x: np.ndarray, n: int, offset: int = 0) -> np.ndarray:
    """``x`` looped (or trimmed) to exactly ``n`` samples, starting ``offset`` samples in.

    >>> fit_length(np.array([1, 2, 3], dtype=np.float32), 7, offset=1).tolist()
    [2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0]
    """
    x = np.asarray(x, dtype=np.float32)
    if n < 0:
        raise ValueError(f"length must be >= 0, got {n}")
    if x.size == 0:
        raise TransformError("cannot loop an empty waveform; fix: pass a donor/noise clip with samples")
    idx = (np.arange(n, dtype=np.int64) + int(offset)) % x.size
    return np.ascontiguousarray(x[idx], dtype=np.float32)


def scale_to_rms(x: np.ndarray, target_rms: float) -> np.ndarray:
    """``x`` scaled to RMS ``target_rms`` (an all-zero ``x`` is returned unchanged)."""
    level = rms(x)
    if level == 0.0:
        return np.asarray(x, dtype=np.float32).copy()
    return (np.asarray(x, dtype=np.float64) * (target_rms / level)).astype(np.float32)


def resample(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Resample mono audio with soxr (HQ); identity (a copy) when the rates match."""
    x = np.asarray(x, dtype=np.float32)
    if sr_in == sr_out:
        return x.copy()
    soxr = require("soxr", "audio")
    return np.ascontiguousarray(soxr.resample(x, sr_in, sr_out, quality="HQ"), dtype=np.float32)


def fft_convolve(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Full linear convolution ``x * h`` (length ``len(x) + len(h) - 1``) by real FFT, float64."""
    n = x.size + h.size - 1
    if x.size == 0 or h.size == 0:
        return np.zeros(max(n, 0))
    size = 1 << (n - 1).bit_length()
    spec = np.fft.rfft(np.asarray(x, dtype=np.float64), size) * np.fft.rfft(np.asarray(h, dtype=np.float64), size)
    return np.fft.irfft(spec, size)[:n]


def fmt_num(x: float) -> str:
    """A short, stable decimal for ids: at most 3 decimals, no trailing zeros, ``neg`` for minus.

    >>> fmt_num(0.6), fmt_num(10.0), fmt_num(1.23456), fmt_num(-5)
    ('0.6', '10', '1.235', 'neg5')
    """
    text = f"{float(x):.3f}".rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0"
    return text.replace("-", "neg")
