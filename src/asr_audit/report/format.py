"""One number formatter and one policy for undefined values, for every table, CSV and JSON.

A value is *undefined* when it is ``None`` or a non-finite float (a rate over ``n = 0`` trials,
an empty arm, a mean of nothing, a NaN from a failed score). Undefined values are never shown or
written as 0:

- tables (terminal and HTML) show :data:`UNDEFINED` ("—");
- JSON writes ``null`` (:func:`json_safe`, applied by :func:`~asr_audit.report.tables.to_json`);
- CSV writes an empty cell (:func:`csv_cell`, applied by :func:`~asr_audit.report.tables.to_csv`).

>>> fmt_num(0.12345), fmt_num(None), fmt_num(float("nan")), fmt_num(-0.5, 2, signed=True)
('0.123', '—', '—', '-0.50')
>>> fmt_ci(0.1, 0.25), fmt_ci(None, 0.25), fmt_ci(-1.0, 2.0, 2, signed=True)
('[0.100, 0.250]', '—', '[-1.00, +2.00]')
>>> json_safe({"a": [1.5, float("inf")], "b": None}), csv_cell(float("nan")), csv_cell(0.0)
({'a': [1.5, None], 'b': None}, '', 0.0)
"""

from __future__ import annotations

import math
from typing import Any

UNDEFINED = "—"
"""How a table shows an undefined value (n = 0, empty arm, NaN)."""


def is_undefined(x: Any) -> bool:
    """``None`` or a non-finite float."""
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def fmt_num(x: Any, digits: int = 3, *, signed: bool = False, scale: float = 1.0, suffix: str = "") -> str:
    """``x * scale`` with ``digits`` decimals (a leading ``+`` when ``signed``), or "—" when undefined."""
    if is_undefined(x):
        return UNDEFINED
    return f"{x * scale:{'+' if signed else ''}.{digits}f}{suffix}"


def fmt_coverage(x: Any) -> str:
    """A share of clips answered as a percentage with one decimal (``100.0%``), or "—"."""
    return fmt_num(x, 1, scale=100, suffix="%")


def fmt_rate(x: Any) -> str:
    """A rate in [0, 1] with three decimals, or "—"."""
    return fmt_num(x, 3)


def fmt_ci(
    low: Any,
    high: Any,
    digits: int = 3,
    *,
    signed: bool = False,
    sep: str = ", ",
    brackets: bool = True,
    scale: float = 1.0,
) -> str:
    """``[low, high]`` (or ``low<sep>high`` without brackets), each times ``scale``, or "—" when
    either bound is undefined."""
    if is_undefined(low) or is_undefined(high):
        return UNDEFINED
    body = f"{fmt_num(low, digits, signed=signed, scale=scale)}{sep}{fmt_num(high, digits, signed=signed, scale=scale)}"
    return f"[{body}]" if brackets else body


TEMPLATE_HELPERS = {"fmt": fmt_num, "fmt_ci": fmt_ci}
"""Passed to every section template (``ctx.render(..., **TEMPLATE_HELPERS)``): ``fmt(x, digits)``, ``fmt_ci(lo, hi)``."""


def json_safe(data: Any) -> Any:
    """``data`` with every non-finite float replaced by ``None`` (JSON null); containers copied."""
    if isinstance(data, dict):
        return {k: json_safe(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [json_safe(v) for v in data]
    if isinstance(data, float) and not math.isfinite(data):
        return None
    return data


def csv_cell(x: Any) -> Any:
    """One CSV cell: undefined values become the empty string, everything else is left as is."""
    return "" if is_undefined(x) else x
