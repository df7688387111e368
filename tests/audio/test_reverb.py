"""Reverberation: Schroeder RT60 measurement, the absorption search, caching, measured RIR files."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.audio import AudioAsset, Reverb, measure_rt60, room_ir
from asr_audit.audio import reverb as reverb_mod
from asr_audit.audio.dsp import TransformError, rms
from asr_audit.errors import ConfigError

SR = 16_000
pytest.importorskip("pyroomacoustics")


def _decay(rt60: float, seconds: float = 1.5, floor_db: float | None = None, seed: int = 0) -> np.ndarray:
    """Exponentially decaying Gaussian noise: an ideal diffuse response with the given RT60."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    ir = rng.standard_normal(t.size) * 10 ** (-3 * t / rt60)
    ir[0] = 8.0  # the direct path
    if floor_db is not None:
        ir += rng.standard_normal(t.size) * 10 ** (floor_db / 20)
    return ir


@pytest.mark.parametrize("rt60", [0.2, 0.45, 0.9])
def test_schroeder_measures_an_ideal_decay(rt60):
    measured = measure_rt60(_decay(rt60, seconds=2.5 * rt60 + 0.2), SR)
    assert measured.method == "T30"
    assert measured.seconds == pytest.approx(rt60, rel=0.03)


def test_t20_when_the_decay_range_is_short():
    ir = _decay(0.6, seconds=0.42)  # ~40 dB of dynamic range: T30 needs 45, T20 35
    measured = measure_rt60(ir, SR)
    assert measured.method == "T20"
    assert measured.seconds == pytest.approx(0.6, rel=0.1)
    with pytest.raises(TransformError, match="too little to measure RT60"):
        measure_rt60(_decay(0.6, seconds=0.15), SR)


def test_noise_floor_is_cut_from_measured_responses():
    ir = _decay(0.4, seconds=1.5, floor_db=-45)
    biased = measure_rt60(ir, SR)
    fixed = measure_rt60(ir, SR, noise_floor=True)
    assert biased.seconds > 0.4 * 1.1  # the floor flattens the Schroeder curve
    assert fixed.seconds == pytest.approx(0.4, rel=0.05)


@pytest.mark.parametrize("target", [0.3, 0.6])
def test_room_rt60_within_5_percent(target):
    pra = pytest.importorskip("pyroomacoustics")
    found = room_ir(target)
    assert abs(found.rt60.seconds - target) <= 0.05 * target
    # recorded value is the measurement of the stored response, and agrees with pyroomacoustics' own
    assert measure_rt60(found.ir, SR).seconds == pytest.approx(found.rt60.seconds, rel=1e-6)
    assert pra.experimental.measure_rt60(found.ir, fs=SR, decay_db=30) == pytest.approx(target, rel=0.05)


def test_reverb_keeps_length_level_and_timing(sine):
    transform = Reverb(rt60=0.3)
    assert transform.tag == "reverb-rt60-0.3s"
    y, info = transform.apply_with_info(sine, SR)
    assert y.size == sine.size and y.dtype == np.float32
    assert rms(y) == pytest.approx(rms(sine), rel=1e-4)
    assert info["rt60_target_s"] == 0.3 and abs(info["rt60_s"] - 0.3) <= 0.015
    impulse = np.zeros(8000, dtype=np.float32)
    impulse[4000] = 1.0
    wet = Reverb(rt60=0.3, keep_level=False).apply(impulse, SR)
    assert int(np.argmax(np.abs(wet))) == 4000  # aligned on the direct path
    assert np.abs(wet[:3990]).max() < 0.05 * np.abs(wet).max()  # nothing before it but the filter's ripple
    assert np.abs(wet[4400:]).max() > 0  # a tail follows


def test_rir_cache_on_disk(monkeypatch, tmp_path):
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(reverb_mod, "_MEMO", {})
    first = room_ir(0.3)
    files = list((tmp_path / "rir").glob("*.npz"))
    assert len(files) == 1 and first.key in files[0].name
    reverb_mod._MEMO.clear()
    monkeypatch.setattr(reverb_mod, "_simulate", lambda *a, **k: pytest.fail("should load from the cache"))
    again = room_ir(0.3)
    np.testing.assert_array_equal(again.ir, first.ir)
    assert again.rt60 == first.rt60 and again.absorption == first.absorption


def test_measured_rir_file(tmp_path, sine):
    sf = pytest.importorskip("soundfile")
    ir = _decay(0.5, seconds=1.2, floor_db=-60, seed=3)
    path = tmp_path / "hall.wav"
    sf.write(path, (ir / np.abs(ir).max()).astype(np.float32), SR, subtype="FLOAT")
    transform = Reverb(rir=AudioAsset.from_file(path))
    assert transform.tag.startswith("reverb-rir-hall.")
    y, info = transform.apply_with_info(sine, SR)
    assert info["rt60_s"] == pytest.approx(0.5, rel=0.05)
    assert y.size == sine.size


def test_reverb_errors():
    with pytest.raises(ConfigError, match="exactly one of rt60"):
        Reverb()
    with pytest.raises(ConfigError, match="not inside the room"):
        Reverb(rt60=0.5, mic=(9.0, 1.0, 1.0))
    with pytest.raises(ConfigError, match="cannot have RT60"):
        room_ir(0.05, room=(20.0, 15.0, 8.0), source=(5.0, 5.0, 2.0), mic=(10.0, 7.0, 2.0))


def test_short_measured_rir_is_applied_without_an_rt60(sine):
    ir = np.zeros(400, dtype=np.float32)
    ir[0], ir[200] = 1.0, 0.5  # a single echo: no decay to measure
    y, info = Reverb(rir=AudioAsset.from_samples(ir, SR, "echo")).apply_with_info(sine, SR)
    assert info["rt60_s"] is None and "too little" in info["rt60_error"]
    expected = sine.astype(np.float64).copy()
    expected[200:] += 0.5 * sine[:-200]
    np.testing.assert_allclose(
        y, expected * (np.sqrt(np.mean(sine.astype(np.float64) ** 2)) / np.sqrt(np.mean(expected**2))), atol=1e-5
    )
