"""A store never converts a foreign database, merge never writes to its sources, a full disk says so."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from asr_audit.errors import AuditError, InputFileError
from asr_audit.store import Store
from asr_audit.store.merge import merge_stores
from asr_audit.store.sqlite import StoreDiskFullError, is_store_file, open_store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))


def _foreign(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO users VALUES (1, 'ada')")
    db.commit()
    db.close()
    return path


def _store(path: Path, rows: int = 3) -> Path:
    with Store(path) as st:
        st.put_transcripts(f"b-{path.stem}", [(f"h{i}", f"text {i}", 0.1) for i in range(rows)])
    return path


@pytest.mark.parametrize("meta", [False, True])
def test_foreign_database_is_refused_untouched(tmp_path: Path, meta: bool) -> None:
    path = _foreign(tmp_path / "app.db")
    if meta:  # a `meta` table of its own, without asr-audit's schema row
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE meta (k TEXT, v TEXT)")
        db.commit()
        db.close()
    before, files = _digest(path), _siblings(path)
    with pytest.raises(InputFileError, match="not an asr-audit store.*fix:") as info:
        open_store(path)
    assert "delete" not in str(info.value)
    assert _digest(path) == before and _siblings(path) == files  # no WAL switch, no tables, no side files
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_empty_file_and_existing_store_open(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with open_store(empty) as st:
        assert st.count() == 0
    assert is_store_file(empty) is True
    path = _store(tmp_path / "s.sqlite")
    with open_store(path) as st:
        assert st.count() == 3


def test_merge_reads_sources_only(tmp_path: Path) -> None:
    a, b = _store(tmp_path / "a.sqlite", 2), _store(tmp_path / "b.sqlite", 4)
    digests = {p: _digest(p) for p in (a, b)}
    merge_stores(tmp_path / "all.sqlite", [a, b])
    assert {p: _digest(p) for p in (a, b)} == digests
    with Store(tmp_path / "all.sqlite") as st:
        assert st.count() == 6


def test_merge_refuses_a_foreign_source_untouched(tmp_path: Path) -> None:
    a = _store(tmp_path / "a.sqlite")
    foreign = _foreign(tmp_path / "app.db")
    before, files = _digest(foreign), _siblings(foreign)
    with pytest.raises(InputFileError, match="app.db.*not an asr-audit store.*fix:"):
        merge_stores(tmp_path / "all.sqlite", [a, foreign])
    assert _digest(foreign) == before and _siblings(foreign) == files
    assert sqlite3.connect(foreign).execute("SELECT name FROM sqlite_master").fetchall() == [("users",)]


def test_merge_refuses_a_non_sqlite_source(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(InputFileError, match="junk.sqlite.*fix:"):
        merge_stores(tmp_path / "all.sqlite", [junk])
    assert junk.read_bytes() == b"not a database at all" * 100


def test_full_disk_while_writing_says_disk_full(tmp_path: Path) -> None:
    path = _store(tmp_path / "s.sqlite", 1)
    with Store(path) as st:
        pages = st._db.execute("PRAGMA page_count").fetchone()[0]
        st._db.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own SQLITE_FULL, as on a full disk
        with pytest.raises(StoreDiskFullError, match="disk full.*fix:") as info:
            st.put_transcripts("b", [(f"x{i}", "y" * 2000, None) for i in range(200)])
        assert "delete" not in str(info.value) and "keep the file" in str(info.value)
        st._db.execute("PRAGMA max_page_count = 1073741823")
        assert st.count() == 1 and st.integrity_ok()  # the failed transaction rolled back, nothing lost


@pytest.mark.parametrize("message", ["disk I/O error", "database or disk is full"])
def test_full_disk_on_open_never_suggests_deleting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, message: str
) -> None:
    path = _store(tmp_path / "s.sqlite")
    real = sqlite3.connect

    def failing(database, *a, **k):
        if str(database) == str(path):
            raise sqlite3.OperationalError(message)
        return real(database, *a, **k)

    monkeypatch.setattr(sqlite3, "connect", failing)
    with pytest.raises(AuditError, match="disk full") as info:
        open_store(path)
    assert "delete" not in str(info.value)


def test_disk_full_reaches_the_cli_as_one_line(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import asr_audit.store.sqlite as sq

    def full(*_a, **_k):
        raise StoreDiskFullError(tmp_path / "s.sqlite", "database or disk is full")

    monkeypatch.setattr(sq, "Store", full)
    code, _, err = run_cli("merge", "--into", tmp_path / "s.sqlite", tmp_path / "a.sqlite")
    assert code == 2 and "Traceback" not in err
    assert [ln for ln in err.splitlines() if ln.startswith("error:")] and "disk full" in err
