"""Long-form scoring on the VoxPopuli examples, chunks grouped by speech: recordings, chunk order,
edits located in their chunk, and typed errors for a bad grouping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL
from asr_audit.errors import ConfigError, InputFileError

SPEECH = r"^(?P<group>.+)_(?P<index>\d+)$"  # <session>_<speech start>_<segment>: segments of one speech


@pytest.fixture(scope="module")
def by_speech(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from asr_audit.cli import main

    out = tmp_path_factory.mktemp("lf") / "lf.json"
    args = ["longform", "--preds", str(VOXPOPULI_EXAMPLES), "--panel", ",".join(VOXPOPULI_PANEL)]
    assert main([*args, "--group-pattern", SPEECH, "--resamples", "200", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_recordings_hold_every_chunk_once_in_segment_order(by_speech: dict) -> None:
    d = by_speech
    assert d["n_chunks"] == 150 and d["n_recordings"] == 129 and d["probe"] == "longform"
    chunks = [c["clip_id"] for cs in d["recordings"].values() for c in cs]
    assert len(set(chunks)) == 150
    three = d["recordings"]["20131022-0900-PLENARY-14-en_20131022-15:50:19"]
    segments = [int(c["clip_id"].rsplit("_", 1)[1]) for c in three]
    assert len(three) == 3 and segments == sorted(segments)
    assert [c["offset"] for c in three] == [0, three[0]["n_words"], three[0]["n_words"] + three[1]["n_words"]]
    assert all(m["wer_n_words"] == 3243 and m["wer_n_clips"] <= 129 for m in d["models"])


def test_each_edit_keeps_its_chunk(by_speech: dict) -> None:
    from asr_audit.text.normalize import get_normalizer, normalize_many
    from asr_audit.text.text2num import with_text2num

    refs = {}
    for line in (VOXPOPULI_EXAMPLES / "whisper-tiny.en.jsonl").read_text().splitlines():
        r = json.loads(line)
        refs[r["audio_filepath"]] = r["text"].strip()
    norm = with_text2num(get_normalizer("whisper"))  # the paper preset's normalization
    assert by_speech["edits"]
    for e in by_speech["edits"]:
        chunks = {c["clip_id"]: c for c in by_speech["recordings"][e["clip_id"]]}
        assert e["chunk"] in chunks and e["time_approx"] is None  # VoxPopuli rows carry no durations
        c = chunks[e["chunk"]]
        assert e["chunk_index"] == c["index"] and e["chunk_start"] == (0.0 if c["index"] == 0 else None)
        if e["kind"] != "insertion":
            tokens = normalize_many(norm, [refs[e["chunk"]]])[0].split()
            at = e["ref_indices"][0] - c["offset"]
            assert tokens[at : at + len(e["ref_tokens"])] == e["ref_tokens"], e


def test_times_come_from_start_and_durations() -> None:
    from asr_audit.probes.predfiles.longform import Chunk, LongformResult
    from asr_audit.probes.predfiles.refdis import Edit

    chunks = (
        Chunk(clip_id="r_0", index=0, start=0.0, duration=10.0, offset=0, n_words=20),
        Chunk(clip_id="r_1", index=1, start=10.0, duration=8.0, offset=20, n_words=16),
    )
    result = LongformResult(grouping="test", recordings={"r": chunks}, refdis=None)  # type: ignore[arg-type]
    common: dict[str, Any] = {"clip_id": "r", "n_panel_agree": 4, "n_panel": 4, "consensus_cer": 1.0, "miners": (), "verdicts": {},
              "renderings": {}}  # fmt: skip
    mid = Edit(kind="deletion", position="middle", ref_tokens=("x",), ref_indices=(28,), alt_text="", **common)
    end = Edit(kind="insertion", position="end", ref_tokens=(), ref_indices=(36,), alt_text="thank you", **common)
    assert result.locate(mid) == {"chunk": "r_1", "chunk_index": 1, "chunk_start": 10.0, "time_approx": 14.0}
    assert result.locate(end) == {"chunk": "r_1", "chunk_index": 1, "chunk_start": 10.0, "time_approx": 18.0}


def test_a_mapping_file_orders_chunks_by_its_index(tmp_path: Path) -> None:
    from asr_audit.corpus.groups import load_group_file
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.longform import order_chunks

    pset = load_predictions(VOXPOPULI_EXAMPLES)
    ids = pset.clip_ids
    rows = ["clip_id,recording,index,start"] + [f"{c},rec-{k // 50},{-k},{k * 5}" for k, c in enumerate(ids)]
    path = tmp_path / "map.csv"
    path.write_text("\n".join(rows) + "\n")
    order = order_chunks(pset, load_group_file(path))
    assert list(order) == ["rec-0", "rec-1", "rec-2"] and order["rec-0"] == list(reversed(ids[:50]))
    path.write_text("\n".join([*rows, f"{ids[0]},rec-9,1,0"]) + "\n")
    with pytest.raises(InputFileError, match=r"map\.csv:152: duplicate clip id"):
        load_group_file(path)
    path.write_text("\n".join(["clip_id,recording,index", f"{ids[0]},r,1", f"{ids[1]},r,1"]) + "\n")
    with pytest.raises(ConfigError, match="has no recording in the grouping"):
        order_chunks(pset, load_group_file(path))
    same = tmp_path / "same.csv"
    same.write_text("\n".join(["clip_id,recording,index", *(f"{c},r,{min(k, 1)}" for k, c in enumerate(ids))]) + "\n")
    with pytest.raises(ConfigError, match="have the same index 1"):
        order_chunks(pset, load_group_file(same))


def test_bad_groupings_are_one_line_errors(tmp_path: Path, run_cli) -> None:
    base = ["longform", "--preds", VOXPOPULI_EXAMPLES, "--panel", ",".join(VOXPOPULI_PANEL)]
    bad = tmp_path / "map.csv"
    bad.write_text("clip_id,speaker\nx,y\n")
    for extra, message in (
        ([], "longform needs --group-pattern REGEX or --group-file FILE"),
        (["--group-pattern", "_(chunk)_"], "does not match clip id"),
        (["--group-pattern", r"^(?P<group>\d+)-\d+-(?P<index>[A-Z]+)"], "is 'PLENARY', not a number"),
        (["--group-file", bad], "map.csv:2: no group column"),
        (["--group-file", bad, "--group-pattern", "(.+)"], "--group-pattern and --group-file both given"),
    ):
        code, _, err = run_cli(*base, *extra)
        assert code == 2 and message in err and "fix:" in err and len(err.strip().splitlines()) == 1, (extra, err)
