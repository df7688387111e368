"""The switch-rate renderers: one terminal table, one CSV schema, one JSON, for the CLI and the report.

Every renderer takes the result dictionary (:meth:`~asr_audit.probes.predfiles.ortho.OrthoResult.to_dict`,
as stored in ``results.json``), so ``asr-audit switch-rate`` and the report's switch-rate section
write the same files from the same data. Undefined switch rates follow :mod:`asr_audit.report.format`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text

from asr_audit.report.format import UNDEFINED, fmt_ci, fmt_num
from asr_audit.report.tables import to_csv, to_json

SWITCH_COLUMNS = (
    "model",
    "family",
    "group",
    "pooled",
    "arm_a",
    "k_a",
    "n_a",
    "arm_b",
    "k_b",
    "n_b",
    "switch",
    "ci_low",
    "ci_high",
    "limiting_arm",
    "chance",
    "n_items",
    "n_eligible",
    "n_neither",
    "n_missing",
    "reason",
)
"""The one CSV schema of the switch rate (CLI ``--csv`` and the report's ``tables/switch-*.csv``)."""


def all_rows(d: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Per-family rows then pooled rows, each model in the result's model order."""
    out: list[Mapping[str, Any]] = []
    for model in d["models"]:
        out += [r for r in d["rows"] if r["model"] == model]
        out += [r for r in d["pooled"] if r["model"] == model]
    return out


def empty_families(d: Mapping[str, Any]) -> list[str]:
    """Families with no reference item in the corpus, in family order."""
    return [f["name"] for f in d["families"] if not any(d["reference_items"][f["name"]].values())]


def switch_rate_table(d: Mapping[str, Any], show_empty: bool = False) -> Table:
    """Terminal table: one line per (model, family) with reference items, pooled groups last per model."""
    chance, min_per_arm = d["chance"], d["params"]["min_per_arm"]
    empty = empty_families(d)
    table = Table(
        title=f"orthographic switch rate (chance {chance:g}; min per arm {min_per_arm})",
        caption=(
            f"{d['source']}: {d['n_clips']} clips. switch = min over arms of P(model writes "
            f"the reference's arm); > {chance:g} only if it tracks the corpus convention. "
            + (f"No reference items: {', '.join(empty)}." if empty and not show_empty else "")
        ),
        caption_justify="left",
    )
    for col in ("model", "family", "arm A k/n", "arm B k/n", "switch", "95% CI", "vs chance", "neither", "missing"):
        table.add_column(col, justify="left" if col in ("model", "family") else "right")
    for r in all_rows(d):
        if not show_empty and not r["pooled"] and r["family"] in empty:
            continue
        if r["pooled"] and r["n_items"] == 0 and not show_empty:
            continue
        a, b = r["arms"]
        name = (lambda c: c["role"]) if r["pooled"] else (lambda c: c["label"])
        if r["switch"] is None:
            short = ", ".join(f"{name(c)} n={c['n']}" for c in r["arms"] if c["n"] < min_per_arm)
            sw, vs = UNDEFINED, f"undefined ({short})"
        else:
            vs = "above" if r["ci_low"] > chance else "below" if r["ci_high"] < chance else "overlaps"
            sw = fmt_num(r["switch"])
        family = Text(f"{r['family']} (pooled)", "bold") if r["pooled"] else r["family"]
        table.add_row(
            r["model"],
            family,
            f"{name(a)}: {a['k']}/{a['n']}",
            f"{name(b)}: {b['k']}/{b['n']}",
            sw,
            fmt_ci(r["ci_low"], r["ci_high"]),
            vs,
            str(r["n_neither"]),
            str(r["n_missing"]),
        )
    return table


def switch_rate_rows(d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The CSV rows (:data:`SWITCH_COLUMNS`): one per (model, family) and per (model, pooled group)."""
    out = []
    for r in all_rows(d):
        a, b = r["arms"]
        out.append(
            {
                "model": r["model"],
                "family": r["family"],
                "group": r["group"],
                "pooled": int(r["pooled"]),
                "arm_a": a["label"],
                "k_a": a["k"],
                "n_a": a["n"],
                "arm_b": b["label"],
                "k_b": b["k"],
                "n_b": b["n"],
                "switch": r["switch"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
                "limiting_arm": r["limiting_arm"],
                "chance": d["chance"],
                "n_items": r["n_items"],
                "n_eligible": r["n_eligible"],
                "n_neither": r["n_neither"],
                "n_missing": r["n_missing"],
                "reason": r["reason"],
            }
        )
    return out


def switch_rate_csv(d: Mapping[str, Any]) -> str:
    """CSV in :data:`SWITCH_COLUMNS`; floats at full precision, undefined values as empty cells."""
    return to_csv(switch_rate_rows(d), SWITCH_COLUMNS)


def switch_rate_json(d: Mapping[str, Any]) -> str:
    """The full result (params, families, models, rows, pooled rows, items) as JSON."""
    return to_json(d)


__all__ = [
    "SWITCH_COLUMNS",
    "all_rows",
    "empty_families",
    "switch_rate_csv",
    "switch_rate_json",
    "switch_rate_rows",
    "switch_rate_table",
]
