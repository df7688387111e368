"""Whisper log-mel features in numpy against transformers' WhisperFeatureExtractor."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.models.whisper_features import MelSettings, batch_log_mel, log_mel, mel_filters, pad_or_trim


def test_pad_or_trim_lengths() -> None:
    assert pad_or_trim(np.ones(10), 16).tolist() == [1.0] * 10 + [0.0] * 6
    assert pad_or_trim(np.arange(20), 5).tolist() == [0, 1, 2, 3, 4]


def test_mel_filters_are_triangles_with_slaney_norm() -> None:
    f = mel_filters(80)
    assert f.shape == (201, 80)
    assert (f >= 0).all()
    # every filter is non-empty and peaks at a single bin region
    assert (f.max(axis=0) > 0).all()


@pytest.mark.parametrize("n_mels", [80, 128])
def test_matches_transformers_feature_extractor(n_mels: int, librivox) -> None:
    transformers = pytest.importorskip("transformers")
    audio = librivox[0][1]
    ours = log_mel(audio, MelSettings(n_mels=n_mels))
    fe = transformers.WhisperFeatureExtractor(feature_size=n_mels)
    theirs = fe(audio, sampling_rate=16_000, return_tensors="np").input_features[0]
    assert ours.shape == theirs.shape == (n_mels, 3000)
    assert np.abs(ours - theirs).max() < 1e-4


def test_batch_is_contiguous_and_independent(librivox) -> None:
    audios = librivox[0][:2]
    batch = batch_log_mel(audios)
    assert batch.flags["C_CONTIGUOUS"] and batch.dtype == np.float32
    np.testing.assert_array_equal(batch[1], log_mel(audios[1]))
    assert not np.array_equal(batch[0], batch[1])


@pytest.mark.parametrize("n_mels", [80, 128])
@pytest.mark.parametrize("n", [1, 159, 160, 161, 400, 401, 16_000, 479_599, 479_600, 479_601, 480_000, 500_000])
def test_skipping_the_padding_frames_is_bit_exact(n: int, n_mels: int) -> None:
    """Only the STFT frames that touch the clip are transformed; the features are bit-for-bit
    those of transforming every frame of the zero-padded chunk (lengths around every boundary:
    a hop, a window, the chunk less a window, the chunk)."""
    from asr_audit.models.whisper_features import _log_mel_full

    settings = MelSettings(n_mels=n_mels)
    audio = np.random.default_rng(n).standard_normal(n).astype(np.float32) * 0.1
    fast, full = log_mel(audio, settings), _log_mel_full(audio, settings)
    assert fast.shape == full.shape == (n_mels, settings.n_frames)
    assert np.array_equal(fast, full)
