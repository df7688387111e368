"""Clip groups: which clips belong together (a sentence read several times, a long recording's chunks).

A group assignment comes from a regular expression over clip ids (named group ``group``, or the
first group; optionally ``index`` for the chunk order and ``start`` for its start time in seconds)
or from a mapping file (JSONL/JSON/CSV/Parquet, the prediction files' formats) with a clip id
column (a prediction file's id column, or ``clip_id`` / ``chunk_id``), a group column (``group``, ``recording``, ``recording_id``, ``cluster``, ``sentence``,
``sentence_id``) and optional ``index`` / ``order`` and ``start`` / ``offset`` columns.

The gate clusters its bootstrap by these groups; long-form scoring concatenates each group's
chunks in order. Every malformed input raises :class:`~asr_audit.errors.InputFileError` or
:class:`~asr_audit.errors.ConfigError` naming the file, row or pattern and the fix.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from asr_audit.corpus.predfiles import ID_COLUMNS, _reader_for
from asr_audit.errors import ConfigError, InputFileError

CLIP_COLUMNS = ("clip_id", "chunk_id")  # besides the prediction files' id columns
GROUP_COLUMNS = ("group", "recording", "recording_id", "cluster", "sentence", "sentence_id")
INDEX_COLUMNS = ("index", "order", "chunk", "chunk_index")
START_COLUMNS = ("start", "offset", "start_time")

Seconds = float


@dataclass(frozen=True, slots=True)
class Member:
    """One clip's place in its group: the group, its order key and (when known) its start time."""

    group: str
    index: float | None = None
    start: Seconds | None = None


def _first(keys: Iterable[str], names: Iterable[str]) -> str | None:
    lowered = {k.lower(): k for k in keys}
    return next((lowered[n] for n in names if n in lowered), None)


def compile_pattern(pattern: str, flag: str) -> re.Pattern[str]:
    """``pattern`` compiled, with one group to name the clip's group (``(?P<group>...)`` or the first).

    >>> compile_pattern(r"(?P<group>.+)_chunk_(?P<index>\\d+)", "--group-pattern").groupindex["index"]
    2
    """
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ConfigError(
            f"{flag} {pattern!r} is not a regular expression ({exc}); fix: e.g. {flag} '(.+)_chunk_\\d+'"
        ) from None
    if rx.groups == 0:
        raise ConfigError(
            f"{flag} {pattern!r} has no group to name the clip's group; fix: wrap that part in parentheses, "
            f"e.g. {flag} '(?P<group>.+)_chunk_(?P<index>\\d+)'"
        )
    return rx


def groups_from_pattern(clip_ids: Iterable[str], pattern: str, flag: str = "--group-pattern") -> dict[str, Member]:
    """Each clip id's :class:`Member` by ``pattern`` (``re.search``); an id it does not match is an error.

    >>> m = groups_from_pattern(["r1_chunk_2", "r1_chunk_10"], r"(?P<group>.+)_chunk_(?P<index>\\d+)")
    >>> m["r1_chunk_10"]
    Member(group='r1', index=10.0, start=None)
    """
    rx = compile_pattern(pattern, flag)
    out: dict[str, Member] = {}
    for cid in clip_ids:
        match = rx.search(cid)
        if match is None:
            raise ConfigError(
                f"{flag} {pattern!r} does not match clip id {cid!r}; fix: widen the pattern, or give a mapping file"
            )
        group = match.group("group") if "group" in rx.groupindex else match.group(1)
        if not group:
            raise ConfigError(f"{flag} {pattern!r} gives clip id {cid!r} an empty group; fix: adjust the pattern")
        out[cid] = Member(group, _number(match, "index", cid, flag), _number(match, "start", cid, flag))
    return out


def _number(match: re.Match[str], name: str, cid: str, flag: str) -> float | None:
    if name not in match.re.groupindex or match.group(name) is None:
        return None
    try:
        value = float(match.group(name))
        if not math.isfinite(value):
            raise ValueError(name)
        return value
    except ValueError:
        raise ConfigError(
            f"{flag}: group {name!r} of clip id {cid!r} is {match.group(name)!r}, not a number; "
            f"fix: match only digits in (?P<{name}>...)"
        ) from None


def load_group_file(path: str | Path) -> dict[str, Member]:
    """Clip id -> :class:`Member` from a mapping file (see the module docstring for its columns)."""

    path = Path(path)
    if not path.is_file():
        raise InputFileError(path, "no such file", "pass a JSONL/JSON/CSV/Parquet file of clip ids and groups")
    out: dict[str, Member] = {}
    lines: dict[str, int] = {}
    cols: tuple[str | None, str | None, str | None, str | None] | None = None
    for line, obj in _reader_for(path)(path):
        if cols is None:
            keys = [str(k) for k in obj]
            cols = (
                _first(keys, (*ID_COLUMNS, *CLIP_COLUMNS)),
                _first(keys, GROUP_COLUMNS),
                _first(keys, INDEX_COLUMNS),
                _first(keys, START_COLUMNS),
            )
            for col, names, what in zip(cols[:2], ((*ID_COLUMNS, *CLIP_COLUMNS), GROUP_COLUMNS), ("clip id", "group")):
                if col is None:
                    raise InputFileError(
                        path,
                        f"no {what} column (have: {', '.join(keys) or 'none'})",
                        f"name the {what} column one of {', '.join(names)}",
                        line,
                    )
        id_col, group_col, index_col, start_col = cols
        cid, group = obj.get(id_col or ""), obj.get(group_col or "")
        if cid is None or str(cid).strip() == "" or group is None or str(group).strip() == "":
            raise InputFileError(path, "row lacks a clip id or a group", "give every row a clip id and a group", line)
        cid = str(cid)
        if cid in out:
            raise InputFileError(
                path, f"duplicate clip id {cid!r} (first on line {lines[cid]})", "keep one row per clip", line
            )
        out[cid] = Member(
            str(group),
            _file_number(path, line, index_col, obj),
            _file_number(path, line, start_col, obj),
        )
        lines[cid] = line
    if not out:
        raise InputFileError(path, "file has no rows", "write one row per clip: clip id and group")
    return out


def _file_number(path: Path, line: int, col: str | None, obj: Mapping[str, object]) -> float | None:
    if col is None or obj.get(col) is None or obj.get(col) == "":
        return None
    value = obj[col]
    try:
        number = float(value)  # type: ignore[arg-type]
        if not math.isfinite(number):  # NaN would pass the duplicate check (NaN != NaN) and sort anywhere
            raise ValueError(col)
        return number
    except (TypeError, ValueError):
        raise InputFileError(
            path, f"column {col!r} is {value!r}, not a finite number", f"write {col} as a number", line
        ) from None


def resolve_groups(
    clip_ids: Iterable[str], *, pattern: str | None, path: str | Path | None, flag: str
) -> tuple[dict[str, Member] | None, str]:
    """The groups named by a pattern or a file (never both), and how to name them in an output.

    Returns ``(None, "clip")`` when neither is given (every clip its own group).
    """
    if pattern is not None and path is not None:
        raise ConfigError(f"{flag}-pattern and {flag}-file both given; fix: use one of them")
    if pattern is not None:
        return groups_from_pattern(clip_ids, pattern, f"{flag}-pattern"), f"pattern {pattern}"
    if path is not None:
        return load_group_file(path), f"file {path}"
    return None, "clip"
