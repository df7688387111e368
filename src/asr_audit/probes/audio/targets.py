"""Which spans of a reference the audio probes hide: numbers, names or content words.

A *target* is a run of whitespace tokens of the reference with its aligned time span. Kinds:

* ``number`` (default) — written numbers (``2011``, ``$45``, ``3.5%``, ``21st``, ``1990s``) and
  spelled ones (``twenty eleven``, ``three point five``, ``forty-five``), one target per run of
  number tokens: joiners ``and`` / ``point`` / ``oh`` after a cardinal word stay inside a spelled run, and a following
  unit word (``percent``, ``dollars``, ``euros`` ...) joins it as part of an amount. A run ends
  at sentence punctuation. Lone ``one``, ``first`` and ``second`` are skipped: they are usually a
  pronoun, an adverb or a unit of time, which a language prior guesses.
* ``name`` — capitalized words that are not sentence-initial (not the first token, not after
  ``.``/``!``/``?``), joined into one target when adjacent, with a preceding title (``Mr``,
  ``Dr``, ``Madam`` ...). All-caps or all-lowercase references have no detectable names.
* ``word`` — single content words: alphabetic, at least 4 letters, not a function word.

**Which occurrences qualify** (:class:`TargetRule`): the target leaves at least
``context_words`` tokens on each side (never the first or last word: masking at the edge
would test truncation, not recovery), every token of it was aligned, and its aligned span lasts
at least ``min_duration`` seconds. ``max_per_clip`` keeps only the first qualifying targets of a
clip. Rejected candidates come back with their reason, for the run summary.

>>> from asr_audit.align.records import WordTiming as W
>>> words = [W("He", 0.1, 0.3), W("paid", 0.35, 0.6), W("45", 0.7, 1.1), W("dollars", 1.1, 1.6), W("today.", 1.7, 2.2)]
>>> [t.text for t in select_targets("c1", "He paid 45 dollars today.", words)[0]]
['45 dollars']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from asr_audit.errors import ConfigError
from asr_audit.options import check
from asr_audit.text.numbers import (
    CARDINAL_WORDS,
    JOINERS,
    UNIT_WORDS,
    canonical_tokens,
    is_number_token,
    is_number_word,
)

Seconds = float
KINDS = ("number", "name", "word")
_SKIP_NUMBERS = frozenset({"one", "first", "second"})


def sentence_key(reference: str) -> str:
    """The sentence a clip reads, for clustering: its canonical reference tokens (Whisper normalization
    and number canonicalization), so one sentence rendered in several voices is one cluster.

    >>> sentence_key("She paid forty-five dollars.") == sentence_key("she paid 45 dollars")
    True
    """
    return " ".join(canonical_tokens(reference)) or reference.strip()


_TITLES = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sir",
        "madam",
        "lady",
        "lord",
        "president",
        "commissioner",
        "minister",
        "saint",
        "st",
    }
)
_FUNCTION = frozenset(
    """a about above after again against all also although am an and any are as at be because
been before being below between both but by can could did do does doing down during each either even ever every
few for from further had has have having he her here hers herself him himself his how however i if in into is it
its itself just least less like made make many may me might more most much must my myself neither no nor not now
of off on once only or other ought our ours ourselves out over own perhaps rather same shall she should since so
some such than that the their theirs them themselves then there these they this those though through thus to too
under until up upon us very was we were what when where whether which while who whom whose why will with within
without would yet you your yours yourself yourselves""".split()
)
_SENTENCE_END = (".", "!", "?", "…")
_EDGE = "\"'“”‘’()[]{}<>.,;:!?…—–*_~`|\\"


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetRule:
    """Which candidate spans qualify (see the module docstring)."""

    kind: str = "number"
    min_duration: Seconds = 0.15
    context_words: int = 1
    max_per_clip: int | None = None

    def __post_init__(self) -> None:
        check(
            self.kind in KINDS,
            "kind",
            self.kind,
            f"is unknown (valid: {', '.join(KINDS)})",
            f"use one of {', '.join(KINDS)}",
        )
        check(self.min_duration >= 0, "min_duration", self.min_duration, "must be >= 0 seconds", "use 0 or more")
        check(
            isinstance(self.context_words, int) and self.context_words >= 0,
            "context_words",
            self.context_words,
            "must be an integer >= 0",
            "use 0 or more",
        )
        check(
            self.max_per_clip is None or self.max_per_clip >= 1,
            "max_per_clip",
            self.max_per_clip,
            "must be >= 1",
            "use 1 or more, or leave it out for every target",
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "min_duration": self.min_duration,
            "context_words": self.context_words,
            "max_per_clip": self.max_per_clip,
        }


@dataclass(frozen=True, slots=True)
class Target:
    """A span of reference tokens ``[start, end)`` to hide, with its aligned time span."""

    clip_id: str
    kind: str
    start: int
    end: int
    text: str
    t0: Seconds
    t1: Seconds
    prev_end: Seconds | None
    next_start: Seconds | None

    @property
    def duration(self) -> Seconds:
        return self.t1 - self.t0

    def to_dict(self) -> dict[str, Any]:
        return {
            "clip_id": self.clip_id,
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "t0": self.t0,
            "t1": self.t1,
        }


@dataclass(frozen=True, slots=True)
class Rejection:
    """A candidate that did not qualify, and why (``edge``, ``unaligned``, ``too_short``, ``limit``)."""

    clip_id: str
    text: str
    reason: str


def _bare(token: str) -> str:
    return token.lower().replace("’", "'").strip(_EDGE)


def _ends_sentence(token: str) -> bool:
    if _bare(token) in _TITLES:  # "Mr." does not end a sentence
        return False
    return token.rstrip("\"'”’)]").endswith(_SENTENCE_END)


def _ends_clause(token: str) -> bool:
    if _bare(token) in _TITLES and token.endswith("."):
        return False
    return token.rstrip("\"'”’)]").endswith((*_SENTENCE_END, ",", ";", ":"))


def number_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Token ranges of the numbers in ``tokens`` (see the module docstring).

    >>> number_spans("in twenty eleven we paid 3.5 percent of one hundred and five euros".split())
    [(1, 3), (5, 7), (8, 13)]
    >>> number_spans("one of them came second".split())
    []
    """
    spans: list[tuple[int, int]] = []
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if not (is_number_token(tok) or is_number_word(tok)):
            i += 1
            continue
        j = i + 1
        spelled = is_number_word(tok)
        while j < n and not _ends_clause(tokens[j - 1]):
            nxt = tokens[j]
            if is_number_word(nxt) or (is_number_token(nxt) and not spelled):
                spelled = spelled or is_number_word(nxt)
                j += 1
            elif (
                spelled
                and _bare(nxt) in JOINERS
                and _bare(tokens[j - 1]).split("-")[-1] in CARDINAL_WORDS
                and j + 1 < n
                and is_number_word(tokens[j + 1])
                and not _ends_clause(nxt)
            ):
                j += 2
            else:
                break
        while j < n and not _ends_clause(tokens[j - 1]) and _bare(tokens[j]) in UNIT_WORDS:
            j += 1
        if not (j - i == 1 and _bare(tok) in _SKIP_NUMBERS):
            spans.append((i, j))
        i = j
    return spans


def _is_name(token: str) -> bool:
    word = token.strip(_EDGE)
    return (
        len(word) > 1
        and word[0].isupper()
        and any(c.islower() for c in word)
        and word.replace("-", "").replace("'", "").isalpha()
        and _bare(word) not in _FUNCTION
    )


def name_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Token ranges of capitalized names that are not sentence-initial (titles included).

    >>> name_spans("We thank Mr. Jan Kowalski for the report. Then we vote".split())
    [(2, 5)]
    """
    spans: list[tuple[int, int]] = []
    i, n = 0, len(tokens)
    while i < n:
        initial = i == 0 or _ends_sentence(tokens[i - 1])
        if _is_name(tokens[i]) and not (initial and _bare(tokens[i]) not in _TITLES):
            j = i + 1
            while j < n and not _ends_clause(tokens[j - 1]) and _is_name(tokens[j]):
                j += 1
            if not (j - i == 1 and _bare(tokens[i]) in _TITLES):
                spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def word_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Single content words: alphabetic, >= 4 letters, not a function word.

    >>> word_spans("the bridge was finished in 2011".split())
    [(1, 2), (3, 4)]
    """
    return [
        (i, i + 1)
        for i, t in enumerate(tokens)
        if len(_bare(t)) >= 4 and _bare(t).replace("'", "").isalpha() and _bare(t) not in _FUNCTION
    ]


_FINDERS = {"number": number_spans, "name": name_spans, "word": word_spans}


def select_targets(
    clip_id: str, reference: str, words: Sequence[Any], rule: TargetRule = TargetRule()
) -> tuple[list[Target], list[Rejection]]:
    """The qualifying targets of one clip, and the rejected candidates with their reasons.

    ``words`` are the aligned word timings, one per whitespace token of ``reference``
    (:class:`~asr_audit.align.records.WordTiming` or anything with ``start`` / ``end``).
    """
    tokens = reference.split()
    if len(words) != len(tokens):
        raise ConfigError(
            f"clip {clip_id!r}: {len(words)} word timings for {len(tokens)} reference tokens; "
            "fix: align the same reference text"
        )
    chosen: list[Target] = []
    rejected: list[Rejection] = []
    for start, end in _FINDERS[rule.kind](tokens):
        text = " ".join(tokens[start:end])
        if start < rule.context_words or end > len(tokens) - rule.context_words:
            rejected.append(Rejection(clip_id, text, "edge"))
            continue
        span = words[start:end]
        if any(w.end <= w.start for w in span):
            rejected.append(Rejection(clip_id, text, "unaligned"))
            continue
        t0, t1 = float(span[0].start), float(span[-1].end)
        if t1 - t0 < rule.min_duration:
            rejected.append(Rejection(clip_id, text, "too_short"))
            continue
        if rule.max_per_clip is not None and len(chosen) >= rule.max_per_clip:
            rejected.append(Rejection(clip_id, text, "limit"))
            continue
        prev_end = float(words[start - 1].end) if start > 0 else None
        next_start = float(words[end].start) if end < len(tokens) else None
        chosen.append(Target(clip_id, rule.kind, start, end, text, t0, t1, prev_end, next_start))
    return chosen, rejected
