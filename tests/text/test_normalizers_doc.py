"""``docs/normalizers.md``: every cell of its trap tables is what that normalizer really returns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from asr_audit.text.normalize import available_normalizers, get_normalizer

DOC = Path(__file__).resolve().parents[2] / "docs" / "normalizers.md"
_BLOCK = re.compile(r"<!-- normalizer-table:start -->\n(.*?)\n<!-- normalizer-table:end -->", re.S)
_CELL = re.compile(r"^\s*`(.*)`\s*$")


def _tables() -> list[tuple[list[str], list[tuple[str, list[str]]]]]:
    """Each table: its normalizer columns, and per row the input and the cells (backticks off)."""
    out = []
    for block in _BLOCK.findall(DOC.read_text(encoding="utf-8")):
        lines = block.splitlines()
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        rows = []
        for line in lines[2:]:
            cells = line[1:-1].split(" | ")  # cells are code spans: no " | " inside them
            raw = [_CELL.match(c) for c in cells]
            assert all(raw), f"docs/normalizers.md: a cell of {line!r} is not one `code` span"
            values = [m.group(1) for m in raw if m]
            rows.append((values[0], values[1:]))
        out.append((header[1:], rows))
    return out


def test_the_doc_has_both_tables_over_registered_normalizers() -> None:
    tables = _tables()
    assert len(tables) == 2
    for names, rows in tables:
        assert set(names) <= set(available_normalizers()) and rows


@pytest.mark.parametrize("index", [0, 1])
def test_every_cell_is_the_normalizers_output(index: int) -> None:
    names, rows = _tables()[index]
    wrong = [
        f"{name}({text!r}) = {get_normalizer(name)(text)!r}, the doc says {cell!r}"
        for text, cells in rows
        for name, cell in zip(names, cells, strict=True)
        if get_normalizer(name)(text) != cell
    ]
    assert not wrong, "docs/normalizers.md is out of date:\n" + "\n".join(wrong)


def test_the_traps_named_by_issue_16_are_in_the_table() -> None:
    inputs = {text for text, _ in _tables()[0][1]}
    assert {"thirty six", "CO 2", "21st", "10:00 AM", "Mario's", "archaeology", "'cause"} <= inputs
    assert any(re.search("[\u0900-\u0dff]", t) for t in inputs)  # a Brahmic script with vowel signs
