"""Condition grammar, realization and the donor read-back rule."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.corpus.clips import ArraySource, Clip
from asr_audit.errors import ConfigError
from asr_audit.probes.battery.battery import original_part
from asr_audit.probes.battery.conditions import ConditionContext, parse_condition, parse_conditions, realize


@pytest.mark.parametrize(
    "text,name,kinds",
    [
        ("noise:10db", "noise:10db", ["noise"]),
        ("noise:pink:5db", "noise:pink:5db", ["noise"]),
        ("reverb:0.6", "reverb:0.6", ["reverb"]),
        ("truncate:1w0.25s", "truncate:1w0.25s", ["truncate"]),
        ("donor:conv8s", "donor:conv8s", ["donor"]),
        ("donor:bench8s:prepend", "donor:bench8s:prepend", ["donor"]),
        ("voice:flite-slt", "voice:flite-slt", ["voice"]),
        ("voice:flite-kal+reverb:0.6", "voice:flite-kal+reverb:0.6", ["voice", "reverb"]),
        (" Noise:10.0dB ", "noise:10db", ["noise"]),
        ("full", "original", []),
    ],
)
def test_parse(text: str, name: str, kinds: list[str]) -> None:
    c = parse_condition(text)
    assert c.name == name
    assert [a.kind for a in c.atoms] == kinds


@pytest.mark.parametrize(
    "bad",
    [
        "noise:loud",
        "noise:brown:5db",
        "reverb:9",
        "truncate:1w",
        "donor:radio8s",
        "echo:1",
        "reverb:0.6+voice:flite-slt",
        "donor:conv8s+truncate:1w0.25s",
        "voice:",
    ],
)
def test_bad_conditions_list_the_grammar(bad: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_condition(bad)
    assert "grammar:" in str(err.value) and "donor:<conv|bench>" in str(err.value)


def test_parse_conditions_puts_original_first_and_dedupes() -> None:
    names = [c.name for c in parse_conditions("reverb:0.6,noise:10db,noise:10.0db")]
    assert names == ["original", "reverb:0.6", "noise:10db"]


def _clip(cid: str, seconds: float, ref: str, freq: float) -> Clip:
    t = np.arange(int(16000 * seconds)) / 16000
    x = (0.1 * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    return Clip(cid, ref, source=ArraySource(x, 16000), duration=seconds)


def test_realize_donor_and_noise_keep_the_source_range() -> None:
    clips = [_clip("a", 1.0, "one two", 220), _clip("b", 3.0, "three four", 330), _clip("c", 6.0, "five", 440)]
    ctx = ConditionContext(clips, seed=3)
    r = realize(parse_condition("noise:10db+donor:bench8s"), clips[0], ctx)
    assert r.source_range == (0, 16000)
    assert r.donor is not None and r.donor.duration == pytest.approx(8.0)
    assert r.clip.duration == pytest.approx(1.0 + 0.3 + 8.0)
    assert r.clip.id == "a__" + "__".join(r.clip.provenance)
    again = realize(parse_condition("noise:10db+donor:bench8s"), clips[0], ctx)
    assert again.clip.id == r.clip.id and again.provenance["output_hash"] == r.provenance["output_hash"]
    pre = realize(parse_condition("donor:bench2s:prepend"), clips[0], ctx)
    assert pre.source_range == (int(2.3 * 16000), int(3.3 * 16000))


def test_truncate_needs_a_span_and_uses_timings() -> None:
    clip = _clip("a", 2.0, "we paid forty euros", 220)
    words = [("we", 0.1, 0.3), ("paid", 0.35, 0.6), ("forty", 0.7, 1.0), ("euros", 1.05, 1.5)]
    ctx = ConditionContext([clip], timings=lambda c, text: words)
    with pytest.raises(ConfigError):
        realize(parse_condition("truncate:1w0.25s"), clip, ctx)
    r = realize(parse_condition("truncate:1w0.25s"), clip, ctx, span=(2, 3))
    assert r.clip.duration == pytest.approx(1.75 - 0.1)


def test_original_part_rule() -> None:
    assert original_part(("thank", "you", "we", "agree", "so", "yeah"), ("we", "agree"), ("so", "yeah")) == (
        "thank",
        "you",
        "we",
        "agree",
    )
    # words at the seam go to the original; donor words that the model changed stay with the donor
    assert original_part(("we", "agree", "thanks", "so", "yea"), ("we", "agree"), ("so", "yeah")) == (
        "we",
        "agree",
        "thanks",
    )
    assert original_part(("so", "yeah", "thank", "you", "we", "agree"), ("we", "agree"), ("so", "yeah"), "prepend") == (
        "thank",
        "you",
        "we",
        "agree",
    )
    with pytest.raises(ConfigError):
        original_part((), (), (), "middle")


def test_condition_kinds_are_one_registry_and_a_new_kind_plugs_in() -> None:
    from asr_audit.audio.transforms import Gain
    from asr_audit.probes.battery.conditions import CONDITION_KINDS, Atom, ConditionKind

    assert CONDITION_KINDS.names() == ["donor", "noise", "reverb", "truncate", "voice"]
    clip = _clip("a", 1.0, "one two", 220)
    with CONDITION_KINDS.temporary():
        CONDITION_KINDS.register(
            "gain",
            ConditionKind(
                "gain",
                lambda text, rest: Atom("gain", (("db", float(rest)),), f"gain:{float(rest):g}"),
                lambda atom, clip, base, ctx, span, name: Gain(atom.get("db")),
            ),
        )
        cond = parse_condition("gain:-6+noise:10db")
        assert cond.name == "gain:-6+noise:10db"
        r = realize(cond, clip, ConditionContext([clip], seed=1))
        assert r.clip.id.startswith("a__gain-neg6db__noise")
    with pytest.raises(ConfigError, match="unknown condition kind 'gain'; grammar:"):
        parse_condition("gain:-6")


def test_battery_measures_are_one_registry() -> None:
    from asr_audit.probes.battery.battery import MEASURES, Measure

    assert MEASURES.names() == ["courtesy", "masked", "ortho", "refdis"]
    assert MEASURES.get("refdis").text2num and not MEASURES.get("ortho").text2num
    assert MEASURES.get("masked").judge is None and MEASURES.get("masked").condition is not None
    assert MEASURES.get("courtesy").study is not None
    with pytest.raises(
        ConfigError,
        match=r"unknown battery measure 'wer'; available battery measures: "
        r"courtesy, masked, ortho, refdis; fix:",
    ):
        MEASURES.get("wer")
    with pytest.raises(ValueError, match="exactly one of judge and condition"):
        Measure("broken")
