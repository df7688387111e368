"""The ``asr-audit normalize --compare`` table: one row per input text, one column per normalizer.

It reads the dictionaries of :meth:`asr_audit.text.compare.Comparison.to_dict`; tokens that
differ from the first (baseline) normalizer's output are shown in ``[brackets]``. A file of many
lines is written as a stream instead (:func:`normalized_jsonl`, :func:`normalized_tsv`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
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


def normalized_jsonl(names: Sequence[str], rows: Iterable[tuple[str, Sequence[str]]]) -> Iterator[str]:
    """One JSON object per line: ``{"text": ..., "<normalizer>": ..., ...}``.

    >>> list(normalized_jsonl(["whisper"], [("Mr. X", ("mister x",))]))
    ['{"text": "Mr. X", "whisper": "mister x"}\\n']
    """
    for text, outputs in rows:
        yield json.dumps({"text": text, **dict(zip(names, outputs))}, ensure_ascii=False) + "\n"


def normalized_tsv(names: Sequence[str], rows: Iterable[tuple[str, Sequence[str]]]) -> Iterator[str]:
    """A header (``text``, then each normalizer), then one tab-separated line per text (a tab in
    a text is written as a space: normalized outputs hold none).

    >>> "".join(normalized_tsv(["whisper"], [("Mr.\\tX", ("mister x",))]))
    'text\\twhisper\\nMr. X\\tmister x\\n'
    """
    yield "\t".join(("text", *names)) + "\n"
    for text, outputs in rows:
        yield "\t".join((text.replace("\t", " "), *outputs)) + "\n"
