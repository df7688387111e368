"""The labels file of ``asr-audit annotate``: one durable row per label, undo, latest per annotator."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from asr_audit.errors import ConfigError, InputFileError
from asr_audit.store.labels import CANT_TELL, PANEL, REFERENCE, LabelStore, open_labels

KEY, OTHER = "c1|substitution|0:1|a>b", "c2|deletion|3:4|x>"


def test_rows_survive_a_killed_writer(tmp_path: Path) -> None:
    db = tmp_path / "labels.sqlite"
    # a process adds a label and dies without closing anything
    code = (
        "import os; from asr_audit.store.labels import LabelStore; "
        f"s = LabelStore({str(db)!r}); s.add('ann', {KEY!r}, 'run1', 'panel', 1.5); os._exit(9)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 9
    with open_labels(db) as s:
        rows = s.rows()
    assert [(r.annotator, r.edit_key, r.run_hash, r.choice, r.weight) for r in rows] == [
        ("ann", KEY, "run1", PANEL, 1.5)
    ]
    assert rows[0].time > 0


def test_latest_per_annotator_and_undo(tmp_path: Path) -> None:
    with LabelStore(tmp_path / "l.sqlite") as s:
        s.add("a", KEY, "run1", PANEL, 1.0)
        s.add("a", KEY, "run1", REFERENCE, 1.0)  # relabelled: the latest counts
        s.add("b", KEY, "run1", CANT_TELL, 1.0)
        s.add("a", OTHER, "run1", PANEL, 2.0)
        assert [(r.annotator, r.edit_key, r.choice) for r in s.latest()] == [
            ("a", KEY, REFERENCE),
            ("a", OTHER, PANEL),
            ("b", KEY, CANT_TELL),
        ]
        undone = s.undo("a", "run1")
        assert undone is not None and undone.edit_key == OTHER
        assert [r.edit_key for r in s.latest() if r.annotator == "a"] == [KEY]
        assert s.undo("a", "run2") is None  # another run's labels are not touched
        assert len(s.rows(annotator="b")) == 1


def test_bad_choice_and_bad_files(tmp_path: Path) -> None:
    with LabelStore(tmp_path / "l.sqlite") as s, pytest.raises(ConfigError, match="not one of"):
        s.add("a", KEY, "run1", "maybe", 1.0)
    with pytest.raises(InputFileError, match="no such labels file"):
        open_labels(tmp_path / "missing.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all, not even close" * 20)
    with pytest.raises(InputFileError, match="not a labels file"):
        LabelStore(junk)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE labels (x INTEGER)").connection.close()
    with pytest.raises(InputFileError, match="not a labels file|not asr-audit's"):
        LabelStore(other)
