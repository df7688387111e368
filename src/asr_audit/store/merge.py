"""Join stores: the results of several shard runs into one store (``asr-audit merge``).

Results are write-once and keyed by (backend, audio, kind, item), so merging is a union with
``INSERT OR IGNORE``: merging twice, or in any order, gives the same rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from asr_audit.errors import InputFileError
from asr_audit.store.sqlite import open_store

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
        with open_store(src_path):  # validates the source (schema version, WAL)
            pass
        db = sqlite3.connect(target_path, timeout=60.0, isolation_level=None)
        try:
            db.execute("ATTACH DATABASE ? AS src", (str(src_path),))
            db.execute("BEGIN IMMEDIATE")
            added = {}
            for table in TABLES:
                before = db.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]
                db.execute(f"INSERT OR IGNORE INTO main.{table} SELECT * FROM src.{table}")
                added[table] = db.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0] - before
            db.execute("COMMIT")
            db.execute("DETACH DATABASE src")
        except sqlite3.DatabaseError as exc:
            raise InputFileError(src_path, f"could not merge ({exc})", "check that both files are asr-audit stores") from None
        finally:
            db.close()
        reports.append(MergeReport(str(src_path), added))
    return reports
