"""Data (file names, model names, error texts) prints as text, never as rich markup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _preds(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        rows = [{"id": f"c{i}", "reference": "the cat sat", "hypothesis": "the cat sat"} for i in range(3)]
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.mark.parametrize("name", ["a[red]b", "m[bold]z", "[x]", "q[link=http:]"])
def test_bracketed_model_names_print_literally(run_cli, tmp_path: Path, name: str) -> None:
    folder = _preds(tmp_path / "p", [name, "plain"])
    code, out, err = run_cli("coverage", "--preds", folder)
    assert code == 0, err
    assert "Traceback" not in out + err and "MarkupError" not in out + err
    assert name in out


def test_double_brackets_in_an_error_print_literally(run_cli, tmp_path: Path) -> None:
    spec = tmp_path / "audit.toml"
    spec.write_text('title = "t"\noutput = "out"\n')
    code, _, err = run_cli("run", spec)
    assert code == 2, err
    assert "[[corpus]]" in err and "Traceback" not in err


def test_markup_in_an_error_message_prints_literally(run_cli, tmp_path: Path) -> None:
    missing = tmp_path / "gone[/x]"
    code, _, err = run_cli("coverage", "--preds", missing)
    assert code == 2 and "Traceback" not in err and "MarkupError" not in err
    assert "gone[/x]" in err
