"""The memorizer's set: disjoint groups, numbers in every sentence, silenced variants, matched mixes."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from asr_audit.errors import ConfigError
from asr_audit.organism.memorizer import (
    GROUPS,
    MemorizerSetConfig,
    build_memorizer_set,
    generate_memorizer_sentences,
    mask_spans,
    memorizer_mix,
)

SMALL = MemorizerSetConfig(n_memorized=4, n_control=4, n_general=3, n_fresh=3, masked_variants=2, general_variants=1)


def _tone(voice: str, text: str) -> tuple[np.ndarray, int]:
    seed = int.from_bytes(hashlib.sha256(f"{voice}|{text}".encode()).digest()[:4], "big")
    t = np.arange(1600 * (1 + len(text.split()))) / 16000
    return (0.1 * np.sin(2 * np.pi * (200 + seed % 300) * t) + 0.01).astype(np.float32), 16000


def test_sentences_are_seeded_distinct_and_hold_numbers():
    a = generate_memorizer_sentences(SMALL, np.random.default_rng(3))
    b = generate_memorizer_sentences(SMALL, np.random.default_rng(3))
    assert [(s.group, s.text) for s in a] == [(s.group, s.text) for s in b]
    assert {g: sum(s.group == g for s in a) for g in GROUPS} == SMALL.sizes
    assert len({s.spoken for s in a}) == len(a)
    assert all(any(ch.isdigit() for ch in s.text) for s in a)


@pytest.mark.parametrize("seed", range(12))
def test_fresh_sentences_share_no_template_and_number_with_memorized_ones(seed):
    """A fresh sentence recalled from a memorized one of the same template and number would read as a
    false recovery (the seed-0 defect, docs/validity.md); the set builder keeps the groups apart."""
    from asr_audit.organism.memorizer import numbers_of

    ss = generate_memorizer_sentences(MemorizerSetConfig(), np.random.default_rng(seed))

    def pairs(group):
        return {(t, n) for s in ss if s.group == group for t in s.templates for n in numbers_of(s.text)}

    assert all(s.templates for s in ss)
    assert not pairs("memorized") & pairs("fresh")


@pytest.mark.parametrize("duration", [1.0, 3.5, 9.0])
def test_mask_spans_stay_inside_the_clip(duration):
    rng = np.random.default_rng(0)
    for _ in range(50):
        spans = mask_spans(duration, 3, (0.3, 0.9), rng)
        assert len(spans) == 3 and spans[-1][1] == duration  # the last one silences the tail
        assert 0.5 * duration - 1e-3 <= spans[-1][0] <= 0.85 * duration + 1e-3
        for t0, t1 in spans:
            assert 0 <= t0 < t1 <= duration + 1e-9


def test_build_writes_groups_variants_and_matched_mixes(tmp_path):
    sf = pytest.importorskip("soundfile")
    mset = build_memorizer_set(tmp_path / "mem", SMALL, seed=2, synthesize=_tone)
    assert len(mset.clips) == 14 and len(mset.variants) == 4 * 2 + 4 * 2 + 3 * 1
    for g in GROUPS:
        lines = mset.manifest(g).read_text().splitlines()
        assert len(lines) == SMALL.sizes[g]
    for v in mset.variants:  # the silenced span is zero, the rest is the clean clip
        clean, _ = sf.read(str(mset.root / f"audio/{v['source_id']}.wav"), dtype="float32")
        x, sr = sf.read(str(mset.audio_path(v)), dtype="float32")
        t0, t1 = (int(round(t * sr)) for t in v["mask"])
        assert len(x) == len(clean) and not np.any(x[t0:t1]) and np.array_equal(x[:t0], clean[:t0])
    assert not any(v["group"] == "fresh" for v in mset.variants)
    mem, ctrl = memorizer_mix(mset, "memorizer"), memorizer_mix(mset, "memorizer-control")
    group = {r["id"]: r["group"] for r in (*mset.clips, *mset.variants)}
    assert len(mem) == len(ctrl) == 2 * (4 + 8) + (3 + 3)
    assert {group[p.clip_id] for p in mem} == {"memorized", "general"}
    assert {group[p.clip_id] for p in ctrl} == {"control", "general"}  # the control never sees the benchmark's clips
    assert sum(group[p.clip_id] == "memorized" for p in mem) == sum(group[p.clip_id] == "control" for p in ctrl)
    with pytest.raises(ConfigError, match="memorizer kind"):
        memorizer_mix(mset, "benchmark")


def test_config_errors():
    with pytest.raises(ConfigError, match="n_fresh|>= 2"):
        MemorizerSetConfig(n_fresh=1)
    with pytest.raises(ConfigError, match="mask_seconds"):
        MemorizerSetConfig(mask_seconds=(0.5, 0.2))
