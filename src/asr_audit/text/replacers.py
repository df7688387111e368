"""Ordered regex replacers run with exact, cheap skip tests.

Whisper-style normalizers apply dozens of ``re.sub`` calls in a fixed order, and most of them
match nothing in a given sentence. :class:`ReplacerPlan` gives the same result while skipping
calls that provably cannot match, using necessary conditions read off each pattern:

* ``\\bw1\\s+w2 ... \\b`` with all-``\\w`` words (one word: ``\\bmr\\b``): every word must
  be a maximal ``\\w+`` run of the string (``\\b`` or whitespace on both sides of each word);
* ``\\b(w1|w2|...)\\b``: at least one of the words must be such a run;
* a pattern that is a plain literal between optional ``\\b`` anchors (``'d been\\b``), or
  that ends in plain text (``\\b(it|he)'s\\b``): that text must be a substring.

Consecutive word-based patterns form one group whose test is "some word of the group is a
run"; consecutive apostrophe literals form a group tested by "an apostrophe occurs". If no
pattern of a group matches the string at the group's start, the first leaves the string
unchanged, the second sees the same string, and so on, so skipping the group is exact.
Inside a group each pattern is tested against the *current* string before it runs.
"""

from __future__ import annotations

import re

__all__ = [
    "ReplacerPlan",
    "literal_of",
    "required_suffix",
    "word_alternatives",
    "word_runs",
    "word_sequence",
]

_META = set(".^$*+?{}[]\\|()")
_WORD_RUN = re.compile(r"\w+")
# every ASCII character: a non-word character -> a space, a word character -> itself (a table
# that names all 128 lets str.translate take its ASCII fast path; a missing key is a slow miss)
_ASCII_NON_WORD = {code: chr(code) if _WORD_RUN.fullmatch(chr(code)) else " " for code in range(128)}
_ALTERNATIVES = re.compile(r"\\b\((\w+(?:\|\w+)*)\)\\b")
_GROUP_THEN_TEXT = re.compile(r"(?:\\b)?\(\w+(?:\|\w+)*\)([^.^$*+?{}\[\]\\|()]+)(?:\\b)?")
_SEQUENCE = re.compile(r"\\b(\w+(?:\\s\+\w+)*)\\b")


def literal_of(pattern: str) -> str | None:
    """The literal a ``\\b``-anchored pattern needs in its subject, or None if not a literal.

    >>> literal_of(r"\\bwon't\\b"), literal_of(r"'d been\\b"), literal_of(r"\\b(a|b)\\b")
    ("won't", "'d been", None)
    """
    body = pattern
    if body.startswith(r"\b"):
        body = body[2:]
    if body.endswith(r"\b"):
        body = body[:-2]
    if not body or any(ch in _META for ch in body):
        return None
    return body


def required_suffix(pattern: str) -> str | None:
    """The plain text after the group of a ``\\b(w1|w2|...)text\\b`` pattern, or None.

    Every match of such a pattern contains that text.

    >>> required_suffix(r"\\b(it|he)'s\\b"), required_suffix(r"(\\d),(\\d)")
    ("'s", None)
    """
    match = _GROUP_THEN_TEXT.fullmatch(pattern)
    return None if match is None else match.group(1)


def word_alternatives(pattern: str) -> frozenset[str] | None:
    """Words of a ``\\b(w1|w2|...)\\b`` pattern (one must be a ``\\w+`` run), else None.

    >>> sorted(word_alternatives(r"\\b(uh|um)\\b")), word_alternatives(r"n't\\b")
    (['uh', 'um'], None)
    """
    match = _ALTERNATIVES.fullmatch(pattern)
    return None if match is None else frozenset(match.group(1).split("|"))


def word_sequence(pattern: str) -> frozenset[str] | None:
    """Words of a ``\\bw1\\s+w2\\b`` / ``\\bw\\b`` pattern (all must be ``\\w+`` runs), else None.

    >>> sorted(word_sequence(r"\\be\\s+mail\\b")), sorted(word_sequence(r"\\bmr\\b"))
    (['e', 'mail'], ['mr'])
    >>> word_sequence(r"\\bwon't\\b") is None
    True
    """
    match = _SEQUENCE.fullmatch(pattern)
    return None if match is None else frozenset(match.group(1).split(r"\s+"))


# entry: (kind, words, literal, compiled pattern, replacement); kind in {"all", "any", "lit", "re"}
_Entry = tuple[str, frozenset[str], "str | None", "re.Pattern[str]", str]


class ReplacerPlan:
    """Apply ``{pattern: replacement}`` in order, exactly like successive ``re.sub`` calls.

    >>> plan = ReplacerPlan({r"\\bab\\b": "cd", r"\\bcd\\s+x\\b": "y", r"n't\\b": " not"})
    >>> plan("ab x don't"), plan("abc")
    ('y do not', 'abc')
    """

    def __init__(self, replacers: dict[str, str]) -> None:
        groups: list[tuple[str, set[str], list[_Entry]]] = []
        for pattern, replacement in replacers.items():
            compiled = re.compile(pattern)
            literal = literal_of(pattern) or required_suffix(pattern)
            sequence, alternatives = word_sequence(pattern), word_alternatives(pattern)
            if sequence is not None:
                entry: _Entry = ("all", sequence, literal, compiled, replacement)
            elif alternatives is not None:
                entry = ("any", alternatives, None, compiled, replacement)
            elif literal is not None:
                entry = ("lit", frozenset(), literal, compiled, replacement)
            else:
                entry = ("re", frozenset(), None, compiled, replacement)
            group = (
                "words"
                if entry[0] in ("all", "any")
                else ("apostrophe" if literal is not None and "'" in literal else "other")
            )
            if groups and groups[-1][0] == group and group != "other":
                groups[-1][1].update(entry[1])
                groups[-1][2].append(entry)
            else:
                groups.append((group, set(entry[1]), [entry]))
        self.groups = tuple((g, frozenset(words), tuple(entries)) for g, words, entries in groups)

    def __call__(self, s: str, runs: set[str] | None = None, runs_of: str | None = None) -> str:
        """Apply every replacer; ``runs`` may carry the ``\\w+`` runs of string ``runs_of``."""
        for group, words, entries in self.groups:
            if group == "apostrophe" and "'" not in s:
                continue
            if group == "words":
                if runs is None or runs_of != s:
                    runs, runs_of = word_runs(s), s
                if words.isdisjoint(runs):
                    continue
            for kind, needed, literal, pattern, replacement in entries:
                if kind == "all" or kind == "any":
                    if runs is None or runs_of != s:
                        runs, runs_of = word_runs(s), s
                    if kind == "all" and not needed <= runs:
                        continue
                    if kind == "any" and needed.isdisjoint(runs):
                        continue
                elif literal is not None and literal not in s:
                    continue
                s = pattern.sub(replacement, s)
        return s


def word_runs(s: str) -> set[str]:
    """The maximal ``\\w+`` runs of ``s`` (what the word tests above look up).

    >>> sorted(word_runs("it's mr. x_1 é"))
    ['it', 'mr', 's', 'x_1', 'é']
    """
    if s.isascii():  # same runs, 3x faster: ASCII non-word characters -> spaces, then split
        return set(s.translate(_ASCII_NON_WORD).split())
    return set(_WORD_RUN.findall(s))
