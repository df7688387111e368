"""Registry, serialization, chains, derived ids and provenance replay."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np
import pytest

from asr_audit.audio import (
    AddNoise,
    AudioAsset,
    Chain,
    Gain,
    Mask,
    Normalize,
    Provenance,
    Reverb,
    Splice,
    Transform,
    Truncate,
    available_transforms,
    clip_seed,
    derive,
    derived_id,
    register_transform,
    transform_from_dict,
)
from asr_audit.audio.dsp import TransformError, rms
from asr_audit.errors import ConfigError

SR = 16_000


def _donor() -> AudioAsset:
    wave = (0.1 * np.sin(np.arange(24_000) * 0.031)).astype(np.float32)
    return AudioAsset.from_samples(wave, SR, "bench-donor")


def _sha(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x, dtype="<f4").tobytes()).hexdigest()


def test_registry_lists_builtins_and_rejects_unknown_names():
    assert available_transforms() == ["gain", "mask", "noise", "normalize", "reverb", "splice", "truncate"]
    with pytest.raises(ConfigError, match=r"unknown transform 'echo'; available transforms: gain, mask, noise"):
        transform_from_dict({"name": "echo"})
    with pytest.raises(ConfigError, match="unknown parameter.*colour.*valid: kind, snr_db, sources"):
        transform_from_dict({"name": "noise", "colour": "pink"})
    with pytest.raises(ConfigError, match="has no 'name'"):
        transform_from_dict({"t0": 1.0})
    with pytest.raises(ConfigError, match="t0"):
        transform_from_dict({"name": "mask", "t1": 1.0})


def test_user_transforms_register_with_the_decorator(sine, monkeypatch):
    from asr_audit.audio import transforms as module

    monkeypatch.setattr(
        module.TRANSFORMS, "_entries", dict(module.TRANSFORMS._entries)
    )  # forget the test class afterwards

    @register_transform
    @dataclasses.dataclass(frozen=True, slots=True)
    class Invert(Transform):
        name = "test-invert"

        @property
        def tag(self) -> str:
            return "inv"

        def apply_with_info(self, samples, sr, rng=None):
            return -np.asarray(samples, dtype=np.float32), {}

    assert "test-invert" in available_transforms()
    step = transform_from_dict({"name": "test-invert"})
    np.testing.assert_array_equal(step.apply(sine, SR), -sine)
    with pytest.raises(ConfigError, match="already registered"):

        @register_transform
        @dataclasses.dataclass(frozen=True, slots=True)
        class Other(Transform):
            name = "test-invert"


ALL = [
    Mask(0.4, 0.6, fill="noise", pad=0.05, prev_end=0.38),
    Mask(0.4, 0.6, fill="cut"),
    Truncate(0.2, 1.5, pad=0.25),
    Splice(_donor(), "prepend", gap=0.3, donor_seconds=8.0),
    AddNoise("pink", 10.0),
    AddNoise("babble", 5.0, (_donor(), AudioAsset.from_samples(np.ones(10, np.float32), SR))),
    Reverb(rt60=0.6),
    Gain(-6.0),
    Normalize(-20.0),
]


@pytest.mark.parametrize("transform", ALL, ids=lambda t: t.tag)
def test_to_dict_from_dict_roundtrip_through_json(transform):
    data = json.loads(json.dumps(transform.to_dict()))
    assert data["name"] == transform.name
    again = transform_from_dict(
        data,
        assets={
            _donor().name: _donor().samples,
            AudioAsset.from_samples(np.ones(10, np.float32), SR).sha256: np.ones(10, np.float32),
        },
    )
    assert again == transform and again.tag == transform.tag


def test_tags_are_short_and_stable():
    assert [t.tag for t in ALL[:5]] + [ALL[6].tag, ALL[7].tag, ALL[8].tag] == [
        "mask-noise-0.38-0.65s",
        "mask-cut-0.4-0.6s",
        "trunc-0-1.75s",
        f"splice-prepend-bench-donor.{_donor().sha256[:6]}-gap0.3s-8s",
        "noise-pink-10db",
        "reverb-rt60-0.6s",
        "gain-neg6db",
        "norm-neg20dbfs",
    ]
    assert AddNoise("white", 10).tag == "noise-white-10db"


def test_missing_assets_and_changed_audio_are_refused():
    data = Splice(_donor()).to_dict()
    with pytest.raises(ConfigError, match="has no path and was not passed in"):
        transform_from_dict(data)
    with pytest.raises(ConfigError, match="differs from the recorded one"):
        transform_from_dict(data, assets={"bench-donor": np.zeros(100, np.float32)})


def test_derived_id_and_chain_order(sine):
    chain = Chain((Mask(0.5, 0.7), AddNoise("white", 10.0)))
    assert derived_id("vox_0042", chain) == "vox_0042__mask-silence-0.5-0.7s__noise-white-10db"
    assert derived_id("vox_0042", Chain()) == "vox_0042"
    a = chain.apply(sine, SR, np.random.default_rng(1))
    assert not np.any(a[8000:11200] == sine[8000:11200])  # noise added on top of the silenced span
    b = Chain((AddNoise("white", 10.0), Mask(0.5, 0.7))).apply(sine, SR, np.random.default_rng(1))
    assert not np.any(b[8000:11200])  # silence applied last wins
    with pytest.raises(ConfigError, match="not a Transform"):
        Chain(("mask",))


def test_gain_and_normalize(sine):
    np.testing.assert_allclose(Gain(-20.0).apply(sine, SR), sine * 0.1, rtol=1e-6)
    y, info = Normalize(-20.0).apply_with_info(sine, SR)
    assert 20 * np.log10(rms(y)) == pytest.approx(-20.0, abs=1e-4)
    assert not np.any(Normalize().apply(np.zeros(10, np.float32), SR))


def test_bad_input_is_a_typed_error():
    with pytest.raises(TransformError, match="NaN"):
        Gain(1.0).apply(np.array([0.0, np.nan], dtype=np.float32), SR)
    with pytest.raises(TransformError, match="mono"):
        Gain(1.0).apply(np.zeros((10, 2), dtype=np.float32), SR)
    with pytest.raises(TransformError, match="sample rate"):
        Gain(1.0).apply(np.zeros(10, dtype=np.float32), 0)


def test_derive_needs_a_seed_for_random_chains(sine):
    with pytest.raises(ConfigError, match="seed"):
        derive("c1", sine, SR, [AddNoise("white", 10.0)])
    d = derive("c1", sine, SR, [Mask(0.5, 0.7)])
    assert d.provenance.seed is None and d.id == "c1__mask-silence-0.5-0.7s"


def test_exported_chain_replays_byte_identically(sine):
    donor = _donor()
    chain = Chain(
        (
            Mask(0.5, 0.8, pad=0.1, prev_end=0.45),
            Splice(donor, gap=0.3, donor_seconds=2.5),
            AddNoise("babble", 10.0, (donor, AudioAsset.from_samples(sine[::-1].copy(), SR, "rev"))),
            Reverb(rt60=0.3),
            Gain(-3.0),
        )
    )
    seed = clip_seed(7, "vox_0001")
    d = derive("vox_0001", sine, SR, chain, seed=seed)
    assert d.source_range == (0, sine.size)
    assert d.measured[2]["snr_db"] == pytest.approx(10.0, abs=0.1)
    assert d.measured[3]["rt60_s"] == pytest.approx(0.3, rel=0.05)

    exported = json.dumps(d.provenance.to_dict(), sort_keys=True)
    record = Provenance.from_dict(json.loads(exported))
    assert record == d.provenance
    assets = {"rev": sine[::-1].copy(), donor.sha256: donor.samples}
    replayed = record.replay(sine, SR, assets=assets)
    assert _sha(replayed) == _sha(d.samples) == record.output_hash
    # the chain alone, re-applied with the recorded seed, gives the same bytes too
    again = record.chain(assets).apply(sine, SR, np.random.default_rng(record.seed))
    assert _sha(again) == _sha(d.samples)
    # a different seed gives different noise
    other = derive("vox_0001", sine, SR, chain, seed=seed + 1)
    assert _sha(other.samples) != _sha(d.samples) and other.id == d.id
    with pytest.raises(TransformError, match="source audio"):
        record.replay(sine * 0.5, SR, assets=assets)


def test_derive_clip_from_a_wav(tmp_path, sine):
    sf = pytest.importorskip("soundfile")
    from asr_audit.audio import derive_clip
    from asr_audit.audio.io import load_audio
    from asr_audit.corpus.clips import Clip

    path = tmp_path / "c9.wav"
    sf.write(path, sine, SR, subtype="FLOAT")
    clip = Clip(id="c9", reference="forty two euros", audio_path=str(path), speaker="s1", corpus="demo")
    new, derived = derive_clip(clip, [Mask(0.5, 0.7), AddNoise("white", 20.0)], seed=3)
    assert new.id == "c9__mask-silence-0.5-0.7s__noise-white-20db" == derived.id
    assert new.provenance == ("mask-silence-0.5-0.7s", "noise-white-20db")
    assert new.reference == clip.reference and new.speaker == "s1" and new.audio_path is None
    np.testing.assert_array_equal(load_audio(new), derived.samples)
    assert derived.provenance.replay(load_audio(clip), SR).tobytes() == derived.samples.tobytes()
