"""The out-of-dictionary pronunciation fallback, and its measured quality on CMUdict."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from asr_audit.align.g2p import letter_to_sound, pronounce

# the 39 CMU phones of PocketSphinx's en-us acoustic model
PHONES = set(
    "AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH".split()
)


@pytest.fixture(scope="module")
def cmudict() -> dict[str, str]:
    ps = pytest.importorskip("pocketsphinx")
    out: dict[str, str] = {}
    with open(Path(ps.get_model_path()) / "en-us" / "cmudict-en-us.dict", encoding="utf-8") as fh:
        for line in fh:
            word, _, phones = line.strip().partition(" ")
            if "(" not in word:
                out[word] = phones
    return out


def _edit_distance(a: list[str], b: list[str]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def test_dictionary_words_come_from_the_dictionary(cmudict: dict[str, str]) -> None:
    assert pronounce("house", cmudict.get) == cmudict["house"]


@pytest.mark.parametrize(
    "word, expected",
    [
        ("zorblax", "Z AO R B L AE K S"),
        ("make", "M EY K"),
        ("city", "S IH T IY"),
        ("knight", "N AY T"),
        ("shipping", "SH IH P IH NG"),
        ("table", "T AE B AH L"),
    ],
)
def test_letter_to_sound_rules(word: str, expected: str) -> None:
    assert letter_to_sound(word) == expected


def test_derivations() -> None:
    lex = {"house": "HH AW S", "zorb": "Z AO R B", "walk": "W AO K", "dog": "D AO G", "kiss": "K IH S"}
    assert pronounce("zorbhouse", lex.get) == "Z AO R B HH AW S"  # compound of two known words
    assert pronounce("walked", lex.get) == "W AO K T"
    assert pronounce("dogs", lex.get) == "D AO G Z"
    assert pronounce("kisses", lex.get) == "K IH S IH Z"
    assert pronounce("bbc", lex.get) == "B IY B IY S IY"  # no vowel letters: spelled


def test_rules_quality_on_cmudict(cmudict: dict[str, str]) -> None:
    """Phone error rate of the rules alone on 2,000 random dictionary words (measured ~0.25)."""
    words = sorted(w for w in cmudict if len(w) >= 4 and re.fullmatch("[a-z]+", w))
    sample = random.Random(0).sample(words, 2000)
    errors = total = 0
    for w in sample:
        hyp = letter_to_sound(w).split()
        assert set(hyp) <= PHONES, w
        ref = cmudict[w].split()
        errors += _edit_distance(hyp, ref)
        total += len(ref)
    per = errors / total
    assert per < 0.35, per


@pytest.mark.parametrize("word", ["zorblax", "qwxz", "aeiou", "y", "x", "'s", "zz9top"])
def test_always_some_valid_phones(word: str) -> None:
    phones = pronounce(word, lambda w: None).split()
    assert phones and set(phones) <= PHONES
