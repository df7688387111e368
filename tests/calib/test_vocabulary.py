"""The vocabulary's promises: conventions vanish after normalization, substitutions survive the
miner's artefact filter, spoken numbers normalize to the record's digits."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.calib import templates as T
from asr_audit.calib.generate import parse_template
from asr_audit.probes.predfiles.refdis import char_error
from asr_audit.text.normalize import get_normalizer

NORM = get_normalizer("whisper")


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (10, "ten"),
        (21, "twenty one"),
        (100, "one hundred"),
        (250, "two hundred and fifty"),
        (42_000, "forty two thousand"),
        (1_005, "one thousand and five"),
        (999_999, "nine hundred and ninety nine thousand nine hundred and ninety nine"),
    ],
)
def test_number_words(n: int, words: str) -> None:
    assert T.number_words(n) == words


@pytest.mark.parametrize(
    ("year", "words"),
    [
        (1990, "nineteen ninety"),
        (2000, "two thousand"),
        (2003, "two thousand and three"),
        (2010, "twenty ten"),
        (2024, "twenty twenty four"),
        (1900, "nineteen hundred"),
        (1905, "nineteen oh five"),
    ],
)
def test_year_words(year: int, words: str) -> None:
    assert T.year_words(year) == words


def test_every_year_and_count_normalizes_to_the_record_digits() -> None:
    for y in range(1990, 2031):
        assert NORM(f"in {T.year_words(y)} we") == NORM(f"in {y} we"), y
    for n in [*range(10, 1000), *range(2000, 100_000, 1000)]:
        assert NORM(f"the {T.number_words(n)} farmers") == NORM(f"the {T.digits(n)} farmers"), n


def test_amounts_percents_honorifics_normalize_alike() -> None:
    rng = np.random.default_rng(0)
    for filler in (T.fill_amount, T.fill_percent, T.fill_person, T.fill_year, T.fill_count):
        for _ in range(200):
            f = filler(rng)
            assert NORM(f"we paid {f.spoken} today") == NORM(f"we paid {f.written} today"), f
            assert (f.convention is None) == (f.spoken == f.written)


def test_spelling_conventions_vanish_and_spacing_is_below_the_artefact_filter() -> None:
    rng = np.random.default_rng(0)
    seen = set()
    for template in T.TEMPLATES:
        for u in parse_template(template, rng, 1.0):
            if u.role == "word" and u.convention:
                assert u.spoken is not None and u.written is not None, u  # a convention has both forms
                seen.add(u.convention)
                if u.convention == "spelling":
                    assert NORM(u.spoken) == NORM(u.written), u
                else:  # spacing survives normalization, but the miner's CER filter drops it
                    assert NORM(u.spoken) != NORM(u.written)
                    assert char_error(NORM(u.written), NORM(u.spoken)) < 0.30, u
    assert seen == {"spelling", "spacing"}


def test_substitutions_are_far_enough_to_be_mined() -> None:
    for word, alts in T.LEXICON.items():
        for alt in alts:
            # as the miner measures it: the reference's word against the panel's (spoken) one
            assert char_error(NORM(alt), NORM(word)) >= 0.4, (word, alt)
            assert NORM(alt) != NORM(word)


def test_opener_conventions() -> None:
    for spoken, written in T.OPENERS:
        assert NORM(spoken) == NORM(written)
