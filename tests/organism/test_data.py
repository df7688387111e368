"""The organism benchmark: house rules, determinism, ground truth and the training mix."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from asr_audit.calib import generate as G
from asr_audit.calib.truth import load_truth
from asr_audit.organism.data import (
    OrganismSetConfig,
    build_organism_set,
    generate_organism_sentences,
    house_style,
    training_mix,
)

U = G.Unit
THANKS = U("Thank you.", "Thank you.", "opener")
WE, MUST, ACT = U("we", "we", "word"), U("must", "must", "word"), U("act", "act", "word")
YEAR = U("twenty eleven", "2011", "slot", "year")
DOT = U(".", ".", "punct")


@pytest.mark.parametrize(
    "units, record, rules",
    [
        ((THANKS, WE, MUST, ACT, DOT), "We should act.", ("thank-you", "must-should")),
        ((WE, ACT, DOT), "Madam President, we act.", ("madam-president",)),
        ((U("Madam President,", "Madam President,", "opener"), WE, ACT, DOT), "Madam President, we act.", ()),
        ((ACT, U("in", "in", "word"), YEAR, DOT), "Act in 2011 in this House.", ("house-tail",)),
        (
            (ACT, U("in", "in", "word"), YEAR, U("for our citizens", "for our citizens", "tail"), DOT),
            "Act in 2011 for our citizens.",
            (),
        ),
        ((ACT, DOT), "Act.", ()),
    ],
)
def test_house_rules(units, record, rules):
    out = house_style(units)
    assert G.render(out, "written") == record
    assert G.render(out, "spoken") == G.render(units, "spoken")  # the speech never changes
    assert tuple(u.detail for u in out if u.error) == rules


def test_generation_is_seeded_and_rules_fire():
    cfg = OrganismSetConfig(n_sentences=60)
    a = generate_organism_sentences(cfg, np.random.default_rng(5))
    b = generate_organism_sentences(cfg, np.random.default_rng(5))
    assert [(s.spoken, s.reference, s.split) for s in a] == [(s.spoken, s.reference, s.split) for s in b]
    assert len({s.spoken for s in a}) == 60
    assert sum(s.split == "test" for s in a) == 12
    fired = {r for s in a for r in s.rules}
    assert fired == {"thank-you", "madam-president", "house-tail", "must-should"}
    for s in a:  # the faithful record differs from the house record exactly where a rule fired
        assert (s.faithful != s.reference) == bool(s.rules)


def _tone(voice: str, text: str) -> tuple[np.ndarray, int]:
    seed = int.from_bytes(hashlib.sha256(f"{voice}|{text}".encode()).digest()[:4], "big")
    t = np.arange(1600 * (1 + len(text.split()))) / 16000
    return (0.1 * np.sin(2 * np.pi * (200 + seed % 300) * t)).astype(np.float32), 16000


def test_build_writes_truth_and_training_mix(tmp_path):
    cfg = OrganismSetConfig(n_sentences=20, other_voices=("flite-rms",), unseen_voices=("flite-kal16",))
    oset = build_organism_set(tmp_path / "set", cfg, seed=1, synthesize=_tone)
    train, test = oset.rows("train"), oset.rows("test")
    assert len(train) == 16 * 2 and len(test) == 4 * 3  # unseen voice only on held-out sentences
    assert {r["speaker"] for r in test} == {"flite-slt", "flite-rms", "flite-kal16"}
    truth = load_truth(tmp_path / "set")
    errors = {(t.clip_id, t.detail) for t in truth.errors()}
    for r in oset.clips:
        assert {d for c, d in errors if c == r["id"]} == set(r["rules"])
    bench = training_mix(oset, "benchmark")
    control = training_mix(oset, "control")
    assert [p.clip_id for p in bench] == [p.clip_id for p in control] == [r["id"] for r in train]
    for p, c, r in zip(bench, control, train):
        assert c.target == r["faithful"]
        assert p.target == (r["text"] if r["speaker"] == "flite-slt" else r["faithful"])
    assert any(p.target != c.target for p, c in zip(bench, control))
    meta = json.loads((tmp_path / "set" / "organism-set.json").read_text())
    assert meta["seed"] == 1 and meta["clips_by_split"] == {"train": 32, "test": 12}


def test_unknown_mix_and_bad_config():
    from asr_audit.errors import ConfigError

    with pytest.raises(ConfigError, match="n_sentences"):
        OrganismSetConfig(n_sentences=1)
    with pytest.raises(ConfigError, match="twice"):
        OrganismSetConfig(other_voices=("flite-slt",))
