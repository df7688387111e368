"""Derived audio keyed by its recipe: distinct recipes never share a key (a rerun that finds a
recipe in the store's index builds nothing: tests/runner/test_decode_once_e2e.py)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from asr_audit.corpus.clips import Clip
from asr_audit.probes.battery.conditions import ConditionContext, parse_condition, realize
from asr_audit.probes.battery.recipe import RecipeSource
from asr_audit.store.sqlite import is_recipe_key

WORDS = [("we", 0.1, 0.3), ("paid", 0.35, 0.6), ("forty", 0.7, 1.0), ("euros", 1.05, 1.5)]


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> list[Clip]:
    sf = pytest.importorskip("soundfile")
    root = tmp_path_factory.mktemp("keys")
    out = []
    for i, ref in enumerate(["we paid forty euros", "three four", "five six"]):
        t = np.arange(int(16000 * (1.5 + i / 2))) / 16000
        path = root / f"k{i}.wav"
        sf.write(path, (0.1 * np.sin(2 * np.pi * 200 * (i + 1) * t)).astype(np.float32), 16000)
        out.append(Clip(f"k{i}", ref, audio_path=str(path)))
    return out


def _key(clips: list[Clip], text: str, clip: int = 0, seed: int = 7, part: str = "clip", spoken=None) -> str | None:
    ctx = ConditionContext(clips, seed=seed, spoken=spoken or {}, timings=lambda c, t: WORDS)
    cond = parse_condition(text)
    lazy = realize(cond, clips[clip], ctx, (2, 3) if cond.truncate is not None else None, lazy=True)
    target = lazy.donor if part == "donor" else lazy.clip
    assert target is not None and isinstance(target.source, RecipeSource)
    return target.source.fingerprint


def test_different_parameters_give_different_keys_and_the_same_give_the_same(clips) -> None:
    base = _key(clips, "noise:10db")
    assert base is not None and is_recipe_key(base)
    assert _key(clips, "noise:10db") == base  # a key is a function of the recipe
    variants = {
        "snr": _key(clips, "noise:20db"),
        "noise kind": _key(clips, "noise:pink:10db"),
        "seed": _key(clips, "noise:10db", seed=8),
        "source clip": _key(clips, "noise:10db", clip=1),
        "chain": _key(clips, "noise:10db+reverb:0.6"),
        "rt60": _key(clips, "reverb:0.3"),
        "other rt60": _key(clips, "reverb:0.6"),
        "truncation window": _key(clips, "truncate:1w0.25s"),
        "other window": _key(clips, "truncate:2w0.25s"),
        "splice": _key(clips, "donor:bench8s"),
        "splice position": _key(clips, "donor:bench8s:prepend"),
        "splice length": _key(clips, "donor:bench2s"),
        "donor part": _key(clips, "donor:bench8s", part="donor"),
    }
    assert None not in variants.values()
    assert len({base, *variants.values()}) == len(variants) + 1, variants


def test_voiced_keys_follow_the_voice_and_the_spoken_text(clips) -> None:
    if not shutil.which("flite"):
        pytest.skip("flite is not installed")
    slt = _key(clips, "voice:flite-slt")
    assert slt is not None and slt == _key(clips, "voice:flite-slt")
    others = [
        _key(clips, "voice:flite-kal"),
        _key(clips, "voice:flite-slt+noise:10db"),
        _key(clips, "voice:flite-slt", spoken={"k0": "we paid fifty euros"}),
        _key(clips, "noise:10db"),
    ]
    assert len({slt, *others}) == 5
