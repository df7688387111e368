"""Normalizer registry, cached batch normalization and the ``basic`` normalizer."""

from __future__ import annotations

import pytest

from asr_audit.errors import ConfigError
from asr_audit.text.normalize import (
    DEFAULT_NORMALIZER,
    BasicNormalizer,
    Normalizer,
    available_normalizers,
    clear_normalize_cache,
    get_normalizer,
    normalize_cache_stats,
    normalize_many,
    register_normalizer,
)


def test_available_and_default() -> None:
    assert available_normalizers() == [
        "basic",
        "basic-chars",
        "basic-de",
        "basic-es",
        "basic-fr",
        "oal",
        "whisper",
        "whisper-basic",
        "whisper-normalizer-0.1.15",
    ]
    assert DEFAULT_NORMALIZER == "whisper"
    assert get_normalizer().name == "whisper"


@pytest.mark.parametrize("name", ["basic", "oal", "whisper", "whisper-basic", "whisper-normalizer-0.1.15"])
def test_each_normalizer_follows_the_protocol(name: str) -> None:
    normalizer = get_normalizer(name)
    assert isinstance(normalizer, Normalizer)
    assert normalizer.name == name
    assert get_normalizer(name) is normalizer  # shared instance
    info = normalizer.describe()
    assert info["name"] == name
    assert info["label"].startswith(name + " (")  # the exact normalizer, named in outputs
    assert info["package_version"] not in ("", "unknown")
    assert isinstance(normalizer("Hello, World!"), str)


def test_unknown_name_lists_valid_names() -> None:
    with pytest.raises(ConfigError, match="unknown normalizer 'whisperx'.*basic, basic-chars, .*oal, whisper"):
        get_normalizer("whisperx")


def test_register_custom_normalizer() -> None:
    class Upper:
        name = "upper-test"

        def __call__(self, text: str) -> str:
            return text.upper()

        def describe(self) -> dict[str, str]:
            return {"name": self.name}

    register_normalizer("upper-test", Upper)
    try:
        assert "upper-test" in available_normalizers()
        assert normalize_many("upper-test", ["ab", "c"]) == ["AB", "C"]
    finally:
        from asr_audit.text import normalize

        normalize.NORMALIZERS.unregister("upper-test")
        normalize._INSTANCES.pop("upper-test", None)
    with pytest.raises(ConfigError, match="not valid"):
        register_normalizer("bad name!", Upper)


class Counting:
    """A normalizer that counts its calls, to observe the cache."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> str:
        self.calls += 1
        return text.lower()

    def describe(self) -> dict[str, str]:
        return {"name": self.name}


def test_normalize_many_normalizes_each_distinct_string_once() -> None:
    counting = Counting()
    texts = ["A", "B", "A", "A", "C", "B"]
    assert normalize_many(counting, texts) == ["a", "b", "a", "a", "c", "b"]
    assert counting.calls == 3
    assert normalize_many(counting, iter(["A", "D"])) == ["a", "d"]
    assert counting.calls == 4
    [stats] = normalize_cache_stats(counting)
    assert (stats.normalizer, stats.entries, stats.hits, stats.misses) == ("counting", 4, 4, 4)
    assert stats.hit_rate == 0.5
    clear_normalize_cache(counting)
    assert normalize_cache_stats(counting) == []
    normalize_many(counting, ["A"])
    assert counting.calls == 5


def test_cache_is_per_normalizer_and_by_name() -> None:
    clear_normalize_cache()
    assert normalize_many("whisper", ["Mr. Smith's colour"]) == ["mister smith is color"]
    assert normalize_many("oal", ["Mr. Smith's colour"]) == ["mister smith s color"]
    names = sorted(s.normalizer for s in normalize_cache_stats())
    assert names == ["oal", "whisper"]
    clear_normalize_cache("whisper")
    assert [s.normalizer for s in normalize_cache_stats()] == ["oal"]
    clear_normalize_cache()
    assert normalize_cache_stats() == []


def test_cache_limit_stops_storing_but_still_normalizes() -> None:
    counting = Counting()
    assert normalize_many(counting, ["A", "B", "A", "B"], cache_limit=1) == ["a", "b", "a", "b"]
    assert counting.calls == 3  # "A" cached, "B" normalized twice
    clear_normalize_cache(counting)


def test_non_string_item_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"text #1 .* NoneType, not str"):
        normalize_many(Counting(), ["ok", None])  # type: ignore[list-item]


def test_whisper_batch_matches_single_calls() -> None:
    whisper = get_normalizer("whisper")
    texts = ["Twenty-one pounds!", "I won't", "Twenty-one pounds!"]
    assert normalize_many(whisper, texts) == [whisper(t) for t in texts]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # French and German: accents and ß kept, punctuation gone
        ("L'Élève a dit : « Bonjour ! »", "l élève a dit bonjour"),
        ("Ça coûte 5 €, n'est-ce pas ?", "ça coûte 5 n est ce pas"),
        ("Die Straße ist SCHÖN, oder?", "die straße ist schön oder"),
        ("Größe: 10 %", "größe 10"),
        # Chinese and Japanese: one token per character, punctuation gone
        ("我们今天去北京。", "我 们 今 天 去 北 京"),
        ("東京は、晴れです！", "東 京 は 晴 れ で す"),
        ("ラーメンを食べた", "ラ ー メ ン を 食 べ た"),
        ("ｶﾀｶﾅ", "カ タ カ ナ"),  # half-width katakana: NFKC, then split
        ("iPhone 15 と Android", "iphone 15 と android"),
        # Korean keeps its space-delimited words
        ("안녕하세요, 세계!", "안녕하세요 세계"),
        # Thai splits into grapheme clusters (vowel marks stay on their consonant)
        ("สวัสดี", "ส วั ส ดี"),
        # Hindi keeps vowel signs and viramas (Whisper's default removes them)
        ("नमस्ते दुनिया।", "नमस्ते दुनिया"),
        # NFKC, tags, whitespace
        ("ﬁne [noise] (aside)   ok\t", "fine ok"),
        ("Über-cool — 2nd", "über cool 2nd"),
        ("", ""),
    ],
)
def test_basic_normalizer(raw: str, expected: str) -> None:
    assert BasicNormalizer()(raw) == expected


def test_basic_describe() -> None:
    info = BasicNormalizer().describe()
    assert info["name"] == "basic" and info["package"] == "regex"
