"""What a store handle saved (``store.decodes``) and the recipe index (derived audio keyed by its recipe)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from asr_audit.store import Store
from asr_audit.store.counts import DecodeCounts
from asr_audit.store.merge import merge_stores
from asr_audit.store.sqlite import open_store

R1, R2 = "recipe:" + "1" * 64, "recipe:" + "2" * 64


def test_counts_tell_computed_reused_and_shared_apart_per_kind(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as st:
        st.put_transcripts("m", [("old", "an earlier run's", 0.1)])
    with Store(tmp_path / "s.sqlite") as st:  # a new run: a new handle, fresh counts
        assert st.decodes.to_dict()["computed"] == 0
        st.get_transcripts("m", ["old", "new"])
        st.get_transcripts("m", ["old"])  # read twice: counted once
        st.put_transcripts("m", [("new", "decoded now", 0.2)])
        st.get_transcripts("m", ["new"])  # the same audio asked again in this run
        st.put("score", "m", [("new", [0.5], None)], item="t1")
        st.put("score", "m", [("new", [0.6], None)], item="t2")  # another item: another key
        d = st.decodes.to_dict()
    assert (d["computed"], d["reused"], d["shared"]) == (3, 1, 1)
    assert d["by_kind"] == {
        "score": {"computed": 2, "reused": 0, "shared": 0},
        "transcript": {"computed": 1, "reused": 1, "shared": 1},
    }


def test_the_summary_line_names_each_count() -> None:
    c = DecodeCounts()
    c.wrote("transcript", [("m", f"a{i}", "") for i in range(1234)])
    c.read("transcript", [("m", f"b{i}", "") for i in range(5678)])
    c.built([R1])
    c.known([R1, R2])  # R1 was built here after all: only R2 was found without a build
    assert c.summary() == (
        "decodes: 1,234 computed, 5,678 reused from the store (saved), 0 shared within the run; "
        "derived clips: 1 built, 1 found by recipe"
    )


def test_recipe_rows_are_write_once_and_found_through_the_audio_index(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as st:
        assert st.remember_recipes([(R1, "h1", 2.0)]) == 1
        assert st.remember_recipes([(R1, "other", 9.0)]) == 0  # a recipe always means the same audio
        st.remember_audio([(R2, "h2", 3.0), ("file:/a.wav:10:20", "h3", 1.0)])  # routed by the key's kind
        st.remember_audio([("file:/a.wav:10:20", "h4", 1.0)])  # a file can change: last write wins
        got = st.lookup_audio([R1, R2, "file:/a.wav:10:20", "recipe:unknown"])
        assert {k: (v.audio_hash, v.duration) for k, v in got.items()} == {
            R1: ("h1", 2.0),
            R2: ("h2", 3.0),
            "file:/a.wav:10:20": ("h4", 1.0),
        }
        # R2 came through remember_audio (a clip built in this run, as transcription remembers it);
        # R1 only through remember_recipes (another process's row): found without a build
        counts = st.decodes.to_dict()
        assert (counts["derived_known"], counts["derived_built"]) == (1, 1)
        with pytest.raises(ValueError, match="not a recipe key"):
            st.remember_recipes([("file:/a.wav:10:20", "h", 1.0)])
    rows = sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT recipe, audio FROM recipes ORDER BY recipe")
    assert rows.fetchall() == [(R1, "h1"), (R2, "h2")]


def test_recipe_keys_kept_in_the_file_index_by_older_versions_are_still_found(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path):
        pass
    db = sqlite3.connect(path)
    db.execute("INSERT INTO audio_files VALUES (?, 'h-old', 1.5)", (R1,))
    db.commit()
    db.close()
    with Store(path) as st:
        assert st.lookup_recipes([R1])[R1].audio_hash == "h-old"


def test_recipe_rows_survive_a_killed_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    code = (
        "import os; from asr_audit.store import Store; "
        f"s = Store({str(path)!r}); s.remember_recipes([({R1!r}, 'h1', 2.0)]); "
        "s.put_transcripts('m', [('h1', 'text', 0.1)]); os._exit(9)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 9
    with open_store(path) as st:
        assert st.integrity_ok()
        assert st.lookup_recipes([R1])[R1].audio_hash == "h1"
        assert st.get_transcripts("m", ["h1"])["h1"].value == "text"


def test_merge_joins_recipe_rows_and_takes_sources_without_them(tmp_path: Path) -> None:
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Store(a) as st:
        st.remember_recipes([(R1, "h1", 2.0)])
    with Store(b) as st:
        st.put_transcripts("m", [("h1", "text", 0.1)])
    db = sqlite3.connect(b)  # a shard written before the recipe index existed
    db.execute("DROP TABLE recipes")
    db.commit()
    db.close()
    reports = merge_stores(tmp_path / "all.sqlite", [a, b])
    assert reports[0].added["recipes"] == 1 and "recipes" not in reports[1].added
    with Store(tmp_path / "all.sqlite") as st:
        assert st.lookup_recipes([R1])[R1].audio_hash == "h1" and st.count() == 1
