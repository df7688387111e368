"""Join stores: the results of several shard runs into one store (``asr-audit merge``).

Results are write-once and keyed by (backend, audio, kind, item), so merging is a union with
``INSERT OR IGNORE``: merging twice, or in any order, gives the same rows.

Sources are opened read-only (SQLite URI ``mode=ro``) and must already be asr-audit stores of
this schema version: a merge never converts, creates tables in or otherwise writes to them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
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
        db = sqlite3.connect(_uri(target_path), uri=True, timeout=60.0, isolation_level=None)
        try:
            db.execute("ATTACH DATABASE ? AS src", (_uri(src_path, read_only=True),))
            db.execute("BEGIN IMMEDIATE")
            added = {}
            for table in TABLES:
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
            raise InputFileError(src_path, f"could not merge ({exc})", "check that both files are asr-audit stores") from None
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
            row = (db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                   if {"key", "value"} <= columns else None)
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise InputFileError(path, f"not a readable SQLite store ({exc})",
                             "pass the SQLite files written by the shard runs") from None
    if row is None:
        raise InputFileError(path, "is not an asr-audit store (no 'meta' schema row); it was left untouched",
                             "pass the SQLite files written by the shard runs")
    if row[0] != SCHEMA_VERSION or not set(TABLES) <= tables:
        raise InputFileError(path, f"store schema version {row[0]} is not {SCHEMA_VERSION}",
                             "merge stores written by this version of asr-audit")
