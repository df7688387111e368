"""``asr-audit normalize --compare``: outputs side by side, differences marked against the first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.errors import ConfigError
from asr_audit.text.compare import compare_normalizers, parse_names


def test_marks_tokens_unlike_the_baseline() -> None:
    (row,) = compare_normalizers(["whisper", "whisper-normalizer-0.1.15", "oal"], ["in the cause of peace"])
    by_name = {o.normalizer: o for o in row.outputs}
    assert by_name["whisper"].marked() == "in the cause of peace" and by_name["whisper"].same
    assert by_name["whisper-normalizer-0.1.15"].marked() == "in the [because] of peace"
    assert by_name["oal"].same and not row.agree


def test_agreeing_normalizers_mark_nothing() -> None:
    (row,) = compare_normalizers(["whisper", "oal"], ["hello world"])
    assert row.agree and [o.marked() for o in row.outputs] == ["hello world", "hello world"]


def test_names_are_checked() -> None:
    with pytest.raises(ConfigError, match="unknown normalizer 'nope'"):
        parse_names("whisper,nope")
    with pytest.raises(ConfigError, match="empty item"):
        parse_names("whisper,,oal")


def test_cli_text_and_file(tmp_path: Path, run_cli) -> None:
    code, out, err = run_cli("normalize", "Mario's archaeology")
    assert code == 0, err
    assert "archeology</span>" in out and "differ" in out
    texts = tmp_path / "t.txt"
    texts.write_text("treinta y seis\n\nLa Sra. Pérez\n", encoding="utf-8")
    out_json = tmp_path / "side.json"
    code, _, err = run_cli("normalize", "--compare", "basic,basic-es", "--file", texts, "--json", out_json)
    assert code == 0, err
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["normalizers"] == ["basic", "basic-es"]
    assert [r["outputs"][1]["marked"] for r in data["texts"]] == ["[36]", "la [señora] pérez"]


def test_cli_errors(tmp_path: Path, run_cli) -> None:
    code, _, err = run_cli("normalize")
    assert code == 2 and "needs a TEXT argument or --file" in err
    code, _, err = run_cli("normalize", "--file", tmp_path / "missing.txt")
    assert code == 2 and "missing.txt" in err and "fix:" in err
    code, _, err = run_cli("normalize", "--compare", "whisper,bogus", "x")
    assert code == 2 and "unknown normalizer 'bogus'" in err


def test_cli_streams_a_file_as_json_lines_or_tsv(tmp_path: Path, run_cli) -> None:
    """A file of more lines than a table shows streams one object per line, blank lines kept in
    their place (output i is line i's); --format tsv writes a header and tab-separated lines;
    --json alone prints no table (issue 29: 35,557 lines printed a 30 MB table)."""
    lines = [f"Mr. Smith paid ${i}." for i in range(30)]
    lines[3] = ""
    texts = tmp_path / "t.txt"
    texts.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli("normalize", "--compare", "whisper,basic", "--file", texts)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 30 and [r["text"] for r in rows] == lines
    assert rows[0] == {"text": "Mr. Smith paid $0.", "whisper": "mister smith paid $0", "basic": "mr smith paid 0"}
    assert rows[3] == {"text": "", "whisper": "", "basic": ""}
    code, out, err = run_cli("normalize", "--compare", "whisper", "--file", texts, "--format", "tsv")
    assert code == 0, err
    assert out.splitlines()[:2] == ["text\twhisper", "Mr. Smith paid $0.\tmister smith paid $0"]
    dest = tmp_path / "out.jsonl"
    code, out, err = run_cli("normalize", "--compare", "whisper", "--file", texts, "--out", dest)
    assert code == 0 and "wrote" in out and len(dest.read_text(encoding="utf-8").splitlines()) == 30
    code, out, err = run_cli("normalize", "--compare", "whisper", "--file", texts, "--json", tmp_path / "a.json")
    assert code == 0 and out.strip().startswith("wrote") and len(out.splitlines()) == 1
    code, out, err = run_cli("normalize", "--compare", "whisper", "--file", texts, "--format", "table")
    assert code == 0 and "┃" in out  # a table on request
    code, _, err = run_cli("normalize", "x", "--format", "xml")
    assert code == 2 and "--format 'xml' is not a format" in err
