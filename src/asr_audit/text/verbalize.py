"""Transcript preparation for dictionary-based aligners: words, numbers spelled out.

A transcript is split on whitespace into *tokens*; every token is kept (one timing per token
comes back from an aligner). Each token becomes a :class:`PreparedToken` holding one or more
*readings*: the dictionary words that a speaker may have said for it, preferred reading first.

* letters are lower-cased and stripped of accents (``café`` -> ``cafe``); punctuation around and inside words is dropped, apostrophes inside
  words are kept (``don't``), hyphens and slashes split a token into several words
  (``ill-disposed`` -> ``ill disposed``); ``&``, ``%``, ``+``, ``@`` are read as words;
* numbers are verbalized (:func:`verbalize_number`): cardinals (``1,250`` -> ``one thousand
  two hundred fifty``, with a British ``... and fifty`` alternative), years (``2011`` ->
  ``twenty eleven``, alternatives ``two thousand eleven`` / ``two thousand and eleven``),
  decimals (``3.5`` -> ``three point five``), ordinals (``21st`` -> ``twenty first``), decades
  (``1990s`` -> ``nineteen nineties``), clock times (``3:30`` -> ``three thirty``), currency
  (``$5`` -> ``five dollars``), percentages, signs;
* a token with nothing speakable (``--``, ``...``) gets no reading; aligners give it a
  zero-length span where it stands.

The aligner picks whichever reading fits the audio best, so "2011" read either way aligns, and
the token's span covers all words of the chosen reading.

>>> [t.readings[0] for t in prepare_transcript("Zorblax paid 2011 euros.")]
[('zorblax',), ('paid',), ('twenty', 'eleven'), ('euros',)]
>>> prepare_transcript("3.5%")[0].readings[0]
('three', 'point', 'five', 'percent')
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

Reading = tuple[str, ...]

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand"))
_ORDINAL_WORDS = {
    "one": "first",
    "two": "second",
    "three": "third",
    "four": "fourth",
    "five": "fifth",
    "six": "sixth",
    "seven": "seventh",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
_CURRENCY = {
    "$": ("dollars", "dollar", "cents"),
    "€": ("euros", "euro", "cents"),
    "£": ("pounds", "pound", "pence"),
    "¥": ("yen", "yen", "sen"),
}
_SYMBOLS = {"&": "and", "%": "percent", "+": "plus", "@": "at", "=": "equals", "#": "number"}
MAX_NUMBER = 10**15 - 1

_NUM = r"\d{1,3}(?:,\d{3})+|\d+"
_NUMBER_RE = re.compile(
    rf"^(?P<sign>[-+−])?(?P<cur>[$€£¥])?(?P<int>{_NUM})?(?:\.(?P<frac>\d+))?"
    r"(?P<suffix>st|nd|rd|th|s|'s|%)?$"
)
_TIME_RE = re.compile(r"^(?P<h>\d{1,2}):(?P<m>\d{2})$")
_EDGE_PUNCT = "\"'“”‘()[]{}<>.,;:!?¿¡…—–*_~`|\\"
_WORD_PIECE_RE = re.compile(r"[a-z0-9]+(?:['’][a-z0-9]+)*|[&%+@=#]")


@dataclass(frozen=True, slots=True)
class PreparedToken:
    """One whitespace token of the transcript and the word sequences that may speak it."""

    index: int
    text: str
    readings: tuple[Reading, ...]

    @property
    def speakable(self) -> bool:
        return bool(self.readings)


def cardinal(n: int, british_and: bool = False) -> Reading:
    """Words of a non-negative integer up to :data:`MAX_NUMBER`.

    >>> " ".join(cardinal(1250))
    'one thousand two hundred fifty'
    >>> " ".join(cardinal(305, british_and=True))
    'three hundred and five'
    """
    if n < 0 or n > MAX_NUMBER:
        raise ValueError(f"cardinal() takes 0..{MAX_NUMBER}, got {n}")
    if n < 20:
        return (_ONES[n],)
    words: list[str] = []
    for scale, name in _SCALES:
        if n >= scale:
            words += [*cardinal(n // scale), name]
            n %= scale
    if n >= 100:
        words += [_ONES[n // 100], "hundred"]
        n %= 100
    if n:
        if words and british_and:
            words.append("and")
        if n < 20:
            words.append(_ONES[n])
        else:
            words.append(_TENS[n // 10])
            if n % 10:
                words.append(_ONES[n % 10])
    return tuple(words)


def ordinal(n: int) -> Reading:
    """``21`` -> ``twenty first``.

    >>> " ".join(ordinal(21)), " ".join(ordinal(40))
    ('twenty first', 'fortieth')
    """
    words = list(cardinal(n))
    last = words[-1]
    if last in _ORDINAL_WORDS:
        words[-1] = _ORDINAL_WORDS[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return tuple(words)


def _plural(words: Reading) -> Reading:
    last = words[-1]
    return (*words[:-1], last[:-1] + "ies" if last.endswith("y") else last + "s")


def year_readings(n: int) -> list[Reading]:
    """Readings of a year-like number, most common first.

    >>> [" ".join(r) for r in year_readings(1905)]
    ['nineteen oh five', 'nineteen hundred five', 'one thousand nine hundred five', 'one thousand nine hundred and five']
    >>> " ".join(year_readings(2011)[0])
    'twenty eleven'
    """
    hi, lo = divmod(n, 100)
    out: list[Reading] = []
    if 2000 <= n <= 2009:
        out.append(cardinal(n))
    elif lo == 0:
        out.append((*cardinal(hi), "hundred"))
    elif lo < 10:
        out += [(*cardinal(hi), "oh", _ONES[lo]), (*cardinal(hi), "hundred", _ONES[lo])]
    else:
        out.append((*cardinal(hi), *cardinal(lo)))
    out += [cardinal(n), cardinal(n, british_and=True)]
    return list(dict.fromkeys(out))


def _digits(text: str) -> Reading:
    return tuple(_ONES[int(d)] for d in text)


def verbalize_number(token: str) -> list[Reading] | None:
    """Readings of a numeric token, or ``None`` when ``token`` is not a number.

    >>> verbalize_number("3.5")
    [('three', 'point', 'five')]
    >>> [" ".join(r) for r in verbalize_number("$5")]
    ['five dollars']
    >>> " ".join(verbalize_number("1990s")[0])
    'nineteen nineties'
    >>> verbalize_number("abc") is None
    True
    """
    t = _TIME_RE.match(token)
    if t:
        h, minute = int(t["h"]), int(t["m"])
        if h <= 24 and minute < 60:
            tail: list[Reading] = (
                [("o'clock",)] if minute == 0 else ([("oh", _ONES[minute])] if minute < 10 else [cardinal(minute)])
            )
            return [(*cardinal(h), *r) for r in tail]
    m = _NUMBER_RE.match(token)
    if not m or (m["int"] is None and m["frac"] is None):
        return None
    digits = (m["int"] or "").replace(",", "")
    if digits and int(digits) > MAX_NUMBER:
        return [_digits(digits)]
    value = int(digits) if digits else None
    suffix, frac, cur = m["suffix"], m["frac"], m["cur"]
    if suffix in ("st", "nd", "rd", "th"):
        if value is None or frac is not None:
            return None
        readings = [ordinal(value)]
    elif suffix in ("s", "'s"):  # decades and plurals: 1990s, 80s
        if value is None or frac is not None:
            return None
        base = year_readings(value)[0] if 1000 <= value <= 2099 and "," not in m["int"] else cardinal(value)
        readings = [_plural(base)]
    else:
        is_year = (
            value is not None
            and frac is None
            and cur is None
            and suffix is None
            and len(digits) == 4
            and "," not in (m["int"] or "")
            and 1000 <= value <= 2099
        )
        if is_year and value is not None:  # is_year implies it; the check narrows the type
            readings = year_readings(value)
        else:
            head = [cardinal(value), cardinal(value, british_and=True)] if value is not None else [()]
            head = list(dict.fromkeys(head))
            if frac is not None:
                readings = [(*h, "point", *_digits(frac)) for h in head]
            else:
                readings = head
            if cur is not None:
                plural, single, cents = _CURRENCY[cur]
                unit = single if value == 1 and frac is None else plural
                money = [(*r, unit) for r in readings]
                if frac is not None and len(frac) == 2 and value is not None:
                    c = cardinal(int(frac))
                    money = [
                        (*cardinal(value), unit, *c),
                        (*cardinal(value), unit, "and", *c, cents),
                        (*cardinal(value), *c),
                        *money,
                    ]
                readings = money
    if suffix == "%":
        readings = [(*r, "percent") for r in readings]
    if m["sign"] in ("-", "−"):
        readings = [("minus", *r) for r in readings] + [("negative", *r) for r in readings]
    return list(dict.fromkeys(readings))


def _token_readings(token: str) -> tuple[Reading, ...]:
    text = unicodedata.normalize("NFKD", token.lower().replace("’", "'"))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))  # café -> cafe
    core = text.strip(_EDGE_PUNCT)
    if core[:1].isdigit() and text[: text.find(core)].endswith("."):
        core = "." + core  # a leading decimal point: ".5"
    text = core
    if not text:
        return ()
    whole = verbalize_number(text)
    if whole is not None:
        return tuple(whole)
    # several pieces: hyphen/slash compounds, numbers glued to words ("covid-19", "mp3")
    options: list[list[Reading]] = []
    for piece in re.split(r"[-/–—]+", text):
        number = verbalize_number(piece.strip(".,;:!?\"'()"))
        if number is not None:
            options.append(number)
            continue
        for word in _WORD_PIECE_RE.findall(piece):
            if word in _SYMBOLS:
                options.append([(_SYMBOLS[word],)])
            elif word.isdigit():
                options.append(verbalize_number(word) or [_digits(word)])
            elif any(ch.isdigit() for ch in word):
                for part in re.findall(r"\d+|[a-z']+", word):
                    options.append(verbalize_number(part) or [(part,)] if part[0].isdigit() else [(part,)])
            else:
                options.append([(word,)])
    if not options:
        return ()
    # combine: the preferred reading of every piece, then each piece's alternatives in turn
    first = tuple(w for opts in options for w in opts[0])
    readings = [first]
    for i, opts in enumerate(options):
        for alt in opts[1:3]:
            readings.append(tuple(w for j, o in enumerate(options) for w in (alt if j == i else o[0])))
    return tuple(dict.fromkeys(readings))


def prepare_transcript(text: str) -> tuple[PreparedToken, ...]:
    """Split ``text`` on whitespace and give every token its readings (see the module docstring)."""
    return tuple(PreparedToken(i, tok, _token_readings(tok)) for i, tok in enumerate(text.split()))
