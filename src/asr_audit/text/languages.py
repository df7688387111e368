"""Language-aware scoring: which normalizer a language gets, character tokens for CJK, and the
Spanish / French / German normalizers (``basic-es``, ``basic-fr``, ``basic-de``).

Word error rate needs words. Chinese, Japanese, Thai, Lao, Khmer and Myanmar are written
without spaces, and Korean's spaced units (eojeol) glue particles to nouns, so one wrong
particle costs a whole "word": for these languages (:data:`CER_LANGUAGES`) asr-audit scores
characters. :class:`CharTokens` (registered as ``basic-chars``) is the ``basic`` normalizer
followed by one token per grapheme cluster, spaces dropped, so the WER of its tokens *is* the
character error rate (CER) of the normalized text::

    >>> from asr_audit.text.normalize import get_normalizer
    >>> get_normalizer("basic-chars")("서울은 맑습니다.")
    '서 울 은 맑 습 니 다'

:func:`scoring_normalizer` is the one rule for which normalizer a language gets when a verb was
asked for ``requested``: English keeps it; a CER language gets ``basic-chars``; in place of an
English-only normalizer (``whisper``, ``oal``, ``whisper-normalizer-0.1.15``), whose number,
spelling and contraction rules are English, Spanish, French and German get their own
(``basic-es``, ``basic-fr``, ``basic-de``) and any other language gets ``basic``.

:class:`LanguageNormalizer` adds to ``basic`` what makes two acoustically identical spellings of
Spanish, French or German equal (the convention families of
:mod:`asr_audit.probes.predfiles.conventions`): title and common abbreviations are expanded
(``Sr.`` -> ``señor``, ``Mme`` -> ``madame``, ``usw.`` -> ``und so weiter``), ``%`` and ``€``
become the language's words (``por ciento``, ``pour cent``, ``Prozent``; ``euros``, ``Euro``),
and spelled numbers become digits with ``text_to_num.alpha2digit`` in that language (the
percent word is kept out of it, so ``ciento`` / ``cent`` is not read as 100)::

    >>> get_normalizer("basic-es")("La Sra. Pérez pidió veinte por ciento, es decir 20 %, etc.")
    'la señora pérez pidió 20 por ciento es decir 20 por ciento etcétera'
    >>> get_normalizer("basic-de")("Das kostet 5 € bzw. fünf Euro, d. h. 5 Euro usw.")
    'das kostet 5 euro beziehungsweise 5 euro das heißt 5 euro und so weiter'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from asr_audit.errors import ConfigError
from asr_audit.text.whisper_en import package_version

__all__ = [
    "CER_LANGUAGES",
    "ENGLISH_ONLY",
    "LANGUAGE_NORMALIZERS",
    "CharTokens",
    "LanguagePack",
    "LanguageNormalizer",
    "language_pack",
    "primary_language",
    "scoring_normalizer",
    "scores_characters",
]

# normalizers that only handle English; other languages get a language-agnostic one instead
ENGLISH_ONLY = ("whisper", "oal", "whisper-normalizer-0.1.15")
# languages scored by character (Whisper codes): no spaces between words, or (Korean) spaced
# units too long for a word error rate to mean anything
CER_LANGUAGES = ("zh", "yue", "ja", "ko", "th", "lo", "km", "my")


def primary_language(tag: str) -> str:
    """The primary subtag of a language tag, lower case (``""`` reads as English).

    >>> primary_language("en-GB"), primary_language("en_us"), primary_language("FR"), primary_language("")
    ('en', 'en', 'fr', 'en')
    """
    return tag.replace("_", "-").split("-")[0].lower() or "en"


def scores_characters(language: str) -> bool:
    """Whether text in ``language`` (any tag) is scored by character (CER), not by word.

    >>> scores_characters("zh-CN"), scores_characters("ja"), scores_characters("ko"), scores_characters("de")
    (True, True, True, False)
    """
    return primary_language(language) in CER_LANGUAGES


def scoring_normalizer(requested: str, language: str) -> str:
    """The normalizer a verb uses for ``language`` when ``requested`` was asked for.

    English keeps ``requested``; a CER language (:data:`CER_LANGUAGES`) gets ``basic-chars``;
    any other language keeps ``requested`` unless it is English-only, which becomes the
    language's own normalizer (``basic-es``, ``basic-fr``, ``basic-de``) or else ``basic``.

    >>> scoring_normalizer("whisper", "en-GB"), scoring_normalizer("oal", "fr"), scoring_normalizer("whisper", "ja")
    ('whisper', 'basic-fr', 'basic-chars')
    >>> scoring_normalizer("basic", "fr"), scoring_normalizer("whisper", "pl"), scoring_normalizer("basic", "zh")
    ('basic', 'basic', 'basic-chars')
    """
    lang = primary_language(language)
    if lang == "en":
        return requested
    if lang in CER_LANGUAGES:
        return "basic-chars"
    if requested not in ENGLISH_ONLY:
        return requested
    return f"basic-{lang}" if lang in _PACKS else "basic"


class CharTokens:
    """``base`` (the ``basic`` normalizer), then one token per grapheme cluster (spaces dropped):
    the WER of these tokens is the character error rate (``basic-chars``).

    >>> from asr_audit.text.normalize import get_normalizer
    >>> get_normalizer("basic-chars")("東京は、晴れです。 OK")
    '東 京 は 晴 れ で す o k'
    """

    name = "basic-chars"

    def __init__(self, base: Any) -> None:
        import regex

        self._basic = base
        self._cluster = regex.compile(r"\S(?:\p{M})*")  # a character with its combining marks

    def __call__(self, text: str) -> str:
        return " ".join(self._cluster.findall(self._basic(text)))

    def describe(self) -> dict[str, Any]:
        """The ``basic`` description, relabelled: these tokens are characters (WER here is CER)."""
        base = self._basic.describe()
        return {
            **base,
            "name": self.name,
            "label": "basic-chars (basic, one token per character)",
            "implementation": "asr_audit.text.languages.CharTokens",
            "unit": "character",
            "notes": base["notes"] + "; then every character (with its combining marks) is one token",
        }


# ----------------------------------------------------------------------------- es / fr / de


@dataclass(frozen=True, slots=True)
class LanguagePack:
    """What :class:`LanguageNormalizer` knows of one language.

    ``abbreviations``: (regex on the raw text, expansion), applied in order before lower-casing
    (so a pattern may require a capital); ``percent``: the word(s) ``%`` is read as;
    ``euro`` / ``euros``: the currency word after 1 and after any other amount; ``digits``: the
    words for 2 to 9, written as digits before the percent word (``alpha2digit`` leaves a lone
    small number in words); ``respell``: (regex, replacement) on the normalized text before
    ``alpha2digit``, for forms it does not read (Spanish ``veintiún``); ``number_ahead``: a
    regex of the words a number starts with: the percent words followed by one are no percent
    ("pour cent soixante familles" is "for 160 families").
    """

    language: str
    abbreviations: tuple[tuple[str, str], ...]
    percent: str
    euro: str
    euros: str
    digits: tuple[str, ...] = ()
    respell: tuple[tuple[str, str], ...] = ()
    number_ahead: str = ""


_NAME_AHEAD = r"(?=\s+[^\W\d_])"  # a title stands before a word (its name)
_PACKS: dict[str, LanguagePack] = {
    "es": LanguagePack(
        "es",
        (
            (r"(?i)\bsrta\.?" + _NAME_AHEAD, "señorita"),
            (r"(?i)\bsra\.?" + _NAME_AHEAD, "señora"),
            (r"(?i)\bsr\.?" + _NAME_AHEAD, "señor"),
            (r"(?i)\b(?:dña\.?|dna\.)" + _NAME_AHEAD, "doña"),  # "dna" only with its period (not DNA)
            (r"(?i)\bdr\.?" + _NAME_AHEAD, "doctor"),
            (r"(?i)\bdra\.?" + _NAME_AHEAD, "doctora"),
            (r"(?i)\buds\.", "ustedes"),
            (r"(?i)\bud\.", "usted"),
            (r"(?i)\betc\.?(?!\w)", "etcétera"),
        ),
        "por ciento",
        "euro",
        "euros",
        tuple("dos tres cuatro cinco seis siete ocho nueve".split()),
        ((r"\bveintiún\b", "veintiuno"),),
        r"un|uno|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|trece|catorce|quince|dieci\w*"
        r"|veint\w*|treinta|cuarenta|cincuenta|sesenta|setenta|ochenta|noventa|cien\w*|\w+cient[oa]s|mil|\d+",
    ),
    "fr": LanguagePack(
        "fr",
        (
            (r"\bMM\." + _NAME_AHEAD, "messieurs"),
            (r"\bM\." + _NAME_AHEAD, "monsieur"),
            (r"\bMmes?\.?" + _NAME_AHEAD, "madame"),
            (r"\bMlle\.?" + _NAME_AHEAD, "mademoiselle"),
            (r"\bDr\.?" + _NAME_AHEAD, "docteur"),
            (r"(?i)\betc\.?(?!\w)", "et cetera"),
        ),
        "pour cent",
        "euro",
        "euros",
        tuple("deux trois quatre cinq six sept huit neuf".split()),
        (),
        r"un|une|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze|treize|quatorze|quinze|seize"
        r"|vingt\w*|trente|quarante|cinquante|soixante|cent\w*|mille|\d+",
    ),
    "de": LanguagePack(
        "de",
        (
            (r"(?i)\busw\.?(?!\w)", "und so weiter"),
            (r"(?i)\bbzw\.?(?!\w)", "beziehungsweise"),
            (r"(?i)\bd\.\s?h\.", "das heißt"),
            (r"(?i)\bz\.\s?b\.", "zum beispiel"),
            (r"(?i)\bu\.\s?a\.", "unter anderem"),
            (r"\bHr\.?" + _NAME_AHEAD, "herr"),
            (r"\bHrn\.?" + _NAME_AHEAD, "herrn"),
            (r"\bDr\.?" + _NAME_AHEAD, "doktor"),
            (r"(?i)\betc\.?(?!\w)", "et cetera"),
        ),
        "prozent",
        "euro",
        "euro",
        tuple("zwei drei vier fünf sechs sieben acht neun".split()),
    ),
}
LANGUAGE_NORMALIZERS = tuple(f"basic-{lang}" for lang in _PACKS)

_THOUSANDS = re.compile(r"(?<=\d)[.\u00a0\u202f](?=\d{3}(?!\d))")  # "42.000", "42 000" (no-break space)
# "42 millones": text2num reads the scale word alone (1000000) after digits; join the two
_SCALED = re.compile(r"(?<![\d.,])(\d{1,3}) (1000|1000000|1000000000)\b")
_EURO_FIRST = re.compile(r"€\s*(\d[\d.,]*)")  # "€5" is read "five euros": the amount first
_ONE_EURO = re.compile(r"(?<![\d.,])1\s*€")
_EURO = re.compile(r"\s*€")
_PERCENT = re.compile(r"\s*%")


def language_pack(language: str) -> LanguagePack:
    """The :class:`LanguagePack` of ``language`` (``es``, ``fr`` or ``de``; any tag)."""

    lang = primary_language(language)
    if lang not in _PACKS:
        raise ConfigError(
            f"no language normalizer for {language!r}; fix: use one of {', '.join(_PACKS)}, "
            "or the language-agnostic 'basic'"
        )
    return _PACKS[lang]


class LanguageNormalizer:
    """``base`` (the ``basic`` normalizer) with a language's abbreviations, symbols and spelled numbers (``basic-<lang>``).

    Steps: thousands separators inside numbers dropped (``42.000``, ``42\u00a0000``: these
    languages write a period or a no-break space); the pack's abbreviations expanded on the raw text; ``€ 5`` -> ``5 €``; ``€`` and
    ``%`` replaced by the language's words; the ``basic`` normalizer (NFKC, lowercase, tags and
    asides out, punctuation out); then ``text_to_num.alpha2digit`` in the language, with the
    percent word held out of it (``cent`` / ``ciento`` would read as 100), and digits before a
    scale word joined with it (``42 millones`` -> ``42000000``, as the spelled-out amount reads).

    >>> from asr_audit.text.normalize import get_normalizer
    >>> get_normalizer("basic-fr")("M. Dupont et Mme Durand : vingt-et-un pour cent, soit 21 %.")
    'monsieur dupont et madame durand 21 pour cent soit 21 pour cent'
    """

    def __init__(self, language: str, base: Any) -> None:
        from text_to_num import alpha2digit

        self.pack = language_pack(language)
        self.name = f"basic-{self.pack.language}"
        self._basic = base
        self._alpha2digit = alpha2digit
        self._abbreviations = tuple((re.compile(p), r) for p, r in self.pack.abbreviations)
        ahead = rf"(?!\s+(?:{self.pack.number_ahead})\b)" if self.pack.number_ahead else ""
        words = r"\s+".join(map(re.escape, self.pack.percent.split()))
        self._percent = re.compile(rf"\b{words}\b{ahead}", re.IGNORECASE)  # on the raw text: commas still there
        self._placeholder = "".join(self.pack.percent.split())  # one word text2num leaves alone
        self._respell = tuple((re.compile(p), r) for p, r in self.pack.respell)
        self._small = {w: str(i) for i, w in enumerate(self.pack.digits, start=2)}
        # after alpha2digit the percent word is its one-word placeholder (or itself, one word already)
        self._small_percent = re.compile(rf"\b({'|'.join(self.pack.digits)}) (?={re.escape(self._placeholder)}\b)")

    def __call__(self, text: str) -> str:
        s = _THOUSANDS.sub("", text) if "." in text or "\u00a0" in text or "\u202f" in text else text
        for pattern, expansion in self._abbreviations:
            s = pattern.sub(expansion, s)
        if "€" in s:
            s = _EURO_FIRST.sub(r"\1 €", s)
            s = _ONE_EURO.sub(f"1 {self.pack.euro}", s)
            s = _EURO.sub(f" {self.pack.euros}", s)
        if "%" in s:  # the one-word placeholder: a sign is a percent whatever follows it
            s = _PERCENT.sub(f" {self._placeholder}", s)
        held = self._placeholder != self.pack.percent
        if held:
            s = self._percent.sub(self._placeholder, s)
        s = self._basic(s)
        if not s:
            return s
        for pattern, replacement in self._respell:
            s = pattern.sub(replacement, s)
        s = self._alpha2digit(s, self.pack.language)
        if self._small:  # a lone small number alpha2digit left in words
            s = self._small_percent.sub(lambda m: self._small[m.group(1)] + " ", s)
        if " 1000" in s:
            s = _SCALED.sub(lambda m: str(int(m.group(1)) * int(m.group(2))), s)
        if held:
            s = re.sub(rf"\b{self._placeholder}\b", self.pack.percent, s)
        return s

    def describe(self) -> dict[str, Any]:
        """Name, implementation and the ``text2num`` version used for numbers."""

        return {
            "name": self.name,
            "label": f"{self.name} (asr-audit basic + {self.pack.language} abbreviations, symbols, text2num)",
            "implementation": "asr_audit.text.languages.LanguageNormalizer",
            "package": "text2num",
            "package_version": package_version("text2num"),
            "language": self.pack.language,
            "notes": f"thousands separators dropped, {self.pack.language} title/common abbreviations expanded, "
            "% and € as words, then basic, then text_to_num.alpha2digit (percent word held out, digits joined "
            "with a following scale word)",
        }
