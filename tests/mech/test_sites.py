"""The hook-site grammar: every name a backend emits parses, nothing else does."""

from __future__ import annotations

import pytest

from asr_audit.errors import ConfigError
from asr_audit.mech.sites import PARTS, STACK_PARTS, STACKS, layer_sites, parse_site, site_name


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("encoder.in", ("encoder", None, "in")),
        ("encoder.head", ("encoder", None, "head")),
        ("decoder.embed_tokens", ("decoder", None, "embed_tokens")),
        ("decoder.out", ("decoder", None, "out")),
        ("encoder.layers.11.mlp", ("encoder", 11, "mlp")),
        ("decoder.layers.0.cross_attn", ("decoder", 0, "cross_attn")),
    ],
)
def test_parse_site_reads_every_form(name: str, parsed: tuple) -> None:
    assert parse_site(name) == parsed
    assert site_name(*parsed) == name  # one grammar both ways


@pytest.mark.parametrize(
    "name",
    [
        "head",
        "encoder.layers.0.cross_attn",
        "encoder.layers.0.in",
        "encoder.layers.0.head",
        "encoder.layers.x.out",
        "joiner.out",
        "encoder.mlp",
    ],
)
def test_parse_site_rejects_names_outside_the_grammar(name: str) -> None:
    with pytest.raises(ConfigError, match="is not a hook-site name; fix: e.g."):
        parse_site(name)


def test_site_name_round_trips_and_validates() -> None:
    for stack in STACKS:
        for part in STACK_PARTS:
            assert parse_site(site_name(stack, None, part)) == (stack, None, part)
        for part in PARTS:
            if (stack, part) != ("encoder", "cross_attn"):
                assert parse_site(site_name(stack, 2, part)) == (stack, 2, part)
    with pytest.raises(ConfigError, match="for the whole encoder"):
        site_name("encoder", None, "mlp")
    with pytest.raises(ConfigError, match="unknown site part 'cross_attn' for encoder"):
        site_name("encoder", 0, "cross_attn")


def test_layer_sites_selects_one_part_in_layer_order() -> None:
    class Fake:
        spec = "fake"

        def sites(self) -> list[str]:
            return ["encoder.in", "encoder.layers.0.out", "encoder.layers.1.out", "encoder.head"]

    assert layer_sites(Fake(), "encoder", "out") == ["encoder.layers.0.out", "encoder.layers.1.out"]
    with pytest.raises(ConfigError, match="exposes no hook sites"):
        layer_sites(object(), "encoder", "out")
