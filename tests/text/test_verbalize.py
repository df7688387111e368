"""Transcript preparation and the number verbalizer (table-driven)."""

from __future__ import annotations

import pytest

from asr_audit.text.verbalize import cardinal, ordinal, prepare_transcript, verbalize_number, year_readings


@pytest.mark.parametrize(
    "n, words",
    [
        (0, "zero"),
        (13, "thirteen"),
        (40, "forty"),
        (99, "ninety nine"),
        (100, "one hundred"),
        (101, "one hundred one"),
        (1000, "one thousand"),
        (1250, "one thousand two hundred fifty"),
        (2_000_017, "two million seventeen"),
        (10**12, "one trillion"),
    ],
)
def test_cardinal(n: int, words: str) -> None:
    assert " ".join(cardinal(n)) == words


def test_cardinal_rejects_out_of_range() -> None:
    with pytest.raises(ValueError):
        cardinal(-1)


@pytest.mark.parametrize(
    "n, words",
    [(1, "first"), (2, "second"), (12, "twelfth"), (20, "twentieth"), (23, "twenty third"), (100, "one hundredth")],
)
def test_ordinal(n: int, words: str) -> None:
    assert " ".join(ordinal(n)) == words


@pytest.mark.parametrize(
    "n, first",
    [
        (2011, "twenty eleven"),
        (1999, "nineteen ninety nine"),
        (1900, "nineteen hundred"),
        (2005, "two thousand five"),
        (1066, "ten sixty six"),
    ],
)
def test_year_first_reading(n: int, first: str) -> None:
    assert " ".join(year_readings(n)[0]) == first


@pytest.mark.parametrize(
    "token, readings",
    [
        ("2011", ["twenty eleven", "two thousand eleven", "two thousand and eleven"]),
        ("3.5", ["three point five"]),
        (".25", ["point two five"]),
        ("1,250", ["one thousand two hundred fifty", "one thousand two hundred and fifty"]),
        ("21st", ["twenty first"]),
        ("1990s", ["nineteen nineties"]),
        ("$5", ["five dollars"]),
        ("$1", ["one dollar"]),
        ("€3.50", ["three euros fifty", "three euros and fifty cents", "three fifty", "three point five zero euros"]),
        ("50%", ["fifty percent"]),
        ("-4", ["minus four", "negative four"]),
        ("3:30", ["three thirty"]),
        ("7:05", ["seven oh five"]),
        ("10:00", ["ten o'clock"]),
        ("12345", ["twelve thousand three hundred forty five", "twelve thousand three hundred and forty five"]),
    ],
)
def test_verbalize_number(token: str, readings: list[str]) -> None:
    got = verbalize_number(token)
    assert got is not None
    assert [" ".join(r) for r in got] == readings


@pytest.mark.parametrize("token", ["abc", "x1", "3rdx", "", "1.2.3"])
def test_not_a_number(token: str) -> None:
    assert verbalize_number(token) is None


def test_one_prepared_token_per_whitespace_token() -> None:
    text = 'He said: "don\'t" -- ill-disposed, R&D (5). covid-19'
    toks = prepare_transcript(text)
    assert [t.text for t in toks] == text.split()
    got = {t.text: [" ".join(r) for r in t.readings] for t in toks}
    assert got["said:"] == ["said"]
    assert got['"don\'t"'] == ["don't"]
    assert got["--"] == []  # nothing speakable: no reading
    assert got["ill-disposed,"] == ["ill disposed"]
    assert got["R&D"] == ["r and d"]
    assert got["(5)."] == ["five"]
    assert got["covid-19"] == ["covid nineteen"]


def test_number_inside_sentence_keeps_alternatives() -> None:
    toks = prepare_transcript("Zorblax paid 2011 euros.")
    assert toks[2].readings[0] == ("twenty", "eleven") and len(toks[2].readings) == 3
    assert toks[3].readings == (("euros",),)
