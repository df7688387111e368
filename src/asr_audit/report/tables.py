"""Terminal (rich), CSV and JSON renderings of probe results. Renderers return objects/strings."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.table import Table


def fmt_rate(x: float) -> str:
    return f"{x:.3f}"


def fmt_ci(low: float, high: float, digits: int = 3) -> str:
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def to_json(obj: Any) -> str:
    """Deterministic JSON text (stable key order as built, fixed float repr, trailing newline)."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 text with LF line ends; an unwritable path is a one-line error."""
    from asr_audit.errors import InputFileError

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        raise InputFileError(path, f"cannot write ({exc.strerror or exc})", "choose a writable output path") from None
    return path


def to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """CSV text of ``rows`` (the given columns, in order); text cells are spreadsheet-safe
    (:func:`~asr_audit.report.csv_safe.safe_cell`), numbers are written as they are."""
    from asr_audit.report.csv_safe import safe_cell

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: safe_cell(v) for k, v in r.items()})
    return buf.getvalue()


REFDIS_COLUMNS = ("model", "in_panel", "accept_ref", "ci_low", "ci_high", "n_ref", "n_eligible", "n_clips",
                  "wer", "wer_corrected", "wer_inflation", "wer_inflation_ci_low", "wer_inflation_ci_high")


def refdis_table(d: Mapping[str, Any]) -> Table:
    """The ``asr-audit refdis`` table from a refdis result's ``to_dict()``: one row per model."""
    title = (f"reference disagreement — {d['n_clips']} clips, {d['n_edits']} edits "
             f"({d['mode']}; preset {d['params']['preset']}, majority {d['params']['majority']}, "
             f"{'leave-one-out' if d['params']['loo'] else 'no leave-one-out'}; normalizer {d['normalizer']['name']})")
    t = Table(title=title, title_justify="left")
    for col, just in (("model", "left"), ("accept-ref", "right"), ("95% CI", "right"), ("n_ref", "right"),
                      ("n_eligible", "right"), ("WER", "right"), ("corrected WER", "right"),
                      ("inflation (pts)", "right"), ("95% CI", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for m in d["models"]:
        name = m["model"] + (" (panel, LOO)" if m["in_panel"] and d["params"]["loo"] else
                             " (panel)" if m["in_panel"] else "")
        t.add_row(name, fmt_rate(m["accept_ref"]), fmt_ci(m["ci_low"], m["ci_high"]), str(m["n_ref"]),
                  str(m["n_eligible"]), f"{100 * m['wer']:.2f}", f"{100 * m['wer_corrected']:.2f}",
                  f"{m['wer_inflation']:+.2f}", fmt_ci(m["wer_inflation_ci_low"], m["wer_inflation_ci_high"], 2))
    return t


def refdis_csv(d: Mapping[str, Any]) -> str:
    """The per-model CSV from a refdis result's ``to_dict()``."""
    return to_csv(d["models"], REFDIS_COLUMNS)
