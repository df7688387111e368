"""Number canonicalization: "2011" = "twenty eleven", "3.5" = "three point five".

Two directions are combined so that a number written either way compares equal:

* words -> digits: OpenAI Whisper's English normalizer (:mod:`asr_audit.text.whisper_en`,
  output-identical to ``whisper-normalizer``) already turns "twenty eleven" into ``2011``,
  "forty-five dollars" into ``$45``, "third" into ``3rd`` and "fifteen percent" into ``15%``.
  It leaves a lone "one" alone (it is usually a pronoun); here a lone ``one`` becomes ``1``.
* digits -> words: :func:`asr_audit.text.verbalize.verbalize_number` lists the ways a digit
  token is read ("1905" -> "nineteen oh five", "nineteen hundred five", ...); every reading is
  normalized back, so a written form and all its spoken forms share canonical forms.

:func:`number_forms` gives the canonical token sequences of a number expression;
:func:`canonical_tokens` normalizes any text into comparable tokens; :func:`find_number` looks
for a number inside a token window. Token comparison ignores currency and percent signs
(``$45`` contains the number ``45``), so a hidden "45" counts as produced in "$45".

>>> sorted(number_forms("2011"))
[('2011',)]
>>> number_forms("twenty eleven") == number_forms("2011")
True
>>> number_forms("3.5") == number_forms("three point five")
True
>>> canonical_tokens("He paid forty-five dollars in twenty eleven.")
['he', 'paid', '$45', 'in', '2011']
>>> find_number(canonical_tokens("she paid $45 for it"), number_forms("45"))
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from asr_audit.text.verbalize import verbalize_number

__all__ = [
    "CARDINAL_WORDS",
    "JOINERS",
    "NUMBER_WORDS",
    "UNIT_WORDS",
    "canonical_tokens",
    "core",
    "find_number",
    "is_number_token",
    "is_number_word",
    "number_forms",
]

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ("hundred", "thousand", "million", "billion", "trillion")
_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth thirtieth fortieth "
    "fiftieth sixtieth seventieth eightieth ninetieth hundredth thousandth millionth"
).split()
#: spelled number words (cardinals, ordinals, tens, scales) that start or continue a number
NUMBER_WORDS: frozenset[str] = frozenset(_ONES + _TENS + list(_SCALES) + _ORDINALS)
#: the cardinal ones among them (a joiner may follow these, not an ordinal)
CARDINAL_WORDS: frozenset[str] = frozenset(_ONES + _TENS + list(_SCALES))
#: words that join number words inside one number ("one hundred and five", "three point five", "nineteen oh five")
JOINERS: frozenset[str] = frozenset({"and", "point", "oh"})
#: unit words that belong to an amount ("forty five dollars", "fifteen percent")
UNIT_WORDS: frozenset[str] = frozenset(
    {"percent", "per", "cent", "dollars", "dollar", "euros", "euro", "pounds", "pound", "cents", "pence", "yen"}
)
_SIGNS = "$€£¢¥%"
_EDGE = "\"'“”‘’()[]{}<>.,;:!?…—–*_~`|\\"
_HYPHEN = re.compile(r"[-‐‑–—]")


@lru_cache(maxsize=1)
def _normalizer():  # noqa: ANN202 - a Normalizer
    from asr_audit.text.normalize import get_normalizer

    return get_normalizer("whisper")


@lru_cache(maxsize=65536)
def _canonical(text: str) -> tuple[str, ...]:
    tokens = _normalizer()(text).split()
    return tuple("1" if t == "one" and len(tokens) == 1 else t for t in tokens)


def canonical_tokens(text: str) -> list[str]:
    """Whisper-normalized tokens with numbers as digits (a lone "one" becomes ``1``)."""
    return list(_canonical(text))


def core(token: str) -> str:
    """A canonical token without currency / percent signs: ``$45`` -> ``45``."""
    stripped = token.strip(_SIGNS)
    return stripped or token


def _strip_word(word: str) -> str:
    return word.lower().replace("’", "'").strip(_EDGE)


def is_number_word(word: str) -> bool:
    """A spelled number word (``twenty``, ``eleventh``, ``hundred``; hyphenated ``forty-five``).

    >>> is_number_word("Twenty-one,"), is_number_word("oh"), is_number_word("apple")
    (True, False, False)
    """
    w = _strip_word(word)
    parts = [p for p in _HYPHEN.split(w) if p]
    return bool(parts) and all(p in NUMBER_WORDS for p in parts)


def is_number_token(word: str) -> bool:
    """A written number: digits with optional sign, currency, decimals, ordinal/plural suffix, percent.

    >>> [is_number_token(w) for w in ("2011", "$45,", "3.5%", "21st", "1990s", "covid-19", "abc")]
    [True, True, True, True, True, False, False]
    """
    w = _strip_word(word)
    return bool(w) and any(ch.isdigit() for ch in w) and verbalize_number(w) is not None


@lru_cache(maxsize=65536)
def _forms(text: str) -> frozenset[tuple[str, ...]]:
    forms = {_canonical(text)}
    words = text.split()
    # every combination of readings is too many; read each digit token in all its ways with the
    # other tokens kept as written, which covers single-token numbers and "3.5 percent" alike
    for i, word in enumerate(words):
        readings = verbalize_number(_strip_word(word)) if is_number_token(word) else None
        for reading in readings or ():
            forms.add(_canonical(" ".join([*words[:i], *reading, *words[i + 1 :]])))
    return frozenset(f for f in forms if f)


def number_forms(text: str) -> frozenset[tuple[str, ...]]:
    """The canonical token sequences that render the number expression ``text``.

    >>> ("1905",) in number_forms("nineteen oh five")
    True
    >>> number_forms("45 dollars") == number_forms("forty-five dollars")
    True
    """
    return _forms(" ".join(text.split()))


def find_number(window: Sequence[str], forms: Iterable[Sequence[str]]) -> bool:
    """Whether one of ``forms`` occurs contiguously in the canonical tokens ``window``.

    Tokens compare by :func:`core` (signs ignored), so ``$45`` matches the form ``45``.
    """
    hay = [core(t) for t in window]
    for form in forms:
        needle = [core(t) for t in form]
        n = len(needle)
        if n and any(hay[i : i + n] == needle for i in range(len(hay) - n + 1)):
            return True
    return False
