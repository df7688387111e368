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
