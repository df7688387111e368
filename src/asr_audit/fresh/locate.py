"""Find the text of each recorded utterance in its book (pure functions; LibriSpeech's method, simplified).

A model's transcript of each utterance says roughly what was read; the reference comes from the
book, in the book's own spelling and punctuation. Steps:

1. words are compared in a *match form* (lowercase, letters, digits and inner apostrophes);
2. the whole recording's transcript is anchored in the book by voting on the offsets of shared
   word trigrams (so a chapter is found in a whole book);
3. each utterance is aligned (difflib, no autojunk) to a window of the book around where the
   previous one ended; its span runs from the first to the last matched book word;
4. book words left between two consecutive spans go to the utterance whose transcript has
   unmatched words on that side (split by their counts), so a word the model misheard at an
   utterance's edge is not lost from its reference; words no utterance claims (headings,
   skipped lines) stay out, and so do words before the first span and after the last (a
   LibriVox recording opens with a spoken preamble that is not in the book).

Each :class:`Located` carries its share of matched transcript words; the caller keeps those
above a threshold. The reference is the book's original tokens over the span.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

_KEEP = re.compile(r"[^\w']+")


def match_form(token: str) -> str:
    """A token as words are compared: lowercase letters/digits, inner apostrophes kept.

    >>> match_form("“Well,"), match_form("don't."), match_form("--")
    ('well', "don't", '')
    """
    return _KEEP.sub("", token.lower().replace("’", "'")).strip("'_")


@dataclass(frozen=True, slots=True)
class Book:
    """A text as original tokens and their match forms (empty forms dropped, with back-pointers)."""

    tokens: tuple[str, ...]
    words: tuple[str, ...]  # match forms of the kept tokens
    where: tuple[int, ...]  # words[i] came from tokens[where[i]]

    @classmethod
    def from_text(cls, text: str) -> Book:
        tokens = tuple(text.split())
        words, where = [], []
        for i, tok in enumerate(tokens):
            w = match_form(tok)
            if w:
                words.append(w)
                where.append(i)
        return cls(tokens, tuple(words), tuple(where))

    def reference(self, lo: int, hi: int) -> str:
        """The original text of book words [lo, hi) (from the first word's token to the last's)."""
        return " ".join(self.tokens[self.where[lo] : self.where[hi - 1] + 1])


@dataclass(frozen=True, slots=True)
class Located:
    """Where utterance ``index`` lies in the book: words [lo, hi) (``lo == hi``: not found)."""

    index: int
    lo: int
    hi: int
    matched: int  # transcript words matched to book words
    n_words: int  # transcript words (match forms)

    @property
    def match(self) -> float:
        return self.matched / self.n_words if self.n_words else 0.0


def _anchor(book: Book, words: Sequence[str]) -> int | None:
    """The book offset of ``words`` most trigrams agree on (None: no shared trigram)."""
    index: dict[tuple[str, str, str], list[int]] = {}
    bw = book.words
    for i in range(len(bw) - 2):
        index.setdefault((bw[i], bw[i + 1], bw[i + 2]), []).append(i)
    votes: Counter[int] = Counter()
    for j in range(len(words) - 2):
        for i in index.get((words[j], words[j + 1], words[j + 2]), ())[:5]:
            votes[i - j] += 1
    if not votes:
        return None
    return max(votes.items(), key=lambda kv: (kv[1], -kv[0]))[0]


def locate(book: Book, transcripts: Sequence[str], *, slack: int = 30) -> list[Located]:
    """Each transcript's span in ``book`` (see the module docstring); one :class:`Located` per transcript."""
    forms = [[w for w in (match_form(t) for t in text.split()) if w] for text in transcripts]
    flat = [w for f in forms for w in f]
    offset = _anchor(book, flat)
    out: list[Located] = []
    lead: list[int] = []
    trail: list[int] = []
    if offset is None:
        return [Located(i, 0, 0, 0, len(f)) for i, f in enumerate(forms)]
    cursor = max(0, offset)
    n = len(book.words)
    for i, f in enumerate(forms):
        lo_w = max(0, cursor - slack)
        hi_w = min(n, cursor + len(f) + slack)
        window = book.words[lo_w:hi_w]
        blocks = [b for b in difflib.SequenceMatcher(None, f, window, autojunk=False).get_matching_blocks() if b.size]
        if not f or not blocks:
            out.append(Located(i, cursor, cursor, 0, len(f)))
            lead.append(0)
            trail.append(0)
            continue
        matched = sum(b.size for b in blocks)
        lo = lo_w + blocks[0].b
        hi = lo_w + blocks[-1].b + blocks[-1].size
        lead.append(blocks[0].a)
        trail.append(len(f) - (blocks[-1].a + blocks[-1].size))
        out.append(Located(i, lo, hi, matched, len(f)))
        cursor = hi
    # hand the book words between consecutive spans to the side whose transcript has unmatched words
    fixed = list(out)
    for k in range(len(out) - 1):
        a, b = fixed[k], fixed[k + 1]
        if a.lo == a.hi or b.lo == b.hi or b.lo <= a.hi:
            continue
        gap = b.lo - a.hi
        want = trail[k] + lead[k + 1]
        if want == 0 or gap > want + 3:
            continue
        left = round(gap * trail[k] / want)
        fixed[k] = Located(a.index, a.lo, a.hi + left, a.matched, a.n_words)
        fixed[k + 1] = Located(b.index, b.lo - (gap - left), b.hi, b.matched, b.n_words)
    return fixed
