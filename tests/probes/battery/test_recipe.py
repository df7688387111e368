"""Recipes: a lazily realized clip builds, wherever it is loaded, the samples a local realization holds."""

from __future__ import annotations

import dataclasses
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

from asr_audit.audio.io import load_clip_audio
from asr_audit.corpus.clips import Clip
from asr_audit.probes.battery.conditions import ConditionContext, parse_condition, realize
from asr_audit.probes.battery.recipe import RecipeSource, is_recipe

WORDS = [("we", 0.1, 0.3), ("paid", 0.35, 0.6), ("forty", 0.7, 1.0), ("euros", 1.05, 1.5)]
CONDITIONS = [
    "noise:10db",
    "noise:pink:5db",
    "noise:babble:0db",
    "reverb:0.6",
    "truncate:1w0.25s",
    "donor:bench8s",
    "noise:10db+donor:bench2s:prepend",
    "truncate:1w0.25s+donor:conv3s",
    "voice:flite-slt",
    "voice:flite-slt+noise:10db",
]


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> list[Clip]:
    """Four clips read from files (so recipes get fingerprints), different sentences."""
    sf = pytest.importorskip("soundfile")
    root = tmp_path_factory.mktemp("recipe")
    out = []
    for i, (seconds, ref) in enumerate(
        [(2.0, "we paid forty euros"), (3.0, "three four"), (1.5, "five"), (2.5, "six")]
    ):
        t = np.arange(int(16000 * seconds)) / 16000
        path = root / f"c{i}.wav"
        sf.write(path, (0.1 * np.sin(2 * np.pi * 220 * (i + 1) * t)).astype(np.float32), 16000)
        out.append(Clip(f"c{i}", ref, audio_path=str(path)))
    return out


def _ctx(clips: list[Clip]) -> ConditionContext:
    return ConditionContext(clips, seed=7, timings=lambda clip, text: WORDS)


@pytest.mark.parametrize("text", CONDITIONS)
def test_a_recipe_builds_the_samples_of_the_local_realization(clips, text) -> None:
    cond = parse_condition(text)
    if cond.voice is not None and not shutil.which("flite"):
        pytest.skip("flite is not installed")
    span = (2, 3) if cond.truncate is not None else None
    eager = realize(cond, clips[0], _ctx(clips), span)
    lazy = realize(cond, clips[0], _ctx(clips), span, lazy=True)
    travelled = pickle.loads(pickle.dumps(lazy))  # as a worker receives it
    pairs = [(eager.clip, travelled.clip)] + ([(eager.donor, travelled.donor)] if eager.donor is not None else [])
    assert (travelled.donor is None) == (eager.donor is None)
    for e, lz in pairs:
        assert is_recipe(lz) and not is_recipe(e)
        assert (lz.id, lz.provenance, lz.speaker) == (e.id, e.provenance, e.speaker)
        a, b = load_clip_audio(e), load_clip_audio(lz)
        assert a.audio_hash == b.audio_hash and np.array_equal(a.samples, b.samples)


def test_a_recipe_is_small_and_fingerprinted_only_where_its_input_is_pinned(clips) -> None:
    cond = parse_condition("noise:10db+donor:bench8s")
    eager = realize(cond, clips[0], _ctx(clips))
    lazy = realize(cond, clips[0], _ctx(clips), lazy=True)
    assert isinstance(lazy.clip.source, RecipeSource) and lazy.donor is not None
    assert lazy.clip.source.nbytes() * 20 < len(pickle.dumps(eager.clip, protocol=5))
    fp = lazy.clip.source.fingerprint
    assert lazy.donor.source is not None
    assert fp is not None and fp.startswith("recipe:") and fp != lazy.donor.source.fingerprint
    other_seed = ConditionContext(clips, seed=8, timings=lambda clip, text: WORDS)
    reseeded = realize(cond, clips[0], other_seed, lazy=True).clip.source
    assert reseeded is not None and reseeded.fingerprint != fp
    voiced = realize(parse_condition("voice:flite-slt+noise:10db"), clips[0], _ctx(clips), lazy=True).clip.source
    assert voiced is not None and voiced.fingerprint is None  # a TTS engine's output may change between versions


def test_a_recipe_whose_rebuilt_asset_differs_refuses_to_build(clips) -> None:
    from asr_audit.errors import ConfigError
    from asr_audit.probes.battery.recipe import ClipsAsset

    lazy = realize(parse_condition("donor:bench8s"), clips[0], _ctx(clips), lazy=True).clip
    source = lazy.source
    assert isinstance(source, RecipeSource)
    (sha, donor), *_ = source.assets
    assert isinstance(donor, ClipsAsset)
    wrong = ClipsAsset(donor.clips[:1], donor.name, donor.gap)  # a worker that rebuilt other audio
    broken = dataclasses.replace(source, assets=((sha, wrong),))
    with pytest.raises(ConfigError, match="differs from the recorded one"):
        broken.load()
    assert Path(clips[0].audio_path).is_file()


def test_a_voice_recipe_refuses_another_tts_engine(clips) -> None:
    from asr_audit.errors import ConfigError

    if not shutil.which("flite"):
        pytest.skip("flite is not installed")
    lazy = realize(parse_condition("voice:flite-slt+noise:10db"), clips[0], _ctx(clips), lazy=True).clip
    source = lazy.source
    assert isinstance(source, RecipeSource) and source.voice_key is not None
    other = dataclasses.replace(source, voice_key="0" * 64)  # what a driver with another flite recorded
    with pytest.raises(ConfigError, match="the TTS engine here is not the driver's"):
        other.load()
    with pytest.raises(ConfigError, match="no-such-voice"):
        realize(parse_condition("voice:no-such-voice+noise:10db"), clips[0], _ctx(clips), lazy=True)
