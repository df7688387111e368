"""``whisper`` is exactly OpenAI Whisper's EnglishTextNormalizer; the old behaviour keeps its own name.

The fixture holds outputs of the real ``openai-whisper`` source (regenerate with
``scripts/make_whisper_fixture.py``). Setting ``ASR_AUDIT_OPENAI_WHISPER_SRC`` to an extracted
openai-whisper sdist also compares live on random sentences.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asr_audit.text.normalize import get_normalizer
from asr_audit.text.whisper_en import WHISPER_NORMALIZER_0_1_15, WhisperNormalizer

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "whisper_openai_normalizer.jsonl"
PAIRS = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def test_fixture_is_large_and_covers_the_0_1_15_rules() -> None:
    assert len(PAIRS) > 2000
    inputs = " ".join(p["input"].lower() for p in PAIRS)
    for word in ("kinda", "sorta", "dunno", "cause"):
        assert word in inputs


def test_whisper_equals_openai_on_every_fixture_string() -> None:
    whisper = get_normalizer("whisper")
    assert isinstance(whisper, WhisperNormalizer) and whisper.fast
    mismatches = [p["input"] for p in PAIRS if whisper(p["input"]) != p["expected"]]
    assert mismatches == []


def test_whisper_basic_equals_openai_basic_remove_diacritics() -> None:
    pairs = [
        json.loads(line)
        for line in (ROOT / "tests" / "fixtures" / "whisper_openai_basic_normalizer.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    assert len(pairs) > 1000
    basic = get_normalizer("whisper-basic")
    assert [p["input"] for p in pairs if basic(p["input"]) != p["expected"]] == []


def test_whisper_reference_mode_equals_openai() -> None:
    reference = WhisperNormalizer(fast=False)
    assert [p["input"] for p in PAIRS if reference(p["input"]) != p["expected"]] == []


@pytest.mark.parametrize(
    ("raw", "openai", "pypi"),
    [
        ("in the cause of peace", "in the cause of peace", "in the because of peace"),
        ("I kinda dunno", "i kinda dunno", "i kind of do not know"),
        ("sorta", "sorta", "sort of"),
    ],
)
def test_the_two_names_differ_exactly_on_the_0_1_15_rules(raw: str, openai: str, pypi: str) -> None:
    assert get_normalizer("whisper")(raw) == openai
    assert get_normalizer("whisper-normalizer-0.1.15")(raw) == pypi


def test_old_name_equals_pypi_whisper_normalizer_0_1_15() -> None:
    from importlib.metadata import version

    from whisper_normalizer.english import EnglishTextNormalizer

    assert version("whisper-normalizer") == "0.1.15"
    package = EnglishTextNormalizer()
    old = get_normalizer(WHISPER_NORMALIZER_0_1_15)
    assert isinstance(old, WhisperNormalizer) and old.fast
    differs_from_openai = 0
    for pair in PAIRS:
        assert old(pair["input"]) == package(pair["input"]), pair["input"]
        differs_from_openai += package(pair["input"]) != pair["expected"]
    assert differs_from_openai > 100  # the fixture really separates the two normalizers


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(["kinda", "sorta", "dunno", "cause", "'cause", "the", "one", "it's", ",", "Mr."]), max_size=10
    ).map(" ".join)
)
def test_old_name_matches_package_on_random_sentences(text: str) -> None:
    from whisper_normalizer.english import EnglishTextNormalizer

    assert get_normalizer(WHISPER_NORMALIZER_0_1_15)(text) == EnglishTextNormalizer()(text)


def test_outputs_name_the_exact_normalizer() -> None:
    new, old = get_normalizer("whisper").describe(), get_normalizer(WHISPER_NORMALIZER_0_1_15).describe()
    assert new["name"] == "whisper" and "openai-whisper" in new["label"] and "openai-whisper" in new["source"]
    assert old["name"] == "whisper-normalizer-0.1.15" and "0.1.15" in old["label"]


@pytest.mark.skipif(
    not os.environ.get("ASR_AUDIT_OPENAI_WHISPER_SRC"),
    reason="set ASR_AUDIT_OPENAI_WHISPER_SRC to an extracted openai-whisper sdist",
)
@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=60))
def test_live_against_openai_source(text: str) -> None:
    assert get_normalizer("whisper")(text) == _openai_source_normalizer()(text)


@functools.cache
def _openai_source_normalizer():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_whisper_fixture", ROOT / "scripts" / "make_whisper_fixture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_openai_normalizer(Path(os.environ["ASR_AUDIT_OPENAI_WHISPER_SRC"]))
