"""Audio loading: conversion to 16 kHz mono float32 and the rejections, each naming the clip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from audio_fixtures import BAD_MANIFEST_EXPECT, LIBRIVOX, build_bad_manifest, write_wav

from asr_audit.audio.io import ClipAudioError, audio_hash, load_audio, load_clip_audio, to_mono_16k
from asr_audit.corpus.clips import ArraySource, Clip, EncodedSource
from asr_audit.corpus.spec import load_corpus


def _clip(path: Path, cid: str = "c") -> Clip:
    return Clip(id=cid, reference="", audio_path=str(path))


def test_flac_fixture_loads_as_16k_float32() -> None:
    a = load_clip_audio(_clip(LIBRIVOX / "0930.flac"))
    assert a.samples.dtype == np.float32 and a.samples.ndim == 1
    assert a.source_rate == 16000 and a.source_channels == 1
    assert a.duration == pytest.approx(3.29, abs=0.01)
    assert a.audio_hash == audio_hash(a.samples) and len(a.audio_hash) == 64


def test_8k_stereo_is_averaged_and_resampled(tmp_path: Path) -> None:
    t = np.arange(8000) / 8000
    left = 0.5 * np.sin(2 * np.pi * 440 * t)
    path = write_wav(tmp_path / "s.wav", np.stack([left, 0.5 * left], axis=1).astype(np.float32), 8000)
    a = load_clip_audio(_clip(path))
    assert a.source_rate == 8000 and a.source_channels == 2
    assert len(a.samples) == 16000
    spectrum = np.abs(np.fft.rfft(a.samples))
    assert np.argmax(spectrum) == 440  # 1 s at 16 kHz: bin = Hz
    # mean of the channels: amplitude 0.5 * (1 + 0.5) / 2 = 0.375 (16-bit WAV quantization aside)
    assert np.max(np.abs(a.samples[1000:15000])) == pytest.approx(0.375, abs=0.01)


def test_to_mono_16k_is_deterministic() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((22050, 2)).astype(np.float32) * 0.1
    y1, y2 = to_mono_16k(x, 22050), to_mono_16k(x.copy(), 22050)
    assert audio_hash(y1) == audio_hash(y2) and len(y1) == 16000


@pytest.mark.parametrize("cid", [k for k, v in BAD_MANIFEST_EXPECT.items() if v is not None])
def test_bad_audio_is_rejected_with_reason_naming_clip(tmp_path: Path, cid: str) -> None:
    corpus = load_corpus(build_bad_manifest(tmp_path))
    clip = next(c for c in corpus if c.id == cid)
    with pytest.raises(ClipAudioError) as err:
        load_audio(clip, max_duration=30.0)
    expected = BAD_MANIFEST_EXPECT[cid]
    assert expected is not None and expected in err.value.reason
    assert f"clip {cid!r}" in str(err.value) and "fix:" in str(err.value)
    assert err.value.clip_id == cid


def test_long_clip_allowed_without_a_max(tmp_path: Path) -> None:
    corpus = load_corpus(build_bad_manifest(tmp_path))
    long = next(c for c in corpus if c.id == "long45")
    assert len(load_audio(long, max_duration=None)) == 45 * 16000


def test_in_memory_sources(tmp_path: Path) -> None:
    data = (LIBRIVOX / "0880.flac").read_bytes()
    from_bytes = load_audio(Clip(id="b", reference="", source=EncodedSource(data)))
    from_file = load_audio(_clip(LIBRIVOX / "0880.flac"))
    np.testing.assert_array_equal(from_bytes, from_file)
    arr = Clip(id="a", reference="", source=ArraySource(np.zeros((0,), np.float32), 16000))
    with pytest.raises(ClipAudioError, match="empty"):
        load_audio(arr)
    bad = Clip(id="e", reference="", source=EncodedSource(b"junk" * 20))
    with pytest.raises(ClipAudioError, match="unreadable"):
        load_audio(bad)
