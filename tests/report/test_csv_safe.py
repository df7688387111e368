"""CSV formula injection: names from file names are written as spreadsheet-safe text; numbers stay numbers."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from asr_audit.data import VOXPOPULI_EXAMPLES
from asr_audit.report.csv_safe import safe_cell
from asr_audit.report.tables import to_csv

EVIL = ['=HYPERLINK("http://x","y")', "+cmd|' -c calc'!A1", "-2+3+cmd", "@SUM(A1:A9)"]


@pytest.mark.parametrize("text", EVIL + ["\tTAB", "\rCR"])
def test_formula_text_is_quoted(text: str) -> None:
    assert safe_cell(text) == "'" + text


@pytest.mark.parametrize(
    "value", ["-1.40", "+2", "-0", "1e-3", "-.5", "-3.2e+04", "12%", -1.4, 0, None, True, "", "a=b"]
)
def test_numbers_and_plain_text_are_unchanged(value: object) -> None:
    assert safe_cell(value) == value


def test_to_csv_quotes_text_and_keeps_numbers() -> None:
    rows = [{"model": name, "wer_inflation": -1.4, "label": "-1.40"} for name in EVIL]
    out = list(csv.reader(io.StringIO(to_csv(rows, ("model", "wer_inflation", "label")))))
    assert [r[0] for r in out[1:]] == ["'" + e for e in EVIL]
    assert all(r[1] == "-1.4" and r[2] == "-1.40" for r in out[1:])


def _evil_preds(tmp_path: Path) -> Path:
    folder = tmp_path / "preds"
    shutil.copytree(VOXPOPULI_EXAMPLES, folder)
    src = next(p for p in sorted(folder.glob("*.jsonl")) if "tiny" in p.name)
    src.rename(folder / "=1+2@evil.jsonl")
    return folder


def _cells(path: Path) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(path.read_text())) for cell in row]


def test_refdis_and_switch_rate_csv_through_the_cli(tmp_path: Path, run_cli) -> None:
    folder = _evil_preds(tmp_path)
    panel = "=1+2@evil,whisper-base.en,whisper-small.en"
    code, _, err = run_cli(
        "refdis", "--preds", folder, "--panel", panel, "--no-loo", "--resamples", "20", "--csv", tmp_path / "r.csv"
    )
    assert code == 0, err
    cells = _cells(tmp_path / "r.csv")
    assert "'=1+2@evil" in cells and "=1+2@evil" not in cells
    assert any(c.startswith("-") and c[1:2].isdigit() for c in cells)  # negative numbers stay numbers
    code, _, err = run_cli("switch-rate", "--preds", folder, "--min-per-arm", "1", "--csv", tmp_path / "s.csv")
    assert code == 0, err
    cells = _cells(tmp_path / "s.csv")
    assert "'=1+2@evil" in cells and "=1+2@evil" not in cells
