"""Additive noise at a target SNR: measured SNR, spectra, determinism, donors and noise files."""

from __future__ import annotations

import math

import numpy as np
import pytest

from asr_audit.audio import AddNoise, AudioAsset
from asr_audit.audio.dsp import TransformError, snr_db
from asr_audit.audio.noise import pink_noise
from asr_audit.errors import ConfigError

SR = 16_000


def _donors(n: int = 3) -> tuple[AudioAsset, ...]:
    rng = np.random.default_rng(11)
    t = np.arange(SR) / SR
    return tuple(
        AudioAsset.from_samples(
            (0.2 * np.sin(2 * np.pi * f * t) + 0.01 * rng.standard_normal(SR)).astype(np.float32), SR, f"talker{i}"
        )
        for i, f in enumerate((150, 210, 330)[:n])
    )


@pytest.mark.parametrize("snr", [10.0, 0.0, 25.5, -5.0])
@pytest.mark.parametrize("kind", ["white", "pink", "babble", "file"])
def test_measured_snr_hits_the_target(sine, kind, snr):
    sources = {"white": (), "pink": (), "babble": _donors(), "file": _donors(1)}[kind]
    y, info = AddNoise(kind, snr, sources).apply_with_info(sine, SR, np.random.default_rng(0))
    assert y.dtype == np.float32 and y.size == sine.size
    independent = snr_db(sine, y.astype(np.float64) - sine)
    assert independent == pytest.approx(snr, abs=0.1)
    assert info["snr_db"] == pytest.approx(independent, abs=1e-9)
    assert info["snr_target_db"] == snr


def test_seeded_and_distinct(sine):
    noise = AddNoise("white", 10.0)
    a = noise.apply(sine, SR, np.random.default_rng(5))
    np.testing.assert_array_equal(a, noise.apply(sine, SR, np.random.default_rng(5)))
    assert not np.array_equal(a, noise.apply(sine, SR, np.random.default_rng(6)))
    with pytest.raises(ConfigError, match="random"):
        noise.apply(sine, SR)


def test_pink_noise_falls_3_db_per_octave():
    x = pink_noise(2**18, np.random.default_rng(1))
    assert math.sqrt(float(np.mean(x**2))) == pytest.approx(1.0)
    power = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(x.size, 1 / SR)

    def band(lo: float) -> float:
        return float(power[(freqs >= lo) & (freqs < 2 * lo)].mean())

    for lo in (250.0, 500.0, 1000.0, 2000.0):
        assert 10 * math.log10(band(lo) / band(2 * lo)) == pytest.approx(3.01, abs=0.3)


def test_white_noise_is_flat():
    y = AddNoise("white", 0.0).apply(np.zeros(2**16, dtype=np.float32) + 1e-3, SR, np.random.default_rng(2))
    power = np.abs(np.fft.rfft(y - 1e-3)) ** 2
    half = power.size // 2
    assert 10 * math.log10(power[1:half].mean() / power[half:].mean()) == pytest.approx(0.0, abs=0.3)


def test_babble_uses_every_donor_and_tags_the_set(sine):
    donors = _donors()
    n1 = AddNoise("babble", 10.0, donors)
    assert n1.tag.startswith("noise-babble3-") and n1.tag.endswith("-10db")
    assert n1.tag != AddNoise("babble", 10.0, donors[:2]).tag
    noise = n1.noise(sine.size, SR, np.random.default_rng(0))
    spectrum = np.abs(np.fft.rfft(noise))
    freqs = np.fft.rfftfreq(noise.size, 1 / SR)
    for f in (150, 210, 330):
        peak = spectrum[np.argmin(np.abs(freqs - f))]
        assert peak > 20 * np.median(spectrum)


def test_noise_file_roundtrip(tmp_path, sine):
    sf = pytest.importorskip("soundfile")
    path = tmp_path / "hum.wav"
    hum = (0.1 * np.sin(2 * np.pi * 50 * np.arange(8000) / 8000)).astype(np.float32)
    sf.write(path, hum, 8000, subtype="FLOAT")
    asset = AudioAsset.from_file(path)
    transform = AddNoise("file", 5.0, (asset,))
    assert transform.tag == f"noise-file-hum.{asset.sha256[:6]}-5db"
    y, info = transform.apply_with_info(sine, SR, np.random.default_rng(0))
    assert info["snr_db"] == pytest.approx(5.0, abs=0.1)
    restored = AddNoise.from_dict(transform.to_dict())  # reloads the file from its recorded path
    np.testing.assert_array_equal(restored.apply(sine, SR, np.random.default_rng(0)), y)


def test_noise_errors(sine):
    with pytest.raises(ConfigError, match="available kinds: white, pink, babble, file"):
        AddNoise("brown")
    with pytest.raises(ConfigError, match="at least 2 donor clips"):
        AddNoise("babble", 10.0, _donors(1))
    with pytest.raises(ConfigError, match="no sources"):
        AddNoise("white", 10.0, _donors(1))
    with pytest.raises(TransformError, match="silent"):
        AddNoise("white", 10.0).apply(np.zeros(100, dtype=np.float32), SR, np.random.default_rng(0))
    silent = (
        AudioAsset.from_samples(np.zeros(10, np.float32), SR),
        AudioAsset.from_samples(np.zeros(11, np.float32), SR),
    )
    with pytest.raises(TransformError, match="every babble donor is silent"):
        AddNoise("babble", 10.0, silent).apply(sine, SR, np.random.default_rng(0))
