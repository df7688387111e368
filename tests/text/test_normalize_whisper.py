"""The fast ``whisper`` normalizer returns exactly what ``whisper-normalizer`` returns."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asr_audit.data import VOXPOPULI_EXAMPLES, voxpopuli_texts
from asr_audit.text.whisper_en import SELF_CHECK, FastNumberNormalizer, SymbolTable, WhisperNormalizer

SENTENCES = voxpopuli_texts()


@pytest.fixture(scope="module")
def whisper() -> WhisperNormalizer:
    return WhisperNormalizer()


def _outcome(fn, text: str) -> tuple[str, str]:
    try:
        return ("ok", fn(text))
    except Exception as exc:  # noqa: BLE001 - a reference crash must be mirrored, not hidden
        return ("raise", type(exc).__name__)


def test_fixture_files_are_present_and_large() -> None:
    assert len(SENTENCES) == 1500
    assert (VOXPOPULI_EXAMPLES / "NOTICE.md").is_file()


def test_fast_path_is_active(whisper: WhisperNormalizer) -> None:
    assert whisper.fast and whisper.self_check_failures == 0


def test_every_fixture_sentence_matches_reference(whisper: WhisperNormalizer) -> None:
    mismatches = [s for s in SENTENCES if whisper(s) != whisper.reference(s)]
    assert mismatches == []


def test_self_check_sentences_match(whisper: WhisperNormalizer) -> None:
    for sentence in SELF_CHECK:
        assert whisper(sentence) == whisper.reference(sentence)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Mr. Brown's colour", "mister brown is color"),
        ("twenty-one pounds", "£21"),
        ("I won't go, ma'am.", "i will not go madam"),
        ("[noise] hello (aside) uh there", "hello there"),
        ("It's 10 percent of £3.50", "it is 10% of £3.50"),
        ("the first and second", "the 1st and 2nd"),
        ("one oh one", "101"),
        ("minus and", "-and"),  # a context word before a vocabulary word changes
        ("point and", "and"),
        ("Naïve café", "naive cafe"),
    ],
)
def test_known_outputs(whisper: WhisperNormalizer, raw: str, expected: str) -> None:
    assert whisper(raw).strip() == expected
    assert whisper.reference(raw).strip() == expected


NUMBER_WORDS = [
    "o",
    "oh",
    "zero",
    "one",
    "ones",
    "two",
    "three",
    "five",
    "eleven",
    "twelve",
    "nineteen",
    "twenty",
    "thirty",
    "ninety",
    "twenties",
    "fiftieth",
    "hundred",
    "hundreds",
    "thousand",
    "million",
    "millionth",
    "billion",
    "first",
    "second",
    "third",
    "fifth",
    "twelfth",
    "twentieth",
    "sixes",
    "and",
    "a",
    "half",
    "point",
    "double",
    "triple",
    "minus",
    "plus",
    "negative",
    "positive",
    "pound",
    "pounds",
    "euro",
    "euros",
    "dollar",
    "dollars",
    "cent",
    "cents",
    "per",
    "percent",
]
OTHER_WORDS = [
    "colour",
    "Colour",
    "organise",
    "centre",
    "grey",
    "travelled",
    "the",
    "of",
    "is",
    "I",
    "won't",
    "can't",
    "let's",
    "it's",
    "Paul's",
    "he'd",
    "we'll",
    "they're",
    "I'm",
    "you've",
    "y'all",
    "ma'am",
    "wanna",
    "gonna",
    "cause",
    "kinda",
    "Mr",
    "Mr.",
    "Mrs",
    "St",
    "Dr.",
    "gen",
    "rep",
    "uh",
    "um",
    "hmm",
    "mm",
    "naïve",
    "café",
    "Œuvre",
    "straße",
    "1",
    "7",
    "10",
    "1,000",
    "3.5",
    "0.07",
    "1960s",
    "4th",
    "21st",
    "$5",
    "£3.50",
    "€20",
    "¢7",
    "5%",
    "%",
    "$",
    "£",
    "3:30",
    "3/4",
    "-5°C",
    "(aside)",
    "[noise]",
    "<unk>",
    ".",
    ",",
    "!",
    "?",
    "...",
    "-",
    "—",
    "'",
    '"',
    ";",
    "a.m.",
    "p.m",
    "U.S.",
    "e-mail",
    "x",
    "s",
    "th",
]
TOKENS = st.sampled_from(NUMBER_WORDS + OTHER_WORDS)
SEPARATORS = st.sampled_from([" ", " ", " ", "", "  ", "\t", ", ", ". ", "-"])


@st.composite
def sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(TOKENS, min_size=0, max_size=14))
    parts: list[str] = []
    for word in words:
        parts.append(word)
        parts.append(draw(SEPARATORS))
    return "".join(parts)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sentences())
def test_random_sentences_match_reference(whisper: WhisperNormalizer, text: str) -> None:
    assert _outcome(whisper, text) == _outcome(whisper.reference, text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_unicode_matches_reference(whisper: WhisperNormalizer, text: str) -> None:
    assert _outcome(whisper, text) == _outcome(whisper.reference, text)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(NUMBER_WORDS + ["x", "7", "$5", "3rd", "12.5"]), max_size=10))
def test_number_normalizer_matches_reference(tokens: list[str]) -> None:
    fast = FastNumberNormalizer()
    text = " ".join(tokens)
    assert _outcome(fast, text) == _outcome(fast.reference, text)


def test_number_vocabulary_comes_from_reference_tables() -> None:
    fast = FastNumberNormalizer()
    assert fast.enabled
    assert {"one", "first", "twenties", "hundred", "millionth", "oh"} <= fast.triggers
    assert {"and", "point", "minus", "dollars", "percent", "per"} <= fast.context
    assert fast.triggers | fast.context == fast.words == frozenset(fast.reference.words)


def test_identity_fast_path_rejects_risky_strings() -> None:
    fast = FastNumberNormalizer()
    assert fast.identity_tokens("the cat sat and slept") == ["the", "cat", "sat", "and", "slept"]
    for risky in ["the 3 cats", "one cat", "minus and", "a cat and a half", "the ٣ cats"]:
        assert fast.identity_tokens(risky) is None


def test_symbol_table_matches_reference_per_string() -> None:
    from whisper_normalizer.basic import remove_symbols_and_diacritics

    table = SymbolTable(".%$¢€£")
    text = "Ça coûte 5€, ½ œuvre — ﬁn! ß Ø 한국 東京"
    assert table.apply(text) == remove_symbols_and_diacritics(text, keep=".%$¢€£")


def test_describe_records_package_version(whisper: WhisperNormalizer) -> None:
    from importlib.metadata import version

    info = whisper.describe()
    assert info["name"] == "whisper"
    assert info["package"] == "whisper-normalizer"
    assert info["package_version"] == version("whisper-normalizer")


def test_reference_mode_is_the_package(whisper: WhisperNormalizer) -> None:
    ref = WhisperNormalizer(fast=False)
    assert not ref.fast
    assert "reference" in ref.describe()["implementation"]
    assert ref("Mr. Brown's colour") == whisper("Mr. Brown's colour")


def test_falls_back_to_reference_when_self_check_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # a deliberately wrong fast path (never calls the number normalizer) must be caught
    monkeypatch.setattr(FastNumberNormalizer, "identity_tokens", lambda self, s: s.split())
    broken = WhisperNormalizer()
    assert not broken.fast and broken.self_check_failures > 0
    assert "fast path disabled" in broken.describe()["notes"]
    assert broken("twenty one pounds") == broken.reference("twenty one pounds") == "£21"
