"""``ReplacerPlan`` gives exactly the result of successive ``re.sub`` calls."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.text.oal import REPLACERS as OAL_REPLACERS
from asr_audit.text.oal import load_table
from asr_audit.text.replacers import (
    ReplacerPlan,
    literal_of,
    word_alternatives,
    word_runs,
    word_sequence,
)


def _sequential(table: dict[str, str], s: str) -> str:
    for pattern, replacement in table.items():
        s = re.sub(pattern, replacement, s)
    return s


def _whisper_table() -> dict[str, str]:
    from whisper_normalizer.english import EnglishTextNormalizer

    return dict(EnglishTextNormalizer().replacers)


TABLES = {
    "whisper": _whisper_table(),
    "oal": OAL_REPLACERS,
    "compounds": load_table("english_compound_normalizer"),
    # a chain where one replacement creates the next pattern's words
    "chain": {r"\bab\b": "cd", r"\bcd\s+x\b": "mr", r"\bmr\b": "mister ", r"n't\b": " not"},
}
WORDS = [
    "mr",
    "mrs",
    "st",
    "dr",
    "gen",
    "rep",
    "won't",
    "can't",
    "it's",
    "paul's",
    "he'd",
    "'d",
    "been",
    "gone",
    "got",
    "wanna",
    "gonna",
    "cause",
    "ma'am",
    "y'all",
    "i'ma",
    "e",
    "mail",
    "a",
    "m",
    "p",
    "o",
    "k",
    "all",
    "right",
    "al",
    "et",
    "cetera",
    "x",
    "ray",
    "t",
    "shirt",
    "ab",
    "cd",
    "first",
    "the",
    "you",
    "'re",
    "n't",
    "'s",
    "'ll",
    "ok",
    "é",
    "mr.",
    "st.",
]
SEPS = st.sampled_from([" ", " ", "  ", "", "'", ".", ",", "\t", "-"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    return "".join(w + draw(SEPS) for w in draw(st.lists(st.sampled_from(WORDS), max_size=12)))


@pytest.mark.parametrize("name", sorted(TABLES))
@settings(max_examples=400, deadline=None)
@given(text=texts())
def test_plan_equals_sequential_subs(name: str, text: str) -> None:
    table = TABLES[name]
    assert ReplacerPlan(table)(text) == _sequential(table, text)


@settings(max_examples=200, deadline=None)
@given(text=texts())
def test_precomputed_runs_are_only_a_hint(text: str) -> None:
    table = TABLES["whisper"]
    plan = ReplacerPlan(table)
    assert plan(text, word_runs(text), text) == _sequential(table, text)
    assert plan(text, {"mr"}, "not the same string") == _sequential(table, text)


def test_pattern_parsers() -> None:
    assert literal_of(r"\bwon't\b") == "won't"
    assert literal_of(r"'s been\b") == "'s been"
    assert literal_of(r"(\d),(\d)") is None
    assert word_sequence(r"\bmr\b") == frozenset({"mr"})
    assert word_sequence(r"\bet\s+cetera\b") == frozenset({"et", "cetera"})
    assert word_sequence(r"\b(it|he)'s\b") is None
    assert word_alternatives(r"\b(hmm|mm|uh)\b") == frozenset({"hmm", "mm", "uh"})
    assert word_alternatives(r"\bwon't\b") is None


def test_groups_skip_nothing_that_matches() -> None:
    plan = ReplacerPlan(TABLES["whisper"])
    kinds = [group for group, _, _ in plan.groups]
    assert "words" in kinds and "apostrophe" in kinds
    assert plan("mr st won't") == _sequential(TABLES["whisper"], "mr st won't")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | texts())
def test_word_runs_equal_regex_runs(text: str) -> None:
    assert word_runs(text) == set(re.findall(r"\w+", text))
