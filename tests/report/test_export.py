"""Exports on the shipped VoxPopuli examples: the long Parquet table and Hub ``.eval_results`` files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL


@pytest.fixture(scope="module")
def refdis_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from asr_audit.cli import main

    out = tmp_path_factory.mktemp("export") / "refdis.json"
    args = ["refdis", "--preds", str(VOXPOPULI_EXAMPLES), "--panel", ",".join(VOXPOPULI_PANEL)]
    assert main([*args, "--resamples", "200", "--json", str(out)]) == 0
    return out


def test_parquet_has_one_row_per_model_corpus_probe_measure(refdis_json: Path, tmp_path: Path, run_cli) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "t.parquet"
    code, _, err = run_cli("export", "table", "--results", refdis_json, "--corpus", "vox", "--out", out)
    assert code == 0, err
    rows = pq.read_table(out).to_pylist()
    data = json.loads(refdis_json.read_text())
    assert len(rows) == 4 * len(data["models"])
    keys = [(r["model"], r["corpus"], r["probe"], r["measure"]) for r in rows]
    assert len(set(keys)) == len(keys) and keys == sorted(keys)
    tiny = {r["measure"]: r for r in rows if r["model"] == "whisper-tiny.en"}
    m = next(x for x in data["models"] if x["model"] == "whisper-tiny.en")
    assert tiny["wer"]["value"] == m["wer"] and tiny["accept_ref"]["n"] == m["n_eligible"]
    assert tiny["wer_inflation"]["ci_low"] == m["wer_inflation_ci_low"] and tiny["wer_inflation"]["unit"] == "points"
    assert tiny["wer"]["corpus"] == "vox" and tiny["wer"]["normalizer_version"] == "whisper-normalizer 0.1.15"
    assert "openai-whisper 20250625" in tiny["wer"]["normalizer"]
    # the same rows as CSV, byte-identical on a rerun
    csv = tmp_path / "t.csv"
    assert run_cli("export", "table", "--results", refdis_json, "--out", csv)[0] == 0
    first = csv.read_bytes()
    assert run_cli("export", "table", "--results", refdis_json, "--out", csv)[0] == 0
    assert csv.read_bytes() == first and first.startswith(b"model,corpus,probe,measure,value")


def test_hub_eval_results_follow_the_hub_layout(refdis_json: Path, tmp_path: Path, run_cli) -> None:
    yaml = pytest.importorskip("yaml")
    code, _, err = run_cli(
        "export", "hub", "--results", refdis_json, "--dataset-id", "hf-audio/esb-datasets-test-only-sorted",
        "--task-id", "voxpopuli", "--split", "test", "--measures", "wer,accept_ref", "--date", "2026-11-30",
        "--source-url", "https://example.org/audit", "--source-name", "asr-audit", "--out", tmp_path / "cards",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(refdis_json.read_text())
    assert sorted(p.parent.parent.name for p in (tmp_path / "cards").glob("*/.eval_results/voxpopuli.yaml")) == sorted(
        m["model"] for m in data["models"]
    )
    entries = yaml.safe_load((tmp_path / "cards" / "whisper-tiny.en" / ".eval_results" / "voxpopuli.yaml").read_text())
    m = next(x for x in data["models"] if x["model"] == "whisper-tiny.en")
    assert [set(e) for e in entries] == [{"dataset", "value", "date", "source", "notes"}] * 2
    assert entries[0]["dataset"] == {"id": "hf-audio/esb-datasets-test-only-sorted", "task_id": "voxpopuli"}
    assert entries[0]["value"] == round(100 * m["wer"], 4)
    assert entries[1]["dataset"]["task_id"] == "voxpopuli/accept_ref"
    assert entries[1]["value"] == round(100 * m["accept_ref"], 4)
    assert entries[0]["source"] == {"url": "https://example.org/audit", "name": "asr-audit"}
    notes = entries[0]["notes"]
    assert "metric: wer (%)" in notes and "split: test" in notes and "whisper-normalizer 0.1.15" in notes
    assert "openai-whisper 20250625" in notes and "computed by asr-audit" in notes


def test_export_errors_are_one_line(refdis_json: Path, tmp_path: Path, run_cli) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    hub = ["export", "hub", "--dataset-id", "d", "--task-id", "t", "--out", tmp_path / "o"]
    for args, message in (
        (["export", "table", "--results", bad, "--out", tmp_path / "x.parquet"], "bad.json: not JSON"),
        (["export", "table", "--results", refdis_json, "--out", tmp_path / "x.txt"], "must end in .parquet or .csv"),
        ([*hub, "--results", refdis_json, "--measures", "bleu"], "--measures names 'bleu'"),
        ([*hub, "--results", refdis_json, "--source-name", "x"], "--source-name needs --source-url"),
        ([*hub, "--results", refdis_json, "--models", "nope"], "model 'nope' has no defined wer"),
    ):
        code, _, err = run_cli(*args)
        assert code == 2 and message in err and "fix:" in err and len(err.strip().splitlines()) == 1, (args, err)
