"""The Open ASR Leaderboard's current English normalizer (``oal``).

Implemented from the leaderboard's documented pipeline (huggingface/open_asr_leaderboard,
commit d1e99b2) with its three tables, packaged in ``asr_audit/data/oal/`` (see the
``NOTICE.md`` there). Step 9 reuses Whisper's number normalizer from ``whisper-normalizer``
(through :class:`~asr_audit.text.whisper_en.FastNumberNormalizer`, same output).

Pipeline, in order:

1. lowercase;
2. remove ``<...>`` / ``[...]`` spans, then ``(...)`` spans;
3. remove fillers (:data:`FILLERS`, whole words);
4. join a space before an apostrophe;
5. :data:`REPLACERS` in order: informal contractions, title abbreviations, perfect tenses,
   general contractions (``'s`` -> `` is`` only after the pronouns/wh-words listed, so
   "paul's" keeps its ``s`` and becomes "paul s" in step 7);
6. remove commas between digits and periods not followed by a digit;
7. remove symbols and diacritics, keeping ``. % $ ¢ € £`` (NFKD, as Whisper);
8. compound regexes, in file order ("e mail" -> "email", "p m" -> "pm");
9. Whisper's English number normalizer;
10. spelling map, then name map, token by token;
11. acronym collapse: a run of single-character alphanumeric tokens becomes one token when
    it has at least 2 tokens, or at least 3 if it contains "a" or "i";
12. remove ``. $ ¢ € £`` before a non-digit and ``%`` after a non-digit (Whisper's regexes,
    so a symbol that ends the text stays), collapse whitespace and strip the ends.

The output equals the leaderboard's word for word (same whitespace-split tokens). One
difference in the string itself: the leaderboard does not strip the ends, so where it returns
``" hello "`` this returns ``"hello"``. Harmless for any word-level measure (WER, edits), which
splits on whitespace; it matters only to code comparing raw strings.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from asr_audit.text.replacers import ReplacerPlan, word_runs
from asr_audit.text.whisper_en import FastNumberNormalizer, SymbolTable, package_version

__all__ = ["FILLERS", "REPLACERS", "OalNormalizer", "collapse_acronyms", "load_table"]

FILLERS = (
    "hmm",
    "mm",
    "mhm",
    "mmm",
    "uh",
    "um",
    "ah",
    "aha",
    "ahh",
    "ahm",
    "eh",
    "ehehe",
    "em",
    "hm",
    "huh",
    "hum",
    "mhum",
    "uhm",
    "umm",
    "uhuh",
)

_TITLES = {
    "mr": "mister",
    "mrs": "missus",
    "st": "saint",
    "dr": "doctor",
    "prof": "professor",
    "capt": "captain",
    "gov": "governor",
    "ald": "alderman",
    "gen": "general",
    "sen": "senator",
    "rep": "representative",
    "pres": "president",
    "rev": "reverend",
    "hon": "honorable",
    "asst": "assistant",
    "assoc": "associate",
    "lt": "lieutenant",
    "col": "colonel",
    "jr": "junior",
    "sr": "senior",
    "esq": "esquire",
}

REPLACERS: dict[str, str] = {
    # informal contractions
    r"\bwon't\b": "will not",
    r"\bcan't\b": "can not",
    r"\blet's\b": "let us",
    r"\bain't\b": "aint",
    r"\by'all\b": "you all",
    r"\bwanna\b": "want to",
    r"\bgotta\b": "got to",
    r"\bgonna\b": "going to",
    r"\bi'ma\b": "i am going to",
    r"\bimma\b": "i am going to",
    r"\bwoulda\b": "would have",
    r"\bcoulda\b": "could have",
    r"\bshoulda\b": "should have",
    r"\bma'am\b": "madam",
    # title abbreviations: whole word -> full word + space
    **{rf"\b{short}\b": f"{full} " for short, full in _TITLES.items()},
    # perfect tenses
    r"'d been\b": " had been",
    r"'s been\b": " has been",
    r"'d gone\b": " had gone",
    r"'s gone\b": " has gone",
    r"'d done\b": " had done",
    r"'s got\b": " has got",
    # general contractions
    r"n't\b": " not",
    r"'re\b": " are",
    r"\b(it|he|she|what|that|who|here|there|how|when|where|why|this)'s\b": r"\1 is",
    r"'d\b": " would",
    r"'ll\b": " will",
    r"'t\b": " not",
    r"'ve\b": " have",
    r"'m\b": " am",
}

_BRACKETS = re.compile(r"[<\[][^>\]]*[>\]]")
_PARENS = re.compile(r"\(([^)]+?)\)")
_FILLERS = re.compile(r"\b(" + "|".join(FILLERS) + r")\b")
_FILLER_SET = frozenset(FILLERS)  # the pattern matches iff one of them is a \w+ run
_SPACE_APOSTROPHE = re.compile(r"\s+'")
_DIGIT_COMMA = re.compile(r"(\d),(\d)")
_PERIOD = re.compile(r"\.([^0-9]|$)")
_PREFIX_SYMBOL = re.compile(r"[.$¢€£]([^0-9])")
_SUFFIX_PERCENT = re.compile(r"([^0-9])%")
_WS = re.compile(r"\s+")
_TWO_SINGLES = re.compile(r"(?<!\S)\S \S(?!\S)")  # two adjacent one-character tokens


def load_table(name: str) -> Any:
    """One of the packaged JSON tables, e.g. ``load_table("english_name_normalizer")``."""
    path = resources.files("asr_audit") / "data" / "oal" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def collapse_acronyms(tokens: list[str]) -> list[str]:
    """Join runs of single-character alphanumeric tokens (step 11).

    >>> collapse_acronyms("b b c news".split()), collapse_acronyms("a big cat".split())
    (['bbc', 'news'], ['a', 'big', 'cat'])
    >>> collapse_acronyms("i a m".split()), collapse_acronyms("a b".split())
    (['iam'], ['a', 'b'])
    """
    out: list[str] = []
    run: list[str] = []
    for token in [*tokens, ""]:
        if len(token) == 1 and token.isalnum():
            run.append(token)
            continue
        if run:
            needed = 3 if ("a" in run or "i" in run) else 2
            if len(run) >= needed:
                out.append("".join(run))
            else:
                out.extend(run)
            run = []
        if token:
            out.append(token)
    return out


class OalNormalizer:
    """The ``oal`` normalizer (Open ASR Leaderboard English).

    >>> OalNormalizer()("Paul's OK, the U S A e mail at 5 p m")
    'paul s okay the usa email at 5 pm'
    """

    name = "oal"

    def __init__(self) -> None:
        self._replacers = ReplacerPlan(REPLACERS)
        self._symbols = SymbolTable(".%$¢€£")
        self._compounds = ReplacerPlan(load_table("english_compound_normalizer"))
        self._numbers = FastNumberNormalizer()
        spelling: dict[str, str] = load_table("english_spelling_normalizer")
        names: dict[str, str] = load_table("english_name_normalizer")
        # spelling then name, per token, folded into one lookup
        self._words: dict[str, str] = {}
        for word in set(spelling) | set(names):
            target = spelling.get(word, word)
            target = names.get(target, target)
            if target != word:
                self._words[word] = target

    def __call__(self, text: str) -> str:
        s = text.lower()
        if "<" in s or "[" in s:
            s = _BRACKETS.sub("", s)
        if "(" in s:
            s = _PARENS.sub("", s)
        s0 = s
        runs = word_runs(s)
        if not _FILLER_SET.isdisjoint(runs):
            s = _FILLERS.sub("", s)
        if "'" in s:
            s = _SPACE_APOSTROPHE.sub("'", s)
        s = self._replacers(s, runs, s0)
        if "," in s:
            s = _DIGIT_COMMA.sub(r"\1\2", s)
        if "." in s:
            s = _PERIOD.sub(r" \1", s)
        s = self._symbols.apply(s)
        s = self._compounds(s)
        s = self._numbers(s)
        words = self._words
        s = " ".join([words.get(w, w) for w in s.split()])
        if _TWO_SINGLES.search(s) is not None:  # else no run of 2+ single characters exists
            s = " ".join(collapse_acronyms(s.split()))
        if "." in s or "$" in s or "¢" in s or "€" in s or "£" in s:
            s = _PREFIX_SYMBOL.sub(r" \1", s)
        if "%" in s:
            s = _SUFFIX_PERCENT.sub(r"\1 ", s)
        return _WS.sub(" ", s).strip()

    def describe(self) -> dict[str, str]:
        """Name, source of the pipeline and tables, and the number normalizer's package."""
        return {
            "name": self.name,
            "label": "oal (Open ASR Leaderboard English normalizer, commit d1e99b2)",
            "implementation": "asr_audit.text.oal.OalNormalizer "
            "(Open ASR Leaderboard English pipeline, commit d1e99b2)",
            "package": "whisper-normalizer",
            "package_version": package_version("whisper-normalizer"),
            "notes": "leaderboard spelling/name/compound tables; Whisper number normalizer; "
            "acronym collapse; output stripped (the leaderboard keeps end spaces; same tokens)",
        }
