"""Number canonicalization and target selection (no models)."""

from __future__ import annotations

import pytest

from asr_audit.align.records import WordTiming
from asr_audit.errors import ConfigError
from asr_audit.probes.audio.targets import TargetRule, name_spans, number_spans, select_targets, word_spans
from asr_audit.text.numbers import canonical_tokens, find_number, number_forms

SAME = [
    ("2011", "twenty eleven"),
    ("2011", "two thousand and eleven"),
    ("3.5", "three point five"),
    ("21st", "twenty-first"),
    ("45 dollars", "forty five dollars"),
    ("$45", "45 dollars"),
    ("15%", "fifteen percent"),
    ("1905", "nineteen oh five"),
    ("1,250", "one thousand two hundred fifty"),
    ("1990s", "nineteen nineties"),
    ("1", "one"),
    ("3rd", "third"),
]
DIFFERENT = [("2011", "2012"), ("3.5", "35"), ("21st", "21"), ("45", "54"), ("1905", "1950")]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_renderings_share_a_canonical_form(a: str, b: str) -> None:
    assert number_forms(a) & number_forms(b)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_numbers_do_not_match(a: str, b: str) -> None:
    assert not number_forms(a) & number_forms(b)
    assert not find_number(canonical_tokens(f"we saw {b} of them"), number_forms(a))


def test_find_number_ignores_signs_and_needs_contiguity() -> None:
    assert find_number(canonical_tokens("she paid forty-five dollars"), number_forms("45"))
    assert find_number(canonical_tokens("prices rose 15% in winter"), number_forms("15 percent"))
    assert not find_number(["3", "and", "5"], number_forms("3.5"))


def test_number_spans_group_multiword_numbers_and_units() -> None:
    toks = "In twenty eleven they paid 45 dollars, then 3.5 percent of one hundred and five euros".split()
    assert [" ".join(toks[a:b]) for a, b in number_spans(toks)] == [
        "twenty eleven",
        "45 dollars,",
        "3.5 percent",
        "one hundred and five euros",
    ]
    assert number_spans("one of them came second and first".split()) == []


def test_name_and_word_spans() -> None:
    toks = "Then Madam Ursula von Leyen spoke. Europe waits for Paris".split()
    assert [" ".join(toks[a:b]) for a, b in name_spans(toks)] == ["Madam Ursula", "Leyen", "Paris"]
    assert name_spans("HE WAS NOT AN ILL DISPOSED YOUNG MAN".split()) == []
    assert word_spans("he was not an ill disposed young man".split()) == [(5, 6), (6, 7)]


def _timings(text: str, durations: list[float]) -> list[WordTiming]:
    out, t = [], 0.1
    for word, d in zip(text.split(), durations):
        out.append(WordTiming(word, t, t + d))
        t += d + 0.05
    return out


def test_qualification_rule_edges_duration_and_limit() -> None:
    text = "7 dogs saw 12 cats and 3 birds near 2011"
    words = _timings(text, [0.3, 0.3, 0.3, 0.3, 0.3, 0.2, 0.1, 0.3, 0.3, 0.5])
    chosen, rejected = select_targets("c", text, words)
    assert [t.text for t in chosen] == ["12"]
    assert sorted((r.text, r.reason) for r in rejected) == [("2011", "edge"), ("3", "too_short"), ("7", "edge")]
    t = chosen[0]
    assert (t.start, t.end, t.prev_end, t.next_start) == (3, 4, words[2].end, words[4].start)
    more, _ = select_targets("c", text, words, TargetRule(min_duration=0.05, max_per_clip=1))
    assert [x.text for x in more] == ["12"]
    with pytest.raises(ConfigError, match="timings"):
        select_targets("c", text, words[:-1])
    with pytest.raises(ConfigError, match="valid: number, name, word"):
        TargetRule(kind="date")
