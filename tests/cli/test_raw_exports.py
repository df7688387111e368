"""Issue 29's acceptance: four raw CSV exports of one test set (tests/support/raw_exports.py:
index columns with blank headers, export column names, mixed id styles, mojibake, a
double-encoded file, a case-only reference conflict) run through ``asr-audit refdis`` with three
flags and no script; the run states every repair; the strict default still refuses."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from raw_exports import MODELS, VOX, case_conflict_clip, write_raw_exports

pytest.importorskip("ftfy")

PANEL = ["--panel", "a,b,c"]
FLAGS = ["--id-from", "stem", "--fix-encoding", "--references", "normalized"]


@pytest.fixture()
def raw(tmp_path: Path) -> Path:
    return write_raw_exports(tmp_path / "exports")


def _refdis(run_cli, preds: Path, *more: str | Path) -> tuple[int, str, str]:
    return run_cli("refdis", "--preds", preds, *PANEL, "--resamples", "50", "--no-text-cache", *more)


def test_before_each_problem_stops_the_run_with_what_fixes_it(raw: Path, run_cli) -> None:
    code, _, err = _refdis(run_cli, raw, "--models", "d")
    assert code == 2 and "b.csv: its clip ids barely match the other files' (0 of 150 shared" in err
    assert re.search(
        r"here '\./en/clips/[^']+\.', '\./en/clips/[^']+\.'; in a\.csv: '/mnt/c/[^']+\.mp3', '/mnt/c/", err
    )
    code, _, err = _refdis(run_cli, raw, "--models", "d", "--id-from", "stem")
    assert code == 2 and "b.csv" in err and "looks like mojibake" in err and "--fix-encoding" in err
    # the strict default still refuses references that differ only in case and punctuation
    code, _, err = _refdis(run_cli, raw, "--models", "d", "--id-from", "stem", "--fix-encoding")
    assert code == 2 and f"c.csv:9: clip '{case_conflict_clip()}' has reference 'it is outrageous" in err
    assert "--references normalized" in err


def test_three_flags_run_it_and_every_repair_is_stated(raw: Path, run_cli, tmp_path: Path) -> None:
    code, out, err = _refdis(run_cli, raw, "--models", "d", *FLAGS, "--json", tmp_path / "raw.json")
    assert code == 0, err
    repairs = [line for line in err.splitlines() if line.startswith("repaired: ")]
    assert len(repairs) == 3, err
    assert repairs[0].startswith("repaired: clip ids taken by --id-from stem: 450 (e.g. '…")
    assert repairs[1].startswith("repaired: references repaired by --fix-encoding: 6 (e.g. '…issioner FÃ¼le")
    assert repairs[2].startswith("repaired: references that differ but normalize equal (the first file's text kept): 1")
    assert err.count("note: leave-one-out needs 4 panel models") == 1
    d = json.loads((tmp_path / "raw.json").read_text())
    (score,) = d["models"]
    assert score["model"] == "d" and score["n_eligible"] > 0 and score["wer_coverage"] == 1.0


def test_the_repaired_exports_score_as_the_clean_files(raw: Path, run_cli, tmp_path: Path) -> None:
    """The repairs are faithful: the public code's rule on the repaired exports gives the result
    of the original JSONL files, edit for edit."""
    clean = tmp_path / "clean"
    clean.mkdir()
    for name, model in MODELS.items():
        shutil.copy(VOX / f"{model}.jsonl", clean / f"{name}.jsonl")
    anchor = ["--models", "d", "--preset", "anchor", "--no-loo"]
    code, _, err = _refdis(run_cli, clean, *anchor, "--json", tmp_path / "clean.json")
    assert code == 0, err
    code, _, err = _refdis(run_cli, raw, *anchor, *FLAGS, "--json", tmp_path / "raw.json")
    assert code == 0, err
    want, got = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("clean", "raw"))
    for d in (want, got):
        d.pop("source")
    assert got == want and want["n_edits"] > 0


def test_panel_members_get_a_dash_and_the_run_says_why_once(raw: Path, run_cli, tmp_path: Path) -> None:
    code, out, err = _refdis(run_cli, raw, *FLAGS, "--json", tmp_path / "all.json")
    assert code == 0, err
    models = {m["model"]: m for m in json.loads((tmp_path / "all.json").read_text())["models"]}
    for member in ("a", "b", "c"):
        assert models[member]["accept_ref"] is None
        assert models[member]["reason"].startswith("not scored: leave-one-out would mine its edits with the other 2")
    assert models["d"]["accept_ref"] is not None
    assert err.count("note:") == 1 and "the models outside it are scored by the whole panel" in err


def test_coverage_prints_the_columns_it_read(raw: Path, run_cli) -> None:
    code, out, err = run_cli("coverage", "--preds", raw, *FLAGS)
    assert code == 0, err
    assert "columns of a.csv: id=path, ref=sentence, hyp=prediction_text" in out
    assert "columns of b.csv: id=files, ref=actual, hyp=transcription_en-US" in out
    assert "columns of c.csv: id=paths, ref=normalized_text, hyp=prediction" in out
