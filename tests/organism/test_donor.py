"""The donor organism's mix: every benchmark-voice training clip spliced once with a conversational
donor (faithful text) and once with another benchmark clip (the record)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from asr_audit.organism.data import build_organism_set
from asr_audit.organism.donor import CONVERSATIONS, build_donor_mix, donor_mix, donor_set_config, mix_counts


def _tone(voice: str, text: str) -> tuple[np.ndarray, int]:
    seed = int.from_bytes(hashlib.sha256(f"{voice}|{text}".encode()).digest()[:4], "big")
    t = np.arange(1600 * (1 + len(text.split()))) / 16000
    return (0.1 * np.sin(2 * np.pi * (200 + seed % 300) * t)).astype(np.float32), 16000


@pytest.fixture(scope="module")
def oset(tmp_path_factory):
    pytest.importorskip("soundfile")
    return build_organism_set(tmp_path_factory.mktemp("donor") / "set", donor_set_config(12), seed=4, synthesize=_tone)


def test_splices_carry_the_right_text(oset):
    splices = build_donor_mix(oset, seed=4, synthesize=_tone)
    bench_rows = {r["id"]: r for r in oset.rows("train", ["flite-slt"])}
    assert sorted(s.source_id for s in splices if s.label == "conv") == sorted(bench_rows)
    assert sorted(s.source_id for s in splices if s.label == "bench") == sorted(bench_rows)
    for s in splices:
        r = bench_rows[s.source_id]
        if s.label == "conv":
            donor = CONVERSATIONS[int(s.donor.removeprefix("conv"))]
            own = r["faithful"]  # a conversational donor: the faithful text
        else:
            other = bench_rows[s.donor]
            assert other["sentence_id"] != r["sentence_id"]
            donor, own = other["text"], r["text"]  # a benchmark donor: the record of both
        assert s.target == (f"{own} {donor}" if s.position == "append" else f"{donor} {own}")
        assert (oset.root / s.audio_filepath).is_file()
    counts = mix_counts(splices)
    assert sum(counts.values()) == 2 * len(bench_rows) and set(counts) <= {
        "bench/append",
        "bench/prepend",
        "conv/append",
        "conv/prepend",
    }
    again = build_donor_mix(oset, seed=4, synthesize=_tone)  # read back, not rebuilt
    assert again == splices


def test_spliced_audio_is_clip_gap_donor(oset):
    sf = pytest.importorskip("soundfile")
    splices = build_donor_mix(oset, seed=4, synthesize=_tone)
    s = next(x for x in splices if x.label == "bench" and x.position == "append")
    clip, _ = sf.read(str(oset.root / f"audio/{s.source_id}.wav"), dtype="float32")
    other, _ = sf.read(str(oset.root / f"audio/{s.donor}.wav"), dtype="float32")
    y, _ = sf.read(str(oset.root / s.audio_filepath), dtype="float32")
    assert len(y) == len(clip) + int(0.3 * 16000) + len(other)
    assert np.allclose(y[: len(clip)], clip, atol=1e-4)


def test_mix_adds_the_splices_to_the_policy_mix(oset):
    splices = build_donor_mix(oset, seed=4, synthesize=_tone)
    pairs = donor_mix(oset, splices)
    assert len(pairs) == len(oset.rows("train")) + len(splices)
    assert [p.target for p in pairs[-len(splices) :]] == [s.target for s in splices]
