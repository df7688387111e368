"""Whisper's log-mel input features, in numpy (no torch needed).

The recipe is Whisper's (and ``transformers.WhisperFeatureExtractor``'s): pad or cut the
16 kHz waveform to ``chunk_length`` seconds (30 s), a centred STFT (periodic Hann window,
reflect padding, ``n_fft`` 400, hop 160), power spectrum, Slaney-normalised mel filter bank
(80 or 128 bins, 0–8 kHz), ``log10`` with a 1e-10 floor, the last frame dropped, values
clipped to ``max - 8`` and mapped with ``(x + 4) / 4``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from asr_audit.errors import InputFileError


@dataclass(frozen=True, slots=True)
class MelSettings:
    """The preprocessor settings that define Whisper's features."""

    n_mels: int = 80
    n_fft: int = 400
    hop_length: int = 160
    sampling_rate: int = 16_000
    chunk_length: int = 30  # seconds

    @property
    def n_samples(self) -> int:
        return self.chunk_length * self.sampling_rate

    @property
    def n_frames(self) -> int:
        return self.n_samples // self.hop_length

    @classmethod
    def from_preprocessor_config(cls, path: str | Path, n_mels: int | None = None) -> MelSettings:
        """Read a Hugging Face ``preprocessor_config.json`` (``feature_size`` etc.)."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise InputFileError(
                path, f"cannot read preprocessor settings ({exc})", "restore the model's preprocessor_config.json"
            ) from exc
        default = cls()
        return cls(
            n_mels=int(data.get("feature_size", n_mels or default.n_mels)),
            n_fft=int(data.get("n_fft", default.n_fft)),
            hop_length=int(data.get("hop_length", default.hop_length)),
            sampling_rate=int(data.get("sampling_rate", default.sampling_rate)),
            chunk_length=int(data.get("chunk_length", default.chunk_length)),
        )


def _hz_to_mel(freq: np.ndarray) -> np.ndarray:
    """Slaney's mel scale: linear below 1 kHz, logarithmic above."""
    freq = np.asarray(freq, dtype=np.float64)
    min_log_hz, min_log_mel, logstep = 1000.0, 15.0, np.log(6.4) / 27.0
    mel = 3.0 * freq / 200.0
    return np.where(freq >= min_log_hz, min_log_mel + np.log(np.maximum(freq, 1e-10) / min_log_hz) / logstep, mel)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, dtype=np.float64)
    min_log_hz, min_log_mel, logstep = 1000.0, 15.0, np.log(6.4) / 27.0
    freq = 200.0 * mel / 3.0
    return np.where(mel >= min_log_mel, min_log_hz * np.exp(logstep * (mel - min_log_mel)), freq)


@lru_cache(maxsize=8)
def mel_filters(n_mels: int, n_fft: int = 400, sampling_rate: int = 16_000) -> np.ndarray:
    """Slaney-normalised triangular mel filters, shape ``(n_fft // 2 + 1, n_mels)``.

    >>> mel_filters(80).shape
    (201, 80)
    """
    fft_freqs = np.linspace(0.0, sampling_rate / 2, n_fft // 2 + 1)
    mel_pts = np.linspace(_hz_to_mel(np.array(0.0)), _hz_to_mel(np.array(sampling_rate / 2)), n_mels + 2)
    hz_pts = _mel_to_hz(mel_pts)
    fdiff = np.diff(hz_pts)
    ramps = hz_pts[None, :] - fft_freqs[:, None]  # (freq, n_mels + 2)
    lower = -ramps[:, :-2] / fdiff[:-1]
    upper = ramps[:, 2:] / fdiff[1:]
    filters = np.maximum(0.0, np.minimum(lower, upper))
    enorm = 2.0 / (hz_pts[2 : n_mels + 2] - hz_pts[:n_mels])
    filters = filters * enorm[None, :]
    filters.setflags(write=False)
    return filters


@lru_cache(maxsize=4)
def _hann(n_fft: int) -> np.ndarray:
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n_fft) / n_fft)  # periodic
    window.setflags(write=False)
    return window


def pad_or_trim(audio: np.ndarray, n_samples: int) -> np.ndarray:
    """Cut ``audio`` to ``n_samples`` or pad it with trailing zeros."""
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if audio.shape[0] >= n_samples:
        return audio[:n_samples]
    return np.pad(audio, (0, n_samples - audio.shape[0]))


_LOG_FLOOR = float(np.log10(np.float64(1e-10)))  # the log-mel of an all-zero frame


def log_mel(audio: np.ndarray, settings: MelSettings = MelSettings()) -> np.ndarray:
    """Log-mel features of one waveform, shape ``(n_mels, n_frames)``, float32.

    A clip shorter than the chunk is padded with zeros, and every STFT frame that lies wholly in
    that padding has power 0: only the frames that touch the clip are transformed, the rest take
    the floor directly (bit-for-bit what transforming the zeros gives; a 5 s clip transforms a
    sixth of the frames).

    >>> a = np.sin(np.arange(16_000, dtype=np.float32) / 7)
    >>> np.array_equal(log_mel(a), _log_mel_full(a, MelSettings()))
    True
    """
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    half, hop = settings.n_fft // 2, settings.hop_length
    if audio.shape[0] + settings.n_fft > settings.n_samples:
        return _log_mel_full(audio, settings)  # the end's reflect padding reaches the clip
    # the zero-padded clip with the centred STFT's reflect padding at the start; frames from
    # n_live on see only zeros
    head = pad_or_trim(audio, audio.shape[0] + settings.n_fft).astype(np.float64)
    x = np.concatenate([head[half:0:-1], head])
    n_live = (audio.shape[0] + half) // hop + 1
    log_spec = np.full((settings.n_frames + 1, settings.n_mels), _LOG_FLOOR)
    log_spec[:n_live] = np.log10(np.maximum(_mel_power(x, n_live, settings), 1e-10))
    return _normalise(log_spec)


def _mel_power(x: np.ndarray, n_frames: int, settings: MelSettings) -> np.ndarray:
    """Mel power of the first ``n_frames`` Hann-windowed frames of ``x``, shape ``(frames, n_mels)``."""
    frames = np.lib.stride_tricks.as_strided(
        x, shape=(n_frames, settings.n_fft), strides=(x.strides[0] * settings.hop_length, x.strides[0]), writeable=False
    )
    power = np.abs(np.fft.rfft(frames * _hann(settings.n_fft), axis=-1)) ** 2  # (frames, freq)
    return power @ mel_filters(settings.n_mels, settings.n_fft, settings.sampling_rate)


def _normalise(log_spec: np.ndarray) -> np.ndarray:
    """(frames + 1, n_mels) log10 mel power -> Whisper's (n_mels, frames) features."""
    log_spec = log_spec.T[:, :-1]
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return np.ascontiguousarray((log_spec + 4.0) / 4.0, dtype=np.float32)


def _log_mel_full(audio: np.ndarray, settings: MelSettings) -> np.ndarray:
    """Every frame transformed: the recipe as written."""
    x = pad_or_trim(audio, settings.n_samples).astype(np.float64)
    half = settings.n_fft // 2
    x = np.pad(x, (half, half), mode="reflect")
    n_frames = 1 + (x.shape[0] - settings.n_fft) // settings.hop_length
    return _normalise(np.log10(np.maximum(_mel_power(x, n_frames, settings), 1e-10)))


def batch_log_mel(audios: Sequence[np.ndarray], settings: MelSettings = MelSettings()) -> np.ndarray:
    """Stacked features of a batch, shape ``(batch, n_mels, n_frames)``."""
    return (
        np.stack([log_mel(a, settings) for a in audios])
        if audios
        else np.zeros((0, settings.n_mels, settings.n_frames), np.float32)
    )
