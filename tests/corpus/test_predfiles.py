"""Prediction-file loading: formats, naming layouts, coverage and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.corpus.predfiles import load_predictions, load_references, parse_file_name
from asr_audit.errors import InputFileError


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


ROWS = [
    {"audio_filepath": "a", "text": "Hello there.", "pred_text": "hello there"},
    {"audio_filepath": "b", "text": "Good bye.", "pred_text": "good bye"},
]


def test_formats_agree(tmp_path: Path) -> None:
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    write_jsonl(tmp_path / "m1.jsonl", ROWS)
    (tmp_path / "m2.json").write_text(
        json.dumps([{"id": r["audio_filepath"], "reference": r["text"], "hypothesis": r["pred_text"]} for r in ROWS])
    )
    with open(tmp_path / "m3.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, ["utt_id", "ref", "hyp"])
        w.writeheader()
        for r in ROWS:
            w.writerow({"utt_id": r["audio_filepath"], "ref": r["text"], "hyp": r["pred_text"]})
    pq.write_table(
        pa.Table.from_pylist(
            [{"key": r["audio_filepath"], "target": r["text"], "transcription": r["pred_text"]} for r in ROWS]
        ),
        tmp_path / "m4.parquet",
    )
    write_jsonl(
        tmp_path / "m5.ndjson",
        [{"__key__": r["audio_filepath"], "ground_truth": r["text"], "pred": r["pred_text"]} for r in ROWS],
    )
    (tmp_path / "NOTICE.md").write_text("not data")
    s = load_predictions(tmp_path)
    assert s.models == ["m1", "m2", "m3", "m4", "m5"]
    assert list(s.references) == ["a", "b"]
    for m in s.models:
        assert s.hypothesis(m, "a") == "hello there"


@pytest.mark.parametrize(
    ("path", "model", "dataset", "split"),
    [
        (
            "MODEL_openai-whisper-tiny.en_DATASET_hf-audio-esb-datasets-test-only-sorted_voxpopuli_test.jsonl",
            "openai-whisper-tiny.en",
            "hf-audio-esb-datasets-test-only-sorted_voxpopuli",
            "test",
        ),
        ("whisper-base.en.jsonl", "whisper-base.en", None, None),
    ],
)
def test_file_names(path: str, model: str, dataset: str | None, split: str | None) -> None:
    n = parse_file_name(Path(path))
    assert (n.model, n.dataset, n.split) == (model, dataset, split)


def test_bucket_layouts(tmp_path: Path) -> None:
    # <dir>/<model>/MODEL_...jsonl
    write_jsonl(tmp_path / "a" / "org-m1" / "MODEL_org-m1_DATASET_vox_test.jsonl", ROWS)
    write_jsonl(tmp_path / "a" / "org-m2" / "MODEL_org-m2_DATASET_vox_test.jsonl", ROWS)
    assert load_predictions(tmp_path / "a").models == ["org-m1", "org-m2"]
    # <dir>/<dataset>/<model>.jsonl, two datasets: must choose
    write_jsonl(tmp_path / "b" / "vox" / "m1.jsonl", ROWS)
    write_jsonl(tmp_path / "b" / "libri" / "m1.jsonl", ROWS[:1])
    with pytest.raises(InputFileError, match="several datasets.*--dataset"):
        load_predictions(tmp_path / "b")
    s = load_predictions(tmp_path / "b", dataset="libri")
    assert s.models == ["m1"] and s.clip_ids == ["a"] and s.dataset == "libri"


def test_empty_and_missing_hypotheses_are_distinct(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "m1.jsonl",
        [
            {"id": "a", "text": "x y", "pred_text": ""},
            {"id": "b", "text": "x z", "pred_text": None},
            {"id": "c", "text": "x w"},
        ],
    )
    write_jsonl(
        tmp_path / "m2.jsonl",
        [{"id": "a", "text": "x y", "pred_text": "x y"}, {"id": "d", "text": "q", "pred_text": "q"}],
    )
    s = load_predictions(tmp_path)
    assert s.hypothesis("m1", "a") == "" and s.hypothesis("m1", "b") is None and s.hypothesis("m1", "c") is None
    assert s.hypothesis("m2", "b") is None
    cov = {c.model: c for c in s.coverage()}
    assert (cov["m1"].n_rows, cov["m1"].n_hyp, cov["m1"].n_empty, cov["m1"].n_missing) == (3, 1, 1, 3)
    assert (cov["m2"].n_rows, cov["m2"].n_hyp, cov["m2"].n_empty, cov["m2"].n_missing) == (2, 2, 0, 2)


BAD_CASES = {
    "bad_json": (b'{"id": "a", "text": "x", "pred_text": "x"}\n{"id": "b", "text": \n', r"m\.jsonl:2: bad JSON"),
    "missing_ref_column": (
        b'{"id": "a", "words": "x", "pred_text": "x"}\n',
        r"m\.jsonl:1: no reference column.*text, reference",
    ),
    "missing_hyp_column": (b'{"id": "a", "text": "x"}\n', r"m\.jsonl:1: no hypothesis column.*pred_text"),
    "missing_id_column": (b'{"name": "a", "text": "x", "pred_text": "x"}\n', r"no clip id column.*audio_filepath"),
    "non_utf8": (
        b'{"id": "a", "text": "x", "pred_text": "x"}\n{"id": "b", "text": "caf\xe9", "pred_text": "x"}\n',
        r"m\.jsonl:2: line is not valid UTF-8.*re-encode",
    ),
    "duplicate_id": (
        b'{"id": "a", "text": "x", "pred_text": "x"}\n{"id": "a", "text": "x", "pred_text": "y"}\n',
        r"m\.jsonl:2: duplicate clip id 'a' \(first on line 1\)",
    ),
    "non_object": (b"[1, 2]\n", r"m\.jsonl:1: expected a JSON object"),
    "number_hyp": (b'{"id": "a", "text": "x", "pred_text": 5}\n', r"m\.jsonl:1: hypothesis is a int"),
    "empty_file": (b"\n\n", r"m\.jsonl: file has no rows"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_malformed_files_give_one_line_errors(tmp_path: Path, case: str, run_cli) -> None:
    content, pattern = BAD_CASES[case]
    (tmp_path / "m.jsonl").write_bytes(content)
    with pytest.raises(InputFileError, match=pattern):
        load_predictions(tmp_path)
    code, out, err = run_cli("coverage", "--preds", tmp_path)
    assert code == 2
    assert "Traceback" not in err and "Traceback" not in out
    assert err.strip().startswith("error:") and "fix:" in err
    assert len(err.strip().splitlines()) == 1


def test_directory_errors(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no prediction files found"):
        load_predictions(tmp_path)
    (tmp_path / "m.tsv").write_text("id\ttext\n")
    with pytest.raises(InputFileError, match=r"m\.tsv: unknown prediction-file extension '\.tsv'"):
        load_predictions(tmp_path)
    with pytest.raises(InputFileError, match="no such file or directory"):
        load_predictions(tmp_path / "nope")


def _two_models(folder: Path) -> Path:
    write_jsonl(folder / "m1.jsonl", ROWS)
    write_jsonl(folder / "m2.jsonl", ROWS)
    return folder


def test_dangling_symlink_is_named_not_skipped(tmp_path: Path) -> None:
    folder = _two_models(tmp_path / "p")
    (folder / "m3.jsonl").symlink_to(tmp_path / "gone.jsonl")
    with pytest.raises(InputFileError, match=r"m3\.jsonl: broken symbolic link \(to .*gone\.jsonl\).*fix:"):
        load_predictions(folder)
    (folder / "m3.jsonl").unlink()
    (folder / "m3.jsonl").symlink_to(folder / "m1.jsonl")  # a working link is a prediction file
    assert load_predictions(folder).models == ["m1", "m2", "m3"]


def test_dangling_symlink_in_a_bucket_is_named(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a" / "org-m1" / "MODEL_org-m1_DATASET_vox_test.jsonl", ROWS)
    (tmp_path / "a" / "org-m2").mkdir()
    (tmp_path / "a" / "org-m2" / "MODEL_org-m2_DATASET_vox_test.jsonl").symlink_to(tmp_path / "gone")
    with pytest.raises(InputFileError, match=r"MODEL_org-m2_DATASET_vox_test\.jsonl: broken symbolic link"):
        load_predictions(tmp_path / "a")


def test_ignored_names_stay_ignored_even_when_dangling(tmp_path: Path) -> None:
    folder = _two_models(tmp_path / "p")
    (folder / "README.md").symlink_to(tmp_path / "gone.md")
    (folder / ".hidden.jsonl").symlink_to(tmp_path / "gone.jsonl")
    assert load_predictions(folder).models == ["m1", "m2"]


def test_directory_named_like_a_prediction_file_is_named(tmp_path: Path) -> None:
    folder = _two_models(tmp_path / "p")
    (folder / "m3.jsonl").mkdir()
    with pytest.raises(InputFileError, match=r"m3\.jsonl: a directory named like a prediction file.*fix: rename"):
        load_predictions(folder)


def test_fifo_is_named_without_being_opened(tmp_path: Path) -> None:
    import os
    import threading

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    folder = _two_models(tmp_path / "p")
    fifo = folder / "m3.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            load_predictions(folder)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # it opened the FIFO and blocks: release it, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("loading a prediction folder opened a FIFO and blocked")
    assert isinstance(outcome[0], InputFileError)
    assert "m3.jsonl: not a regular file (a FIFO)" in str(outcome[0]) and "fix:" in str(outcome[0])
    with pytest.raises(InputFileError, match="not a regular file or folder"):
        load_predictions(fifo)


def test_reference_conflict_names_both_files(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "m1.jsonl", ROWS)
    write_jsonl(tmp_path / "m2.jsonl", [{**ROWS[0], "text": "Hello, there!"}])
    with pytest.raises(InputFileError) as info:
        load_predictions(tmp_path)
    msg = str(info.value)
    assert "m2.jsonl:1" in msg and "m1.jsonl:1" in msg and "'a'" in msg


def test_bad_csv_and_duration(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text('id,text,pred_text,duration\na,"x y",x y,abc\n')
    with pytest.raises(InputFileError, match=r"m\.csv:2: field 'duration' is 'abc'"):
        load_predictions(tmp_path)


def test_load_references(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "fixed.jsonl", [{"id": "a", "text": "hello"}, {"id": "b", "text": "bye"}])
    assert load_references(p) == {"a": "hello", "b": "bye"}
    write_jsonl(tmp_path / "dup.jsonl", [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])
    with pytest.raises(InputFileError, match="duplicate clip id"):
        load_references(tmp_path / "dup.jsonl")
