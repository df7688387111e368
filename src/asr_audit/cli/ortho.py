"""Verb ``switch-rate``: the orthographic switch-rate probe over a folder of prediction files.

Renderers (:func:`switch_rate_table`, :func:`switch_rate_csv`, :func:`switch_rate_json`) are pure
and return objects or strings; the verb parses, calls :func:`~asr_audit.probes.ortho.switch_rate`
once, and writes.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from asr_audit.cli import app, console, split_list
from asr_audit.errors import ConfigError
from asr_audit.report.tables import write_text
from asr_audit.probes.ortho import CHANCE, DEFAULT_MIN_PER_ARM, OrthoResult, SwitchRow

CSV_COLUMNS = (
    "model", "family", "group", "pooled", "arm_a", "k_a", "n_a", "arm_b", "k_b", "n_b", "switch",
    "ci_low", "ci_high", "limiting_arm", "chance", "n_items", "n_eligible", "n_neither", "n_missing", "reason",
)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _all_rows(result: OrthoResult) -> list[SwitchRow]:
    """Per-family rows then pooled rows, each model in name order."""
    out: list[SwitchRow] = []
    for model in result.models:
        out += [r for r in result.rows if r.model == model]
        out += [r for r in result.pooled if r.model == model]
    return out


def switch_rate_table(result: OrthoResult, show_empty: bool = False) -> Table:
    """Terminal table: one line per (model, family) with reference items, pooled groups last per model."""
    empty = [f.name for f in result.families if not any(result.reference_counts[f.name].values())]
    table = Table(title=f"orthographic switch rate (chance {CHANCE:g}; min per arm {result.min_per_arm})",
                  caption=(f"{result.source}: {result.n_clips} clips. switch = min over arms of P(model writes "
                           f"the reference's arm); > {CHANCE:g} only if it tracks the corpus convention. "
                           + (f"No reference items: {', '.join(empty)}." if empty and not show_empty else "")),
                  caption_justify="left")
    for col in ("model", "family", "arm A k/n", "arm B k/n", "switch", "95% CI", "vs chance", "neither", "missing"):
        table.add_column(col, justify="left" if col in ("model", "family") else "right")
    for r in _all_rows(result):
        if not show_empty and not r.pooled and r.family in empty:
            continue
        if r.pooled and r.n_items == 0 and not show_empty:
            continue
        a, b = r.arms
        arm = lambda c: f"{c.label if not r.pooled else c.role}: {c.k}/{c.n}"  # noqa: E731
        if r.switch is None:
            short = ", ".join(f"{c.label if not r.pooled else c.role} n={c.n}" for c in r.arms
                              if c.n < result.min_per_arm)
            sw, ci, vs = "n/a", "-", f"undefined ({short})"
        else:
            sw, ci = _fmt(r.switch), f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]"
            vs = "above" if r.ci_low > CHANCE else "below" if r.ci_high < CHANCE else "overlaps"
        family = Text(f"{r.family} (pooled)", "bold") if r.pooled else r.family
        table.add_row(r.model, family, arm(a), arm(b), sw, ci, vs, str(r.n_neither), str(r.n_missing))
    return table


def switch_rate_csv(result: OrthoResult) -> str:
    """CSV with one row per (model, family) and per (model, pooled group); floats at full precision;
    text cells spreadsheet-safe (:func:`~asr_audit.report.csv_safe.safe_row`)."""
    from asr_audit.report.csv_safe import safe_row

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in _all_rows(result):
        a, b = r.arms
        w.writerow(safe_row([r.model, r.family, r.group, int(r.pooled), a.label, a.k, a.n, b.label, b.k, b.n,
                             "" if r.switch is None else repr(r.switch), "" if r.ci_low is None else repr(r.ci_low),
                             "" if r.ci_high is None else repr(r.ci_high), r.limiting_arm or "", CHANCE,
                             r.n_items, r.n_eligible, r.n_neither, r.n_missing, r.reason or ""]))
    return buf.getvalue()


def switch_rate_json(result: OrthoResult) -> str:
    """The full result (params, families, models, rows, pooled rows, items) as JSON."""
    return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"


@app.command("switch-rate")
def switch_rate_cmd(
    preds: Path = typer.Option(..., "--preds", help="Folder (or file) of per-model prediction files."),
    families: Optional[str] = typer.Option(
        None, "--families", help="Comma-separated families and/or groups (honorific, spacing, modern, symbol); default all."),
    min_per_arm: int = typer.Option(DEFAULT_MIN_PER_ARM, "--min-per-arm",
                                    help="Eligible items an arm needs for the switch rate to be defined."),
    models: Optional[str] = typer.Option(None, "--models", help="Models to score (default: every file)."),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="Pick one dataset in a bucketed folder."),
    show_empty: bool = typer.Option(False, "--show-empty", help="Also list families with no reference items."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the full result (params, rows, items) as JSON."),
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write the per-model, per-family table as CSV."),
) -> None:
    """Orthographic switch rate: does a model write the reference's spelling of a sound-alike (Mr / Mister)?"""
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.conventions import resolve_families
    from asr_audit.probes.ortho import switch_rate

    fam_names = split_list(families, "--families")
    resolve_families(fam_names)  # fail on a bad family name before reading any file
    if min_per_arm < 1:
        raise ConfigError(f"--min-per-arm {min_per_arm} must be >= 1")
    pset = load_predictions(preds, dataset)
    result = switch_rate(pset, fam_names, min_per_arm, split_list(models, "--models"))
    console.print(switch_rate_table(result, show_empty))
    if json_out:
        console.print(f"wrote {write_text(json_out, switch_rate_json(result))}")
    if csv_out:
        console.print(f"wrote {write_text(csv_out, switch_rate_csv(result))}")
