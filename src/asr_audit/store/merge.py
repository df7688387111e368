"""Join stores: the results of several shard runs into one store (``asr-audit merge``).

Results are write-once and keyed by (backend, audio, kind, item), so merging is a union with
``INSERT OR IGNORE``: merging twice, or in any order, gives the same rows.

Sources are opened read-only (SQLite URI ``mode=ro``) and must already be asr-audit stores of
this schema version: a merge never converts, creates tables in or otherwise writes to them.

Merging refuses, with a one-line error and before copying anything, a source whose keys
*disagree* with the target's (:func:`disagreement`):

* a ``meta`` entry both stores have differs, or their ``identity_format`` differs (a store
  without one was written before keys carried code versions: format "1");
* a backend with the same spec and weights hash is recorded in both under different code
  versions (:data:`VERSION_FIELDS`: the decoding-code version, the converter revision of
  rebuilt weights): shards computed by different code must not be joined into one result set.

Backends that differ in a resolved setting only (``compute_type`` float32 on a CPU shard,
float16 on a GPU shard) have different keys, so their results never mix: they merge.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from asr_audit.errors import InputFileError
from asr_audit.store.sqlite import (
    SCHEMA_VERSION,
    StoreDiskFullError,
    is_disk_full,
    open_store,
)

TABLES = ("backends", "results", "audio_files", "runs", "errors")
OPTIONAL_TABLES = ("recipes",)  # merged where the source has them (stores written before them lack them)
VERSION_FIELDS = ("code_version", "converter")
_FIX = (
    "merge only shards written by the same asr-audit version (rerun the odd shard with it), or merge into a new store"
)


def _versions(identity: Mapping[str, object]) -> tuple[object, ...]:
    code = identity.get("code")
    code = code if isinstance(code, dict) else {}
    return tuple(code.get(f) for f in VERSION_FIELDS)


def _read_keys(path: Path) -> tuple[dict[str, str], list[dict[str, object]]]:
    """A source store's ``meta`` table and backend identities, read without writing to it."""
    db = sqlite3.connect(_uri(path, read_only=True), uri=True, timeout=60.0)
    try:
        meta = {str(k): str(v) for k, v in db.execute("SELECT key, value FROM meta")}
        identities = [json.loads(row[0]) for row in db.execute("SELECT identity FROM backends ORDER BY key")]
    finally:
        db.close()
    return meta, identities


def disagreement(
    tmeta: Mapping[str, str],
    target_identities: Sequence[Mapping[str, object]],
    smeta: Mapping[str, str],
    source_identities: Sequence[Mapping[str, object]],
) -> str | None:
    """Why a source's keys (``smeta``, ``source_identities``) disagree with the target's (see the
    module docstring), or None."""
    for key in sorted(set(tmeta) & set(smeta)):
        if tmeta[key] != smeta[key]:
            return f"store meta {key}={smeta[key]!r} differs from the target's {tmeta[key]!r}"
    tformat, sformat = tmeta.get("identity_format", "1"), smeta.get("identity_format", "1")
    if tformat != sformat:
        return (
            f"its cache keys have identity format {sformat}, the target's {tformat} "
            "(format 1 keys, written before asr-audit 0.2, carry no decoding-code version)"
        )
    seen: dict[tuple[object, object], Mapping[str, object]] = {}
    for ident in target_identities:
        seen.setdefault((ident.get("spec"), ident.get("weights_hash")), ident)
    for ident in source_identities:
        other = seen.get((ident.get("spec"), ident.get("weights_hash")))
        if other is not None and _versions(other) != _versions(ident):
            mine = ", ".join(f"{f}={v}" for f, v in zip(VERSION_FIELDS, _versions(ident)))
            theirs = ", ".join(f"{f}={v}" for f, v in zip(VERSION_FIELDS, _versions(other)))
            return (
                f"backend {ident.get('spec')} (weights {ident.get('weights_hash')}) has {mine} here "
                f"but {theirs} in the target"
            )
    return None


@dataclass(frozen=True, slots=True)
class MergeReport:
    source: str
    added: dict[str, int]


def merge_stores(into: str | Path, sources: Sequence[str | Path]) -> list[MergeReport]:
    """Copy every row of ``sources`` that ``into`` lacks; returns rows added per table per source."""
    reports = []
    with open_store(into) as target:  # creates / validates the target schema
        target_path = Path(target.path).resolve()
    for src in sources:
        src_path = Path(src)
        if not src_path.is_file():
            raise InputFileError(src_path, "no such store file", "pass the SQLite files written by the shard runs")
        if src_path.resolve() == target_path:
            raise InputFileError(src_path, "is the merge target itself", "merge other stores into it")
        _check_source(src_path)
        with open_store(target_path) as target:
            reason = disagreement(target.meta(), target.backend_identities(), *_read_keys(src_path))
        if reason is not None:
            raise InputFileError(src_path, f"cannot merge into {target_path}: {reason}", _FIX)
        db = sqlite3.connect(_uri(target_path), uri=True, timeout=60.0, isolation_level=None)
        try:
            db.execute("ATTACH DATABASE ? AS src", (_uri(src_path, read_only=True),))
            db.execute("BEGIN IMMEDIATE")
            added = {}
            in_source = {r[0] for r in db.execute("SELECT name FROM src.sqlite_master WHERE type = 'table'")}
            for table in (*TABLES, *(t for t in OPTIONAL_TABLES if t in in_source)):
                before = db.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]
                db.execute(f"INSERT OR IGNORE INTO main.{table} SELECT * FROM src.{table}")
                added[table] = db.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0] - before
            db.execute("COMMIT")
            db.execute("DETACH DATABASE src")
        except sqlite3.DatabaseError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if is_disk_full(exc):
                raise StoreDiskFullError(target_path, str(exc)) from None
            raise InputFileError(
                src_path, f"could not merge ({exc})", "check that both files are asr-audit stores"
            ) from None
        finally:
            db.close()
        reports.append(MergeReport(str(src_path), added))
    return reports


def _uri(path: Path, read_only: bool = False) -> str:
    """An SQLite URI for ``path`` (``mode=ro`` for a source: SQLite then refuses every write)."""
    return f"file:{quote(str(path.resolve()))}" + ("?mode=ro" if read_only else "")


def _check_source(path: Path) -> None:
    """Refuse a source that is not an asr-audit store of this schema version, reading it only."""
    try:
        db = sqlite3.connect(_uri(path, read_only=True), uri=True, timeout=60.0)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            columns = {r[1] for r in db.execute("PRAGMA table_info(meta)")}
            row = (
                db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if {"key", "value"} <= columns
                else None
            )
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise InputFileError(
            path, f"not a readable SQLite store ({exc})", "pass the SQLite files written by the shard runs"
        ) from None
    if row is None:
        raise InputFileError(
            path,
            "is not an asr-audit store (no 'meta' schema row); it was left untouched",
            "pass the SQLite files written by the shard runs",
        )
    if row[0] != SCHEMA_VERSION or not set(TABLES) <= tables:
        problem = (
            f"store schema version {row[0]} is not {SCHEMA_VERSION}"
            if row[0] != SCHEMA_VERSION
            else f"store of schema version {row[0]} lacks the table(s) {', '.join(sorted(set(TABLES) - tables))}"
        )
        raise InputFileError(path, problem, "merge stores written by this version of asr-audit")
