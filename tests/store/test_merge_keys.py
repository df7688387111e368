"""``merge`` refuses stores whose keys disagree (defect 11); stores that agree still merge."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from asr_audit.errors import InputFileError
from asr_audit.models.base import BackendIdentity, DecodeOptions
from asr_audit.store.merge import merge_stores
from asr_audit.store.sqlite import IDENTITY_FORMAT, Store


def _ident(code_version: str = "ct2-whisper/1", compute_type: str = "float32", **extra: str) -> BackendIdentity:
    code = {"code_version": code_version, "compute_type": compute_type, **extra}
    return BackendIdentity("whisper-tiny.en", "abcd", DecodeOptions(), tuple(sorted(code.items())))


def _store(path: Path, ident: BackendIdentity, text: str = "hello") -> Path:
    with Store(path) as st:
        st.register_backend(ident)
        st.put_transcripts(ident.key, [("audio1", text, 0.1)])
    return path


def test_new_stores_record_the_identity_format(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as st:
        assert st.meta() == {"schema": "1", "identity_format": IDENTITY_FORMAT}


def test_same_code_merges(tmp_path: Path) -> None:
    a = _store(tmp_path / "a.sqlite", _ident())
    b = _store(tmp_path / "b.sqlite", _ident(), "hello")
    (report,) = merge_stores(a, [b])
    assert report.added["results"] == 0


def test_different_compute_types_merge_under_different_keys(tmp_path: Path) -> None:
    cpu, gpu = _ident(compute_type="float32"), _ident(compute_type="float16")
    a = _store(tmp_path / "a.sqlite", cpu, "hello")
    b = _store(tmp_path / "b.sqlite", gpu, "hallo")
    merge_stores(a, [b])
    with Store(a) as st:
        assert st.get_transcripts(cpu.key, ["audio1"])["audio1"].value == "hello"
        assert st.get_transcripts(gpu.key, ["audio1"])["audio1"].value == "hallo"


@pytest.mark.parametrize("other", [_ident(code_version="ct2-whisper/2"), _ident(converter="whisper_convert/2")])
def test_different_code_or_converter_versions_are_refused(tmp_path: Path, other: BackendIdentity) -> None:
    a = _store(tmp_path / "a.sqlite", _ident())
    b = _store(tmp_path / "b.sqlite", other)
    with pytest.raises(
        InputFileError,
        match=r"b\.sqlite: cannot merge into .*a\.sqlite: backend whisper-tiny\.en "
        r"\(weights abcd\) has .* here but .* in the target; fix: ",
    ) as err:
        merge_stores(a, [b])
    assert "\n" not in str(err.value)
    with Store(a) as st:  # nothing was copied
        assert st.count() == 1


def test_a_store_written_before_code_versions_is_refused(tmp_path: Path) -> None:
    a = _store(tmp_path / "a.sqlite", _ident())
    legacy = _store(tmp_path / "old.sqlite", BackendIdentity("whisper-tiny.en", "abcd", DecodeOptions()))
    db = sqlite3.connect(legacy)  # what an older asr-audit wrote: no identity_format, no code entries
    db.execute("DELETE FROM meta WHERE key = 'identity_format'")
    row = db.execute("SELECT key, identity FROM backends").fetchone()
    ident = json.loads(row[1])
    del ident["code"]
    db.execute("UPDATE backends SET identity = ? WHERE key = ?", (json.dumps(ident), row[0]))
    db.commit()
    db.close()
    with pytest.raises(InputFileError, match="identity format 1, the target's 2"):
        merge_stores(a, [legacy])


def test_meta_mismatch_is_refused(tmp_path: Path) -> None:
    a = _store(tmp_path / "a.sqlite", _ident())
    b = _store(tmp_path / "b.sqlite", _ident())
    db = sqlite3.connect(b)
    db.execute("INSERT INTO meta VALUES ('corpus_set', 'x')")
    db.commit()
    db.close()
    db = sqlite3.connect(a)
    db.execute("INSERT INTO meta VALUES ('corpus_set', 'y')")
    db.commit()
    db.close()
    with pytest.raises(InputFileError, match="store meta corpus_set='x' differs from the target's 'y'"):
        merge_stores(a, [b])


def test_cli_merge_refusal_is_one_line(tmp_path: Path, run_cli) -> None:
    a = _store(tmp_path / "a.sqlite", _ident())
    b = _store(tmp_path / "b.sqlite", _ident(code_version="ct2-whisper/2"))
    code, _, err = run_cli("merge", "--into", a, b)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "code_version=ct2-whisper/2" in err


def test_an_empty_store_of_another_schema_is_still_refused(tmp_path: Path) -> None:
    """Recording the identity format does not skip the schema check (a store with no backends yet)."""
    path = tmp_path / "s.sqlite"
    with Store(path):
        pass
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(InputFileError, match="store schema version 0 is not 1"):
        Store(path)


def test_a_source_of_this_schema_lacking_a_table_says_so(tmp_path: Path) -> None:
    """Not "store schema version 1 is not 1" (issue 31, defect 12): the missing table is named."""
    source = _store(tmp_path / "a.sqlite", _ident())
    db = sqlite3.connect(source)
    db.execute("DROP TABLE errors")
    db.commit()
    db.close()
    with pytest.raises(InputFileError, match=r"schema version 1 lacks the table\(s\) errors") as info:
        merge_stores(tmp_path / "all.sqlite", [source])
    assert "is not 1" not in str(info.value)
