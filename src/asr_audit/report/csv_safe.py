"""Spreadsheet-safe CSV cells: text that a spreadsheet would run as a formula is quoted as text.

Model, corpus and clip names come from file names and manifests; a name such as
``=HYPERLINK("http://x", "y")`` or ``+cmd|' /c calc'!A1`` written raw into a CSV cell runs as a
formula when the table is opened in a spreadsheet. Such text cells get a leading ``'`` (the
OWASP advice), which spreadsheets show as plain text. Numbers — real ones, and text that is just
a number such as ``-1.40`` — stay numbers.

>>> [safe_cell(v) for v in ["=1+2", "+x", "-cmd", "@SUM(A1)", "-1.40", "+3", "plain", -1.4, 2, None]]
["'=1+2", "'+x", "'-cmd", "'@SUM(A1)", '-1.40', '+3', 'plain', -1.4, 2, None]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?%?")


def safe_cell(value: Any) -> Any:
    """``value`` unchanged unless it is text a spreadsheet would read as a formula; then ``'`` + text."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_row(values: Iterable[Any]) -> list[Any]:
    """:func:`safe_cell` of each value of a CSV row."""
    return [safe_cell(v) for v in values]
