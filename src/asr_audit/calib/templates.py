"""The calibration benchmark's vocabulary: sentence templates, slot fillers, formalities,
the substitution lexicon and the record conventions, with spoken-number rendering.

A template is a parliament-style sentence body written as whitespace-separated tokens:

* a plain word (``must``): said and recorded alike; when it is in :data:`LEXICON` a
  substitution error may replace it in the reference;
* ``{slot}``: a value drawn from a filler (``year``, ``count``, ``small``, ``amount``,
  ``percent``, ``person``): the speaker says it in words, the record writes it by convention
  (``twenty eleven`` -> ``2011``, ``Mister Hill`` -> ``Mr Hill``);
* ``[spoken|written]``: a word the record spells its own way (``organization`` ->
  ``organisation``, ``cooperation`` -> ``co-operation``); ``_`` stands for a space;
* ``^``: a site where an adverbial (``of course``, ``indeed``) may stand.

Every template may carry every kind of planted error (see :mod:`asr_audit.calib.generate`):
nothing about a sentence's class predicts whether its reference is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

# --- sentence bodies ---------------------------------------------------------------------------
TEMPLATES: tuple[str, ...] = (
    "we must ^ support the {count} farmers in our regions",
    "this report ^ was adopted by {percent} of the members in {year}",
    "our group ^ welcomes the proposal of {person} on the budget",
    "today we ^ debate a budget of {amount} for the coming year",
    "the Commission ^ promised {amount} to the poorest regions in {year}",
    "we ^ need a clear answer from {person} before the vote",
    "this Parliament ^ voted for the agreement in {year}",
    "unemployment ^ rose by {percent} among young people last year",
    "more than {count} jobs ^ were lost in the steel industry",
    "I ^ would like to thank {person} for the excellent [cooperation|co-operation]",
    "the [program|programme] ^ will cost {amount} over seven years",
    "our citizens ^ expect results and not more promises",
    "we have ^ waited for this directive since {year}",
    "the [organization|organisation] ^ received {amount} from the budget",
    "{person} ^ has asked a very important question",
    "this is ^ an urgent matter for {count} small businesses",
    "the Council ^ must respect the position of the committee",
    "in {year} we ^ agreed to reduce emissions by {percent}",
    "the [labor|labour] market ^ needs new rules for {count} workers",
    "we ^ cannot accept a cut of {amount} in [defense|defence] research",
    "our farmers ^ have suffered since the crisis of {year}",
    "the fund ^ will help {count} families across the Union",
    "today we ^ remember the victims of the floods of {year}",
    "{person} ^ presented the report to the committee on Tuesday",
    "we ^ support the proposal to [harmonize|harmonise] the rules",
    "this agreement ^ covers {percent} of world trade",
    "the budget for research ^ rose to {amount} in {year}",
    "we ^ must [prioritize|prioritise] the needs of our citizens",
    "{count} [centers|centres] ^ will close in the coming months",
    "we ^ ask [anyone|any_one] who doubts this to read the report",
    "the new rules ^ will enter into force in {year}",
    "our committee ^ received {count} petitions on this subject",
    "the Union ^ spent {amount} on humanitarian aid in {year}",
    "I ^ fully agree with {person} on this point",
    "we ^ should [favor|favour] small and medium enterprises",
    "{small} member states ^ have not yet ratified the treaty",
    "the vote ^ was postponed until {year} at the request of {person}",
    "this is ^ a matter of [defense|defence] and security for our citizens",
)

# --- formalities: each may be said and recorded (clean), said only (omitted from the record),
# or recorded only (spurious in the record) -------------------------------------------------------
# (spoken, written): written differs only by record convention
OPENERS: tuple[tuple[str, str], ...] = (
    ("Thank you.", "Thank you."),
    ("Thank you, Madam President.", "Thank you, Madam President."),
    ("Madam President,", "Madam President,"),
    ("Mister President,", "Mr President,"),
    ("Ladies and gentlemen,", "Ladies and gentlemen,"),
    ("Commissioner,", "Commissioner,"),
)
TAILS: tuple[str, ...] = ("in this House", "in this Parliament", "in this Chamber", "for our citizens", "once again")
CLOSERS: tuple[str, ...] = ("Thank you.", "Thank you very much.", "I thank you.")
ADVERBS: tuple[str, ...] = ("of course", "indeed", "also", "therefore", "clearly", "really", "certainly", "I believe")

# --- substitutions the record makes (reference word for a spoken one) ----------------------------
# chosen so that the miner's normalization-artefact filter (character error < 0.30) keeps them
LEXICON: dict[str, tuple[str, ...]] = {
    "we": ("they",),
    "this": ("that",),
    "our": ("their",),
    "today": ("now",),
    "i": ("we",),
    "must": ("should",),
    "support": ("welcome",),
    "farmers": ("producers",),
    "regions": ("areas",),
    "members": ("deputies",),
    "proposal": ("motion",),
    "budget": ("funding",),
    "vote": ("decision",),
    "year": ("month",),
    "clear": ("quick",),
    "important": ("serious",),
    "question": ("issue",),
    "urgent": ("pressing",),
    "promises": ("pledges",),
    "expect": ("demand",),
    "results": ("action",),
    "directive": ("regulation",),
    "committee": ("council",),
    "emissions": ("pollution",),
    "workers": ("employees",),
    "families": ("households",),
    "victims": ("families",),
    "report": ("study",),
    "rules": ("laws",),
    "needs": ("rights",),
    "months": ("weeks",),
    "point": ("matter",),
    "subject": ("issue",),
    "enterprises": ("companies",),
    "trade": ("commerce",),
    "treaty": ("agreement",),
    "security": ("stability",),
    "research": ("science",),
    "industry": ("sector",),
    "jobs": ("posts",),
    "businesses": ("companies",),
    "petitions": ("letters",),
    "aid": ("assistance",),
    "tuesday": ("friday",),
    "citizens": ("people",),
    "young": ("older",),
    "poorest": ("weakest",),
    "debate": ("discuss",),
    "excellent": ("close",),
    "agreement": ("treaty",),
}

SURNAMES: tuple[str, ...] = (
    "Hill",
    "Walker",
    "Turner",
    "Morgan",
    "Baker",
    "Fischer",
    "Martin",
    "Ward",
    "Parker",
    "Hughes",
    "Bennett",
    "Cooper",
    "Reid",
    "Santos",
    "Novak",
    "Rossi",
)
HONORIFICS: tuple[tuple[str, str], ...] = (("Mister", "Mr"), ("Missus", "Mrs"), ("Doctor", "Dr"))
PLAIN_TITLES: tuple[str, ...] = ("Commissioner", "Minister", "President")

# --- numbers in words ----------------------------------------------------------------------------
_ONES = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
)
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def number_words(n: int) -> str:
    """British English words for ``0 <= n < 1_000_000``.

    >>> number_words(250), number_words(42_000), number_words(1_305)
    ('two hundred and fifty', 'forty two thousand', 'one thousand three hundred and five')
    """
    if not 0 <= n < 1_000_000:
        raise ValueError(f"number_words covers 0..999999, got {n}")
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return f"{_ONES[n // 100]} hundred" + ("" if rest == 0 else " and " + number_words(rest))
    rest = n % 1000
    head = f"{number_words(n // 1000)} thousand"
    if rest == 0:
        return head
    return head + (" and " if rest < 100 else " ") + number_words(rest)


def year_words(year: int) -> str:
    """How a speaker says a year between 1900 and 2099.

    >>> year_words(1995), year_words(2008), year_words(2011)
    ('nineteen ninety five', 'two thousand and eight', 'twenty eleven')
    """
    if not 1900 <= year <= 2099:
        raise ValueError(f"year_words covers 1900..2099, got {year}")
    if 2000 <= year < 2010:
        return "two thousand" + ("" if year == 2000 else " and " + _ONES[year - 2000])
    high, low = divmod(year, 100)
    if low == 0:
        return f"{number_words(high)} hundred"
    return f"{number_words(high)} {'' if low >= 10 else 'oh '}{number_words(low)}"


def digits(n: int) -> str:
    """The record's rendering of a count: digits, thousands separated by commas.

    >>> digits(250), digits(42000)
    ('250', '42,000')
    """
    return f"{n:,}"


# --- slot fillers: (spoken, written, convention or None) ----------------------------------------
@dataclass(frozen=True, slots=True)
class Fill:
    """One drawn slot value: what is said, what the record writes, which convention links them."""

    spoken: str
    written: str
    convention: str | None
    number: int | None = None  # the value, for number substitutions


def fill_year(rng: np.random.Generator) -> Fill:
    y = int(rng.integers(1990, 2031))
    return Fill(year_words(y), str(y), "year", y)


def fill_count(rng: np.random.Generator) -> Fill:
    n = int(rng.integers(10, 1000)) if rng.random() < 0.75 else 1000 * int(rng.integers(2, 100))
    return Fill(number_words(n), digits(n), "count", n)


def fill_small(rng: np.random.Generator) -> Fill:
    n = int(rng.integers(2, 10))  # the record writes small numbers in words too: no convention
    return Fill(number_words(n), number_words(n), None, n)


def fill_amount(rng: np.random.Generator) -> Fill:
    n = int(rng.integers(2, 100))
    unit = "million" if rng.random() < 0.7 else "billion"
    return Fill(f"{number_words(n)} {unit} euros", f"€{n} {unit}", "amount", None)


def fill_percent(rng: np.random.Generator) -> Fill:
    n = int(rng.integers(2, 96))
    return Fill(f"{number_words(n)} per cent", f"{n}%", "percent", None)


def fill_person(rng: np.random.Generator) -> Fill:
    name = SURNAMES[int(rng.integers(len(SURNAMES)))]
    if rng.random() < 0.75:
        spoken, written = HONORIFICS[int(rng.integers(len(HONORIFICS)))]
        return Fill(f"{spoken} {name}", f"{written} {name}", "honorific", None)
    title = PLAIN_TITLES[int(rng.integers(len(PLAIN_TITLES)))]
    return Fill(f"{title} {name}", f"{title} {name}", None, None)


FILLERS = {
    "year": fill_year,
    "count": fill_count,
    "small": fill_small,
    "amount": fill_amount,
    "percent": fill_percent,
    "person": fill_person,
}


def substitute_number(
    fill: Fill,
    rng: np.random.Generator,
    far_enough,  # noqa: ANN001
    written: Callable[[int], str] = digits,
) -> str | None:
    """A different number in the record's style for a year or count slot (``None`` if none found).

    ``far_enough(written_alt)`` says whether the alternative differs enough from the original
    for the miner to see it (the artefact filter drops renderings within 30% character error);
    ``written`` renders a count as the record does (:func:`digits` in English).
    """
    if fill.number is None or fill.convention not in ("year", "count"):
        return None
    for _ in range(20):
        if fill.convention == "year":
            alt = str(int(rng.integers(1990, 2031)))
        else:
            alt = written(int(rng.integers(10, 1000)))
        if alt != fill.written and far_enough(alt):
            return alt
    return None


# --- one language's vocabulary -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Everything the generator draws from, for one language: templates, formalities, the
    substitution lexicon, slot fillers and the record's rendering of numbers. ``thanks`` starts
    the openers that thank (never planted as a spurious opener: a record does not invent thanks).
    """

    language: str
    templates: tuple[str, ...]
    openers: tuple[tuple[str, str], ...]
    tails: tuple[str, ...]
    closers: tuple[str, ...]
    adverbs: tuple[str, ...]
    lexicon: Mapping[str, tuple[str, ...]]
    fillers: Mapping[str, Callable[[np.random.Generator], Fill]]
    thanks: str = "Thank"
    digits: Callable[[int], str] = digits

    def substitute_number(self, fill: Fill, rng: np.random.Generator, far_enough) -> str | None:  # noqa: ANN001
        """:func:`substitute_number` with this language's rendering of counts."""
        return substitute_number(fill, rng, far_enough, self.digits)


ENGLISH = Vocabulary("en", TEMPLATES, OPENERS, TAILS, CLOSERS, ADVERBS, LEXICON, FILLERS)
