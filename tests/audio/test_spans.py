"""Span edits: masking (silence / noise / cut), guards, truncation windows, donor splices."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.audio import (
    AudioAsset,
    Chain,
    Mask,
    Splice,
    Truncate,
    guard_span,
    mask_words,
    truncate_words,
    truncation_window,
)
from asr_audit.audio.dsp import TransformError, rms
from asr_audit.errors import ConfigError

SR = 16_000


def test_silence_zeroes_exactly_the_span_and_keeps_length(sine):
    y, info = Mask(0.5, 0.75).apply_with_info(sine, SR)
    assert y.dtype == np.float32 and y.size == sine.size
    assert info["span_samples"] == [8000, 12000]
    assert not np.any(y[8000:12000])
    np.testing.assert_array_equal(y[:8000], sine[:8000])
    np.testing.assert_array_equal(y[12000:], sine[12000:])
    assert np.any(sine[8000:12000])  # the input is untouched


def test_noise_fill_is_seeded_at_clip_rms(sine):
    mask = Mask(0.5, 1.5, fill="noise")
    a = mask.apply(sine, SR, np.random.default_rng(3))
    b = mask.apply(sine, SR, np.random.default_rng(3))
    c = mask.apply(sine, SR, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.size == sine.size
    assert rms(a[8000:24000]) == pytest.approx(rms(sine), rel=0.02)
    np.testing.assert_array_equal(a[:8000], sine[:8000])
    with pytest.raises(ConfigError, match="seeded"):
        mask.apply(sine, SR)


def test_cut_removes_the_span(sine):
    y = Mask(0.5, 0.75, fill="cut").apply(sine, SR)
    assert y.size == sine.size - 4000
    np.testing.assert_array_equal(y[:8000], sine[:8000])
    np.testing.assert_array_equal(y[8000:], sine[12000:])


def test_pad_and_guard_clamp_to_neighbouring_words(sine):
    assert guard_span(1.0, 1.2, pad=0.25, prev_end=0.9, next_start=1.3) == (0.9, 1.3)
    assert guard_span(1.0, 1.2, pad=0.05, prev_end=0.5, next_start=1.9) == pytest.approx((0.95, 1.25))
    assert guard_span(0.1, 0.2, pad=0.25) == (0.0, pytest.approx(0.45))
    mask = Mask(1.0, 1.2, pad=0.25, prev_end=0.9, next_start=1.3)
    y, info = mask.apply_with_info(sine, SR)
    assert info["span_samples"] == [14400, 20800]
    assert not np.any(y[14400:20800])
    assert y[14399] == sine[14399] and y[20800] == sine[20800]
    assert mask.tag == "mask-silence-0.9-1.3s"


def test_mask_errors(sine):
    with pytest.raises(ConfigError, match="t1 > t0"):
        Mask(1.0, 1.0)
    with pytest.raises(ConfigError, match="available fills: silence, noise, cut"):
        Mask(0.1, 0.2, fill="beep")
    with pytest.raises(TransformError, match="after the end of the clip"):
        Mask(3.0, 3.5).apply(sine, SR)
    # a span running past the end is clamped to the clip
    y = Mask(1.9, 2.5).apply(sine, SR)
    assert y.size == sine.size and not np.any(y[30400:])


WORDS = [
    ("we", 0.10, 0.30),
    ("paid", 0.35, 0.60),
    ("forty", 0.70, 1.00),
    ("two", 1.02, 1.20),
    ("euros", 1.25, 1.60),
    ("today", 1.70, 1.95),
]


def test_truncation_window_from_word_timings():
    assert truncation_window(WORDS, 2, 4, k=1, pad=0.25) == pytest.approx((0.10, 1.85))
    assert truncation_window(WORDS, 2, 4, k=0, pad=0.0) == pytest.approx((0.70, 1.20))
    assert truncation_window(WORDS, 0, 1, k=2, pad=0.25) == pytest.approx((0.0, 1.25))
    assert truncation_window(WORDS, 5, 6, k=1, pad=0.25, duration=2.0) == pytest.approx((1.0, 2.0))
    assert truncation_window(WORDS, 3, 3, k=1, pad=0.0) == pytest.approx((0.70, 1.20))  # insertion point
    with pytest.raises(ConfigError, match="outside the 6 aligned words"):
        truncation_window(WORDS, 4, 9)
    with pytest.raises(ConfigError, match="invalid times"):
        truncation_window([("a", 0.5, 0.2)], 0, 1)


def test_mask_words_guards_with_the_neighbours(sine):
    mask = mask_words(WORDS, 2, 4, pad=0.2)  # "forty two", neighbours end 0.60 / start 1.25
    assert (mask.t0, mask.t1, mask.prev_end, mask.next_start) == (0.70, 1.20, 0.60, 1.25)
    assert mask.span == pytest.approx((0.60, 1.25))
    assert mask_words(WORDS, 0, 1, pad=0.2).span == pytest.approx((0.0, 0.35))
    assert mask_words(WORDS, 5, 6, fill="cut", pad=0.2).span == pytest.approx((1.60, 2.15))
    y = mask.apply(sine, SR)
    assert not np.any(y[9600:20000]) and y[9599] == sine[9599] and y[20000] == sine[20000]
    with pytest.raises(ConfigError, match="non-empty"):
        mask_words(WORDS, 3, 3)


def test_truncate_keeps_the_window(sine):
    lo, hi = truncation_window(WORDS, 2, 4)
    y, info = Truncate(lo, hi).apply_with_info(sine, SR)
    assert info["window_samples"] == [1600, 29600]
    np.testing.assert_array_equal(y, sine[1600:29600])
    y2 = Truncate(0.7, 1.2, pad=0.25).apply(sine, SR)
    np.testing.assert_array_equal(y2, sine[7200:23200])
    assert truncate_words(WORDS, 2, 4) == Truncate(0.1, 1.85)


def test_splice_append_records_offsets(sine):
    donor_wave = np.random.default_rng(0).uniform(-0.5, 0.5, 12_000).astype(np.float32)
    donor = AudioAsset.from_samples(donor_wave, SR, "conversational")
    y, info = Splice(donor, "append", gap=0.3, donor_seconds=2.0).apply_with_info(sine, SR)
    assert y.size == 32000 + 4800 + 32000
    assert info["source_range"] == [0, 32000] and info["donor_range"] == [36800, 68800]
    np.testing.assert_array_equal(y[:32000], sine)
    assert not np.any(y[32000:36800])
    d = y[36800:]
    assert rms(d) == pytest.approx(rms(sine), rel=1e-5)  # matched level
    scale = d[0] / donor_wave[0]
    np.testing.assert_allclose(d[12000:24000], donor_wave * scale, rtol=1e-5, atol=1e-6)  # looped


def test_splice_prepend_and_raw_level(sine):
    donor_wave = np.full(8000, 0.05, dtype=np.float32)
    donor = AudioAsset.from_samples(donor_wave, SR)
    y, info = Splice(donor, "prepend", gap=0.25, match_level=False).apply_with_info(sine, SR)
    assert info["source_range"] == [12000, 44000] and info["donor_range"] == [0, 8000]
    np.testing.assert_array_equal(y[:8000], donor_wave)
    np.testing.assert_array_equal(y[12000:], sine)
    assert Splice(donor, "prepend", gap=0.25, match_level=False).tag.endswith("-raw")


def test_splice_resamples_a_donor_at_another_rate(sine):
    donor = AudioAsset.from_samples(np.sin(np.arange(8000) * 0.1).astype(np.float32), 8000, "d8k")
    y, info = Splice(donor, gap=0.0).apply_with_info(sine, SR)
    assert info["donor_range"][1] - info["donor_range"][0] == 16000


def test_chain_tracks_the_source_range_through_length_changes(sine):
    donor = AudioAsset.from_samples(np.ones(4000, dtype=np.float32) * 0.1, SR, "d")
    chain = Chain((Splice(donor, "prepend", gap=0.5), Mask(0.1, 0.2, fill="cut"), Truncate(0.0, 2.0)))
    y, info = chain.apply_with_info(sine, SR)
    # donor 4000 + gap 8000 -> source at 12000; the cut removes 1600 donor samples -> 10400;
    # truncating to 2 s (32000 samples) clips the source's end
    assert info["source_range"] == (10400, 32000)
    assert y.size == 32000
    np.testing.assert_array_equal(y[10400:], sine[:21600])
