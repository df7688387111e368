"""How prediction files are read when they come as people export them (issue 29).

A :class:`ReadOptions` record says which column holds the clip id, the reference and the
hypothesis (``--id-col`` / ``--ref-col`` / ``--hyp-col``, or a spec's ``columns = {...}``), how a
clip id is taken from that column (``--id-from basename|stem|regex:...``), what to do when two
files give one clip different references (``--references strict|normalized|from:<model>``),
whether to repair mojibake (``--fix-encoding``, with the optional ``ftfy`` package) and how
little the files' clip ids may overlap before the run refuses (``--min-id-overlap``).

The default record reads files as before: every column found by name, ids as written, one
reference per clip or an error. Every repair a non-default record makes is counted in
:class:`Repairs` with examples, and the verbs print it: nothing is changed silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_audit.errors import InputFileError, require
from asr_audit.options import Reader, Surface, build, check

ID_FROM = ("as-is", "basename", "stem")
REFERENCE_POLICIES = ("strict", "normalized")
COLUMN_ROLES = ("id", "ref", "hyp")
FIELDS = ("columns", "id_col", "ref_col", "hyp_col", "id_from", "references", "fix_encoding", "min_id_overlap")
DEFAULT_MIN_ID_OVERLAP = 0.2
"""The least share of a file's clip ids that the other files must share (of the smaller side)
before a run goes on: below it the files name their clips differently (paths against bare ids,
another corpus) and a run would count the missing clips as deleted words."""

_STEM = re.compile(r"\.[A-Za-z0-9]{0,5}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadOptions:
    """How prediction files are read (see the module docstring).

    >>> ReadOptions(id_from="stem").clip_id("/mnt/c/data/clips/ab12.mp3")
    'ab12'
    >>> ReadOptions(id_from="stem").clip_id("./en/clips/ab12.")
    'ab12'
    >>> ReadOptions(id_from="basename").clip_id("C:\\\\data\\\\ab12.wav")
    'ab12.wav'
    >>> ReadOptions(id_from=r"regex:(\\d+)\\.wav$").clip_id("spk1/0042.wav")
    '0042'
    >>> ReadOptions(references="from:whisper").reference_model
    'whisper'
    """

    columns: Mapping[str, str] = field(default_factory=dict)  # role (id / ref / hyp) -> column name
    id_from: str = "as-is"
    references: str = "strict"
    fix_encoding: bool = False
    min_id_overlap: float = DEFAULT_MIN_ID_OVERLAP

    def __post_init__(self) -> None:
        for role, name in self.columns.items():
            check(
                role in COLUMN_ROLES,
                "columns",
                dict(self.columns),
                f"names the role {role!r}",
                f"use the roles {', '.join(COLUMN_ROLES)}",
            )
            check(
                isinstance(name, str),
                "columns",
                dict(self.columns),
                f"maps {role} to a non-name",
                "give the header's name",
            )
        pattern = self.id_pattern
        check(
            self.id_from in ID_FROM or pattern is not None,
            "id_from",
            self.id_from,
            "is not an id rule",
            "use basename, stem or regex:PATTERN (the first group, else the whole match, is the id)",
        )
        check(
            self.references in REFERENCE_POLICIES or (self.reference_model or "") != "",
            "references",
            self.references,
            "is not a reference policy",
            "use strict, normalized or from:MODEL (that model's file gives every reference)",
        )
        check(
            0.0 <= self.min_id_overlap <= 1.0,
            "min_id_overlap",
            self.min_id_overlap,
            "is not a share",
            "use a number from 0 (go on whatever the overlap) to 1",
        )

    @property
    def id_pattern(self) -> re.Pattern[str] | None:
        """The compiled ``regex:`` rule of :attr:`id_from` (``None`` for the other rules)."""
        if not self.id_from.startswith("regex:"):
            return None
        try:
            return re.compile(self.id_from[len("regex:") :])
        except re.error as exc:
            check(False, "id_from", self.id_from, f"is not a valid regular expression ({exc})", "fix the pattern")
            raise AssertionError from exc  # unreachable: check raised

    @property
    def reference_model(self) -> str | None:
        """The model named by ``references = "from:MODEL"`` (else ``None``)."""
        return self.references[len("from:") :].strip() if self.references.startswith("from:") else None

    @property
    def is_default(self) -> bool:
        """Whether files are read exactly as without options (the fast cached paths apply)."""
        return self == ReadOptions()

    def clip_id(self, raw: str) -> str:
        """The clip id :attr:`id_from` takes from the id column's ``raw`` value (``raw`` when no
        rule is set; ``""`` when a ``regex:`` rule does not match)."""
        if self.id_from == "as-is":
            return raw
        if self.id_from in ("basename", "stem"):
            base = re.split(r"[/\\]", raw.rstrip("/\\"))[-1]
            return _STEM.sub("", base) if self.id_from == "stem" else base
        pattern = self.id_pattern
        m = None if pattern is None else pattern.search(raw)
        if m is None:
            return ""
        return m.group(1) if m.re.groups else m.group(0)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface, what: str = "prediction files") -> ReadOptions:
        """Options from flag or spec values (``None`` = not given): ``id_col`` / ``ref_col`` /
        ``hyp_col`` (flags) or ``columns = {id = ..., ref = ..., hyp = ...}`` (a spec's table)."""
        r = Reader(values, surface, FIELDS, what)
        columns: dict[str, str] = {}
        table = r.values.get("columns")
        if table is not None:
            if not isinstance(table, Mapping):
                raise surface.error("columns", table, "is not a table", 'write columns = {id = "path", ref = "..."}')
            columns.update({str(k): v for k, v in table.items()})
        for role in COLUMN_ROLES:
            name = r.text(f"{role}_col", None)
            if name is not None:
                columns[role] = name
        return build(
            cls,
            surface,
            columns=columns,
            id_from=r.text("id_from", "as-is"),
            references=r.text("references", "strict"),
            fix_encoding=r.flag("fix_encoding", False),
            min_id_overlap=r.number("min_id_overlap", DEFAULT_MIN_ID_OVERLAP),
        )


# ----------------------------------------------------------------------------- what was repaired


@dataclass(frozen=True, slots=True)
class Repair:
    """One kind of change reading made: how many, with up to three examples."""

    what: str
    count: int
    examples: tuple[str, ...]

    def describe(self) -> str:
        """One line: ``what: count (e.g. ...)``."""
        shown = "; ".join(self.examples)
        return f"{self.what}: {self.count}" + (f" (e.g. {shown})" if shown else "")


class Repairs:
    """Collects the changes made while reading a set (:meth:`note`), then freezes them (:meth:`done`)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._examples: dict[str, list[str]] = {}

    def note(self, what: str, example: str | None = None) -> None:
        """Count one change of kind ``what`` (keeping the first three examples)."""
        self._counts[what] = self._counts.get(what, 0) + 1
        shown = self._examples.setdefault(what, [])
        if example is not None and len(shown) < 3:
            shown.append(example)

    def done(self) -> tuple[Repair, ...]:
        return tuple(Repair(w, n, tuple(self._examples[w])) for w, n in self._counts.items())


def short(text: str, width: int = 40) -> str:
    """``text`` quoted, cut to ``width`` characters."""
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def tail(text: str, width: int = 40) -> str:
    """``text`` quoted, its last ``width`` characters (a path's end says the most)."""
    return repr(text if len(text) <= width else "…" + text[-(width - 1) :])


def change(old: str, new: str, context: int = 10) -> str:
    """Where ``old`` and ``new`` differ, with ``context`` characters around: ``'…a cafÃ© n…' -> '…a café n…'``.

    >>> print(change("the cafÃ© near the sea", "the café near the sea", 4))
    '… cafÃ© nea…' -> '… café nea…'
    >>> print(change("It is so.", "it is so"))
    'It is so.' -> 'it is so'
    """
    start = next((i for i, (x, y) in enumerate(zip(old, new)) if x != y), min(len(old), len(new)))
    end = 0
    while end < min(len(old), len(new)) - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1

    def cut(text: str) -> str:
        lo, hi = max(0, start - context), min(len(text), len(text) - end + context)
        shown = text[lo:hi]
        if len(shown) > 4 * context + 20:  # a long difference: its two ends
            shown = shown[: 2 * context + 10] + "…" + shown[-(2 * context + 10) :]
        return ("…" if lo else "") + shown + ("…" if hi < len(text) else "")

    return f"{cut(old)!r} -> {cut(new)!r}"


# ----------------------------------------------------------------------------- columns


def pick_column(
    keys: Sequence[object], names: Sequence[str], prefixes: Sequence[str] = (), given: str | None = None
) -> str | None:
    """The column of ``keys`` that holds a field: ``given`` (when set, or ``None`` if absent), else
    the first of ``names`` present, else the first of them matching case-insensitively, else the
    first key that starts with one of ``prefixes`` (``transcription_en-US``).

    >>> pick_column(["", "path", "Sentence"], ("text", "sentence"))
    'Sentence'
    >>> pick_column(["paths", "transcription_en-US"], ("pred",), ("transcription_",))
    'transcription_en-US'
    """
    present = [k for k in keys if isinstance(k, str)]
    if given is not None:
        return given if given in present else None
    have = set(present)
    hit = next((n for n in names if n in have), None)
    if hit is not None:
        return hit
    lower = {k.lower(): k for k in reversed(present)}
    hit = next((lower[n] for n in names if n in lower), None)
    if hit is not None:
        return hit
    return next((k for k in present if any(k.lower().startswith(p) for p in prefixes)), None)


def header_names(keys: Sequence[object]) -> str:
    """A header's column names for an error message (a blank name shown as ``(blank)``)."""
    return ", ".join("(blank)" if k in ("", None) else str(k) for k in keys) or "none"


# ----------------------------------------------------------------------------- mojibake

# a UTF-8 lead byte read as cp1252 / latin-1, then a continuation byte read the same way
_MOJIBAKE = re.compile(
    "[\u00c2-\u00f4][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u2013\u2014"
    "\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]"
)


def looks_like_mojibake(text: str) -> bool:
    """Whether ``text`` holds UTF-8 bytes read as cp1252 or latin-1 (``cafÃ©`` for ``café``).

    >>> looks_like_mojibake("cafÃ©"), looks_like_mojibake("café"), looks_like_mojibake("itâ€™s")
    (True, False, True)
    """
    return _MOJIBAKE.search(text) is not None


def mojibake_note(*texts: str) -> str:
    """A clause for a reference-conflict error when one of ``texts`` looks like mojibake ("" if none).

    >>> mojibake_note("a café", "a cafÃ© au lait")
    " ('Ã©' in 'a cafÃ© au lait' looks like mojibake, UTF-8 read as cp1252/latin-1; --fix-encoding repairs it)"
    """
    for text in texts:
        m = _MOJIBAKE.search(text)
        if m is not None:
            around = text[max(0, m.start() - 10) : m.end() + 10]
            return (
                f" ({m.group(0)!r} in {around!r} looks like mojibake, UTF-8 read as cp1252/latin-1;"
                " --fix-encoding repairs it)"
            )
    return ""


def encoding_fixer() -> Callable[[str], str]:
    """``ftfy.fix_encoding`` (the optional ``repair`` extra): undoes mojibake, changes nothing else."""
    ftfy = require("ftfy", "repair")
    fix: Callable[[str], str] = ftfy.fix_encoding
    return fix


# ----------------------------------------------------------------------------- clip-id overlap


def check_id_overlap(files: Sequence[tuple[Path, Collection[str]]], min_overlap: float) -> None:
    """Refuse a set whose files barely share clip ids: each file (after the first) against the
    ids of the files before it, as a share of the smaller side; below ``min_overlap`` the error
    names the file and shows two unmatched ids from each side."""
    if min_overlap <= 0 or len(files) < 2:
        return
    seen: dict[str, Path] = {}
    for path, ids in files:
        if seen:
            shared = sum(1 for c in ids if c in seen)
            smaller = min(len(ids), len(seen))
            if smaller and shared < min_overlap * smaller:
                here = [c for c in ids if c not in seen][:2]
                there_ids = set(ids)
                there = [c for c in seen if c not in there_ids][:2]
                other = seen[there[0]] if there else next(iter(seen.values()))
                raise InputFileError(
                    path,
                    f"its clip ids barely match the other files' ({shared} of {smaller} shared, under "
                    f"{min_overlap:.0%}): here {', '.join(map(repr, here))}; in {other.name}: "
                    f"{', '.join(map(repr, there))}",
                    "make the ids the same with --id-from basename|stem|regex:PATTERN (a spec: id_from), "
                    "or pass --min-id-overlap 0 to go on with them as they are",
                )
        for c in ids:
            seen.setdefault(c, path)


def reference_key(normalize: Callable[[str], str] | None) -> Callable[[str], Any]:
    """How two references are compared: as written, or by their normalized words."""
    if normalize is None:
        return lambda s: s
    return lambda s: tuple(normalize(s).split())


def from_model_missing(model: str, models: Sequence[str]) -> str:
    """The problem text for ``--references from:MODEL`` naming no file of the set."""
    return f"--references from:{model} names no model of the set (models: {', '.join(models)})"
