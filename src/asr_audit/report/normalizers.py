"""The ``asr-audit normalize --compare`` table: one row per input text, one column per normalizer.

It reads the dictionaries of :meth:`asr_audit.text.compare.Comparison.to_dict`; tokens that
differ from the first (baseline) normalizer's output are shown in ``[brackets]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table


def normalize_compare_table(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> Table:
    """Inputs down, normalizers across; ``=`` in the last column when every normalizer agrees."""
    table = Table(
        title=f"normalizers side by side ([..]: tokens unlike {names[0]}'s)" if len(names) > 1 else "normalized",
        show_lines=True,
    )
    table.add_column("input", overflow="fold")
    for name in names:
        table.add_column(name, overflow="fold")
    if len(names) > 1:
        table.add_column("agree")
    for row in rows:
        cells = [str(row["text"])] + [str(o["marked"]) for o in row["outputs"]]
        if len(names) > 1:
            cells.append("=" if row["agree"] else "differ")
        table.add_row(*cells)
    return table
