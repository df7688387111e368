"""People's labels of mined edits, kept durably in SQLite (``asr-audit annotate --labels FILE``).

One row per label: the annotator, the time, the edit's key (:func:`asr_audit.probes.predfiles.
verified.edit_key`), the hash of the refdis run it came from, the choice and the edit's sampling
weight (its inverse inclusion probability). Each label is committed before the page hears back
(WAL, ``synchronous=FULL``), so a killed server or a closed tab loses nothing. Undo deletes the
annotator's latest row; an annotator's label of an edit is their latest row for its key.

>>> import tempfile, pathlib
>>> with LabelStore(pathlib.Path(tempfile.mkdtemp()) / "labels.sqlite") as s:
...     _ = s.add("ann", "c1|substitution|0:1|a>b", "run1", PANEL, 2.0)
...     _ = s.add("ann", "c1|substitution|0:1|a>b", "run1", REFERENCE, 2.0)
...     [(r.annotator, r.choice, r.weight) for r in s.latest()]
[('ann', 'reference', 2.0)]
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from asr_audit.errors import ConfigError, InputFileError

#: What an annotator may answer (stored as written here).
REFERENCE, PANEL, NEITHER, CANT_TELL = "reference", "panel", "neither", "cant-tell"
CHOICES = (REFERENCE, PANEL, NEITHER, CANT_TELL)
#: How the page names each choice.
CHOICE_TEXT = {
    REFERENCE: "the reference is right",
    PANEL: "the panel is right",
    NEITHER: "neither",
    CANT_TELL: "can't tell",
}

_COLUMNS = ("id", "annotator", "time", "edit_key", "run_hash", "choice", "weight")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    annotator TEXT NOT NULL,
    time REAL NOT NULL,
    edit_key TEXT NOT NULL,
    run_hash TEXT NOT NULL,
    choice TEXT NOT NULL,
    weight REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS labels_by_annotator ON labels (annotator, run_hash, id);
"""


@dataclass(frozen=True, slots=True)
class LabelRow:
    """One stored label."""

    id: int
    annotator: str
    time: float
    edit_key: str
    run_hash: str
    choice: str
    weight: float

    def to_dict(self) -> dict[str, object]:
        return {
            "annotator": self.annotator,
            "time": self.time,
            "edit_key": self.edit_key,
            "run_hash": self.run_hash,
            "choice": self.choice,
            "weight": self.weight,
        }


class LabelStore:
    """The labels file: open (created when missing), add, undo, read back."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise InputFileError(self.path, "no such labels file", "pass the file asr-audit annotate --labels wrote")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(labels)")}
        except sqlite3.DatabaseError as exc:
            raise InputFileError(
                self.path, f"is not a labels file ({exc})", "pass a new path or one asr-audit annotate wrote"
            ) from exc
        if not set(_COLUMNS) <= columns:
            self._db.close()
            raise InputFileError(
                self.path,
                "is an SQLite file whose 'labels' table is not asr-audit's",
                "pass a new path or one asr-audit annotate wrote",
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, annotator: str, key: str, run_hash: str, choice: str, weight: float) -> LabelRow:
        """Store one label (committed when this returns)."""
        if choice not in CHOICES:
            raise ConfigError(f"label choice {choice!r} is not one of {', '.join(CHOICES)}")
        now = time.time()
        with self._db:
            cur = self._db.execute(
                "INSERT INTO labels (annotator, time, edit_key, run_hash, choice, weight) VALUES (?, ?, ?, ?, ?, ?)",
                (annotator, now, key, run_hash, choice, float(weight)),
            )
        return LabelRow(int(cur.lastrowid or 0), annotator, now, key, run_hash, choice, float(weight))

    def undo(self, annotator: str, run_hash: str) -> LabelRow | None:
        """Delete ``annotator``'s latest label on ``run_hash``; the deleted row, or ``None``."""
        rows = self.rows(annotator=annotator, run_hash=run_hash)
        if not rows:
            return None
        with self._db:
            self._db.execute("DELETE FROM labels WHERE id = ?", (rows[-1].id,))
        return rows[-1]

    def rows(self, *, annotator: str | None = None, run_hash: str | None = None) -> list[LabelRow]:
        """Every stored row (optionally one annotator's, one run's), oldest first."""
        sql, args = "SELECT id, annotator, time, edit_key, run_hash, choice, weight FROM labels", []
        where = []
        if annotator is not None:
            where.append("annotator = ?")
            args.append(annotator)
        if run_hash is not None:
            where.append("run_hash = ?")
            args.append(run_hash)
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [LabelRow(*r) for r in self._db.execute(sql + " ORDER BY id", args).fetchall()]

    def latest(self, *, run_hash: str | None = None) -> list[LabelRow]:
        """Each annotator's latest label of each edit, ordered by annotator then time."""
        last: dict[tuple[str, str], LabelRow] = {}
        for r in self.rows(run_hash=run_hash):
            last[(r.annotator, r.edit_key)] = r
        return sorted(last.values(), key=lambda r: (r.annotator, r.id))


def open_labels(path: str | Path) -> LabelStore:
    """An existing labels file, for reading (a missing file is a one-line error)."""
    return LabelStore(path, create=False)
