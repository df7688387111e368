"""Load, validate and resample clip audio: every backend sees float32, 16 kHz, mono.

Any sample rate is resampled with soxr (HQ); several channels are averaged. A clip is rejected
with a :class:`ClipAudioError` naming the clip and the reason when its file is missing or
unreadable, has no samples, holds NaN/inf, or is longer than the backend's ``max_duration``.

A clip's ``audio_path`` may be an fsspec URL (``s3://``, ``gs://``, ``hf://``, ``file://``): it is
read through fsspec, so a Ray worker reads the audio where it runs (``docs/scale.md``).

The audio content hash (sha256 of the 16 kHz float32 little-endian bytes) is the store key of
the audio: the same sound reached through two paths or corpora is transcribed once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asr_audit.corpus.clips import Clip
from asr_audit.errors import InputFileError, require

SAMPLE_RATE = 16_000
Seconds = float


class ClipAudioError(InputFileError):
    """A clip whose audio cannot be used; ``reason`` is the short cause for run summaries."""

    def __init__(self, clip: Clip, reason: str, fix: str) -> None:
        self.clip_id = clip.id
        self.reason = reason
        super().__init__(f"{clip.audio_label} (clip {clip.id!r})", reason, fix)


@dataclass(frozen=True, slots=True, eq=False)
class LoadedAudio:
    """A clip's decoded audio with what the store needs to key it."""

    clip: Clip
    samples: np.ndarray  # float32, 16 kHz, mono
    audio_hash: str
    source_rate: int
    source_channels: int

    @property
    def duration(self) -> Seconds:
        return len(self.samples) / SAMPLE_RATE


def audio_hash(samples: np.ndarray) -> str:
    """sha256 of 16 kHz float32 samples as little-endian bytes.

    >>> audio_hash(np.zeros(2, dtype=np.float32))[:12]
    'af5570f5a181'
    """
    data = np.ascontiguousarray(samples, dtype="<f4")
    return hashlib.sha256(data.tobytes()).hexdigest()


def to_mono_16k(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    """Average channels and resample to 16 kHz (soxr HQ). Pure; returns float32."""
    x = np.asarray(samples, dtype=np.float32)
    if x.ndim == 2:
        x = x.mean(axis=1, dtype=np.float32) if x.shape[1] > 1 else x[:, 0]
    elif x.ndim != 1:
        raise ValueError(f"expected samples shaped (n,) or (n, channels), got {x.shape}")
    if sample_rate != SAMPLE_RATE:
        soxr = require("soxr", "audio")
        x = soxr.resample(x, sample_rate, SAMPLE_RATE, quality="HQ")
    return np.ascontiguousarray(x, dtype=np.float32)


def is_url(path: str) -> bool:
    """Whether a clip's ``audio_path`` is an fsspec URL (``s3://``, ``gs://``, ``hf://``, ``file://`` ...).

    >>> is_url("s3://bucket/a.flac"), is_url("/data/a.flac")
    (True, False)
    """
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.replace("+", "").replace("-", "").isalnum()


def _read_url(clip: Clip, url: str) -> tuple[np.ndarray, int]:
    """Read audio through fsspec (whatever file systems are installed: s3fs, gcsfs, huggingface_hub)."""
    import io

    fsspec = require("fsspec", "ray")
    sf = require("soundfile", "audio")
    try:
        with fsspec.open(url, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ClipAudioError(clip, "audio file not found", "check the URL in the corpus, or remove the clip") from None
    except Exception as exc:  # noqa: BLE001 - a missing file system package, credentials, network: recorded for the clip
        raise ClipAudioError(
            clip,
            f"cannot read the URL ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})",
            "install the fsspec file system for its scheme (s3fs, gcsfs, huggingface_hub) and check credentials",
        ) from None
    try:
        samples, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as exc:  # noqa: BLE001 - soundfile raises LibsndfileError / RuntimeError / TypeError
        raise ClipAudioError(
            clip,
            f"unreadable audio ({' '.join(str(exc).split())[:120]})",
            "re-encode the file as WAV or FLAC (e.g. with sox or ffmpeg)",
        ) from None
    return samples, int(sr)


def _read(clip: Clip, max_duration: Seconds | None = None) -> tuple[np.ndarray, int]:
    if clip.audio_path is not None and is_url(clip.audio_path):
        return _read_url(clip, clip.audio_path)
    if clip.audio_path is not None:
        path = Path(clip.audio_path)
        if not path.is_file():
            raise ClipAudioError(clip, "audio file not found", "check the path in the corpus, or remove the clip")
        sf = require("soundfile", "audio")
        if max_duration is not None:  # the header's length first: never decode 2 hours to reject them
            try:
                info = sf.info(str(path))
                seconds = info.frames / info.samplerate if info.samplerate > 0 else None
            except Exception:  # noqa: BLE001 - an unreadable header fails in sf.read below, with its reason
                seconds = None
            if seconds is not None:
                check_duration(clip, seconds, max_duration)
        try:
            samples, sr = sf.read(str(path), dtype="float32", always_2d=True)
        except Exception as exc:  # noqa: BLE001 - soundfile raises LibsndfileError / RuntimeError / TypeError
            raise ClipAudioError(
                clip,
                f"unreadable audio ({' '.join(str(exc).split())[:120]})",
                "re-encode the file as WAV or FLAC (e.g. with sox or ffmpeg)",
            ) from None
        return samples, int(sr)
    assert clip.source is not None  # Clip.__post_init__ guarantees one of the two
    try:
        samples, sr = clip.source.load()
    except ClipAudioError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of one clip is recorded for that clip; the run goes on
        raise ClipAudioError(
            clip,
            f"unreadable audio ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})",
            "check the dataset's audio column",
        ) from None
    return np.asarray(samples), int(sr)


def check_duration(clip: Clip, seconds: Seconds, max_duration: Seconds | None) -> None:
    """Raise :class:`ClipAudioError` when ``seconds`` exceeds the backend's ``max_duration``."""
    if max_duration is not None and seconds > max_duration:
        raise ClipAudioError(
            clip,
            f"audio is {seconds:.1f} s, longer than the backend's maximum {max_duration:g} s",
            "split the clip into shorter segments, or use a backend without that limit",
        )


def load_clip_audio(clip: Clip, max_duration: Seconds | None = None) -> LoadedAudio:
    """Decode, validate and convert a clip's audio; see the module docstring for rejections."""
    raw, sr = _read(clip, max_duration)
    if sr <= 0:
        raise ClipAudioError(clip, f"invalid sample rate {sr}", "re-encode the file with a valid sample rate")
    channels = 1 if raw.ndim == 1 else int(raw.shape[1])
    if raw.size == 0 or raw.shape[0] == 0:
        raise ClipAudioError(clip, "audio is empty (0 samples)", "remove the clip or replace its audio")
    if not np.all(np.isfinite(raw)):
        bad = int(np.size(raw) - np.count_nonzero(np.isfinite(raw)))
        raise ClipAudioError(clip, f"audio holds {bad} NaN/inf sample(s)", "regenerate or re-encode the audio")
    check_duration(clip, raw.shape[0] / sr, max_duration)
    samples = to_mono_16k(raw, sr)
    if samples.size == 0:
        raise ClipAudioError(clip, "audio is shorter than one sample at 16 kHz", "remove the clip")
    return LoadedAudio(clip, samples, audio_hash(samples), sr, channels)


def load_audio(clip: Clip, max_duration: Seconds | None = None) -> np.ndarray:
    """The clip's audio as float32, 16 kHz, mono (see :func:`load_clip_audio`)."""
    return load_clip_audio(clip, max_duration).samples
