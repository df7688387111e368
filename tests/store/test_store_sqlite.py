"""The SQLite result store: keys, immutability, WAL, concurrent writers, export bytes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from asr_audit.errors import InputFileError
from asr_audit.models.base import BackendIdentity, DecodeOptions
from asr_audit.store import PredictionRecord, Store, default_store_path, prediction_file_name, write_predictions
from asr_audit.store.export import render_predictions


def test_put_get_is_keyed_and_immutable(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as st:
        assert st.put_transcripts("b1", [("h1", "hello", 0.5), ("h2", "", None)]) == 2
        assert st.put_transcripts("b1", [("h1", "changed", 9.0)]) == 0  # first write wins
        assert st.put_transcripts("b2", [("h1", "other model", 1.0)]) == 1
        got = st.get_transcripts("b1", ["h1", "h2", "h3"])
        assert {k: (v.value, v.seconds) for k, v in got.items()} == {"h1": ("hello", 0.5), "h2": ("", None)}
        assert st.get_transcripts("b2", ["h1"])["h1"].value == "other model"
        st.put("score", "b1", [("h1", {"logprobs": [-0.5, -1.25]}, 0.1)], item="target-hash")
        assert st.get("score", "b1", ["h1"], item="target-hash")["h1"].value == {"logprobs": [-0.5, -1.25]}
        assert st.get("score", "b1", ["h1"]) == {}
        assert st.count() == 4 and st.count("transcript", "b1") == 2
        assert st._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_many_keys_beyond_parameter_limit(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as st:
        st.put_transcripts("b", [(f"h{i:05d}", str(i), None) for i in range(1500)])
        got = st.get_transcripts("b", [f"h{i:05d}" for i in range(1600)])
        assert len(got) == 1500 and got["h01234"].value == "1234"


def test_backend_identity_and_runs(tmp_path: Path) -> None:
    ident = BackendIdentity("sphinx:en-us", "abc", DecodeOptions())
    with Store(tmp_path / "s.sqlite") as st:
        st.register_backend(ident)
        st.register_backend(ident)
        stored = st.backend_identity(ident.key)
        assert stored is not None and stored["spec"] == "sphinx:en-us"
        run = st.start_run({"models": ["x"]})
        st.record_errors(run, ident.key, "corpus", [("c2", "audio file not found"), ("c1", "empty")])
        st.finish_run(run, {"failed_clips": 2})
        assert st.run_errors(run) == [
            (ident.key, "corpus", "c1", "empty"),
            (ident.key, "corpus", "c2", "audio file not found"),
        ]
        (meta,) = st.runs()
        assert meta["models"] == ["x"] and meta["failed_clips"] == 2 and meta["finished"] >= meta["started"]


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "junk.sqlite"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputFileError, match="not a usable SQLite store.*fix:"):
        Store(p)


def test_default_path_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_AUDIT_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("ASR_AUDIT_STORE")
    assert default_store_path().name == "store.sqlite3" and "asr-audit" in str(default_store_path())


_WRITER = r"""
import sys
from asr_audit.store import Store
path, lo, hi, tag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
st = Store(path)
run = st.start_run({"writer": tag})
for i in range(lo, hi, 5):
    st.put_transcripts("model", [(f"h{j:04d}", f"text {j}", 0.0) for j in range(i, min(i + 5, hi))])
    st.remember_audio([(f"fp{i}", f"h{i:04d}", 1.0)])
    st.get_transcripts("model", [f"h{i:04d}"])
st.record_errors(run, "model", "c", [(f"bad{tag}", "x")])
st.finish_run(run, {})
st.close()
print("ok")
"""


def test_two_processes_write_one_store(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), lo, hi, tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for lo, hi, tag in (("0", "2000", "a"), ("1000", "3000", "b"))
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with Store(path) as st:
        assert st.integrity_ok()
        assert st.count() == 3000
        got = st.get_transcripts("model", [f"h{j:04d}" for j in range(3000)])
        assert all(got[f"h{j:04d}"].value == f"text {j}" for j in range(3000))
        assert len(st.runs()) == 2 and all(r["finished"] for r in st.runs())
    db = sqlite3.connect(path)
    dupes = db.execute(
        "SELECT COUNT(*) FROM (SELECT audio FROM results GROUP BY backend, audio, kind, item HAVING COUNT(*) > 1)"
    )
    assert dupes.fetchone()[0] == 0


def test_export_is_sorted_and_deterministic(tmp_path: Path) -> None:
    recs = [
        PredictionRecord("b", "Ref B", "hyp b", 2.0, 0.123456789),
        PredictionRecord("a", "Réf A", "", 1.25, None),
    ]
    p1 = write_predictions(tmp_path / "one.jsonl", recs)
    p2 = write_predictions(tmp_path / "two.jsonl", list(reversed(recs)))
    assert p1.read_bytes() == p2.read_bytes()
    assert p1.read_text(encoding="utf-8").splitlines() == [
        '{"audio_filepath": "a", "duration": 1.25, "time": null, "text": "Réf A", "pred_text": ""}',
        '{"audio_filepath": "b", "duration": 2.0, "time": 0.123457, "text": "Ref B", "pred_text": "hyp b"}',
    ]
    assert '"time"' not in render_predictions(recs, include_time=False)
    assert [p.name for p in tmp_path.iterdir()] and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_prediction_file_name_round_trips_through_the_reader(tmp_path: Path) -> None:
    from asr_audit.corpus.predfiles import parse_file_name

    name = prediction_file_name("hf:openai/whisper-tiny.en", "my_corpus", "dev_other")
    parsed = parse_file_name(Path(name))
    assert (parsed.model, parsed.dataset, parsed.split) == ("hf-openai-whisper-tiny.en", "my_corpus", "dev-other")
