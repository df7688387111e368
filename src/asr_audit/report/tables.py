"""Terminal (rich), CSV and JSON renderings of probe results. Renderers return objects/strings."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from asr_audit.outputs import write_atomic
from asr_audit.report.csv_safe import safe_cell
from asr_audit.report.format import UNDEFINED, csv_cell, fmt_ci, fmt_coverage, fmt_num, fmt_rate, json_safe

if TYPE_CHECKING:
    from rich.console import JustifyMethod

    from asr_audit.corpus.predfiles import ModelCoverage
    from asr_audit.corpus.records import PredictionFile

__all__ = [
    "REFDIS_COLUMNS",
    "battery_screen",
    "battery_table",
    "calib_curve_table",
    "calib_score_table",
    "columns_lines",
    "continuation_table",
    "coverage_table",
    "fmt_ci",
    "fmt_rate",
    "lift_table",
    "masked_table",
    "refdis_csv",
    "refdis_table",
    "study_table",
    "to_csv",
    "to_json",
    "transcribe_table",
    "write_text",
]


def to_json(obj: Any) -> str:
    """Deterministic JSON text (stable key order as built, fixed float repr, trailing newline).

    Undefined values (NaN, inf) are written as null (:func:`~asr_audit.report.format.json_safe`).
    """
    return json.dumps(json_safe(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 text with LF line ends, atomically (:func:`~asr_audit.outputs.write_atomic`: a
    full disk leaves the old file whole); an unwritable path is a one-line error."""

    return write_atomic(path, text)


def to_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """CSV text with a header of ``columns`` (extra keys ignored); undefined values as empty cells;
    text cells are spreadsheet-safe (:func:`~asr_audit.report.csv_safe.safe_cell`), numbers are written as they are."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: safe_cell(csv_cell(v)) for k, v in r.items()})
    return buf.getvalue()


REFDIS_COLUMNS = (
    "model",
    "in_panel",
    "accept_ref",
    "ci_low",
    "ci_high",
    "n_ref",
    "n_eligible",
    "n_clips",
    "wer",
    "wer_coverage",
    "wer_corrected",
    "wer_inflation",
    "wer_inflation_ci_low",
    "wer_inflation_ci_high",
)
#: the panel-adequacy columns a consensus-mode result adds (``probes/predfiles/adequacy.py``)
ADEQUACY_COLUMNS = ("wer_outside", "panel_wer_outside_median", "hears_better_than_panel", "edit_agreement")
#: the verified record's columns (``models[i]["verified"]``), prefixed ``verified_`` in the CSV
VERIFIED_KEYS = (
    "source",
    "excluded",
    "n_ref",
    "n_eligible",
    "accept_ref",
    "ci_low",
    "ci_high",
    "copy_low",
    "hears_better",
    "hears_better_n",
    "wer_inflation",
    "wer_inflation_ci_low",
    "wer_inflation_ci_high",
)


def refdis_table(d: Mapping[str, Any]) -> Table:
    """The ``asr-audit refdis`` table from a refdis result's ``to_dict()``: one row per model."""
    title = (
        f"reference disagreement — {d['n_clips']} clips, {d['n_edits']} edits "
        f"({d['mode']}; preset {d['params']['preset']}, majority {d['params']['majority']}, "
        f"{'leave-one-out' if d['params']['loo'] else 'no leave-one-out'}; normalizer {d['normalizer'].get('label', d['normalizer']['name'])}"
        f"{'; WER merge_compounds=True' if d.get('wer_scoring', {}).get('merge_compounds') else ''})"
    )
    t = Table(title=title, title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("model", "left"),
        ("accept-ref", "right"),
        ("95% CI", "right"),
        ("n_ref", "right"),
        ("n_eligible", "right"),
        ("WER", "right"),
        ("coverage", "right"),
        ("corrected WER", "right"),
        ("inflation (pts)", "right"),
        ("95% CI", "right"),
    )
    for col, just in columns:
        t.add_column(col, justify=just)
    other = any("n_other" in m for m in d["models"])
    if other:  # three-outcome verdicts: "other" = neither rendering, not eligible
        t.add_column("n_other", justify="right")
    outside = any("wer_outside" in m for m in d["models"])
    if outside:  # panel adequacy: WER outside every mined edit, and the panel median it is compared with
        t.add_column("WER outside edits (panel)", justify="right")
    verified = any("verified" in m for m in d["models"])
    if verified:
        t.add_column("verified accept-ref [95% CI] k/n", justify="right")
    for m in d["models"]:
        name = m["model"] + (
            " (panel, LOO)" if m["in_panel"] and d["params"]["loo"] else " (panel)" if m["in_panel"] else ""
        )
        if m["accept_ref"] is None:  # n = 0: "—", the reason in the caption
            t.caption = ((t.caption + "\n") if t.caption else "") + f"— {m['model']}: {m.get('reason', 'n = 0')}"
        t.add_row(
            name,
            fmt_rate(m["accept_ref"]),
            fmt_ci(m["ci_low"], m["ci_high"]),
            str(m["n_ref"]),
            str(m["n_eligible"]),
            fmt_num(m["wer"], 2, scale=100),
            fmt_coverage(m.get("wer_coverage")),
            fmt_num(m["wer_corrected"], 2, scale=100),
            fmt_num(m["wer_inflation"], 2, signed=True),
            fmt_ci(m["wer_inflation_ci_low"], m["wer_inflation_ci_high"], 2),
            *([str(m["n_other"])] if other else []),
            *([_outside_cell(m)] if outside else []),
            *([_verified_cell(m.get("verified"))] if verified else []),
        )
    for w in d.get("panel_adequacy", {}).get("warnings", []):
        t.caption = ((t.caption + "\n") if t.caption else "") + f"warning: {w}"
    return t


def _outside_cell(m: Mapping[str, Any]) -> str:
    own, med = m.get("wer_outside"), m.get("panel_wer_outside_median")
    text = f"{fmt_num(own, 2, scale=100)} ({fmt_num(med, 2, scale=100)})"
    return text + (" ▲" if m.get("hears_better_than_panel") else "")


def _verified_cell(v: Mapping[str, Any] | None) -> str:
    if not v:
        return "—"
    if v.get("excluded"):
        return "excluded"
    if v.get("accept_ref") is None:
        return f"— 0/{v.get('n_eligible', 0)}"
    return f"{fmt_rate(v['accept_ref'])} {fmt_ci(v['ci_low'], v['ci_high'])} {v['n_ref']}/{v['n_eligible']}"


def refdis_csv(d: Mapping[str, Any]) -> str:
    """The per-model CSV from a refdis result's ``to_dict()``."""
    cols: tuple[str, ...] = REFDIS_COLUMNS
    if any("n_other" in m for m in d["models"]):  # three-outcome verdicts: count "other" too
        cols = (*cols[:7], "n_other", *cols[7:])
    rows = [dict(m) for m in d["models"]]
    if any("wer_outside" in m for m in rows):  # panel adequacy (consensus mode)
        cols = (*cols, *ADEQUACY_COLUMNS)
    if any("verified" in m for m in rows):  # a verification: its scores, flattened
        rows = [{**m, **{f"verified_{k}": (m.get("verified") or {}).get(k) for k in VERIFIED_KEYS}} for m in rows]
        cols = (*cols, *(f"verified_{k}" for k in VERIFIED_KEYS))
    return to_csv(rows, cols)


def _table(title: str, columns: Sequence[str], left: Sequence[str]) -> Table:
    t = Table(title=title)
    for col in columns:
        t.add_column(col, justify="left" if col in left else "right")
    return t


def masked_table(d: Mapping[str, Any], corpus: str) -> Table:
    """The ``asr-audit masked`` table from a masked result's ``to_dict()``: one row per model."""
    p = d["params"]
    t = _table(
        f"masked-{p['kind']} recovery ({p['method']}) on {corpus}: {d['n_recipes']} item(s)",
        ("model", "accept-ref", "95% CI", "k/n", "gated out", "failed"),
        ("model",),
    )
    for m in d["models"]:
        t.add_row(
            m["model"],
            fmt_rate(m["accept_ref"]),
            fmt_ci(m["ci_low"], m["ci_high"], sep="-", brackets=False),
            f"{m['k']}/{m['n']}",
            str(m["n_gated_out"]),
            str(m["n_failed"]),
        )
    return t


def lift_table(d: Mapping[str, Any], corpus: str, spans: str) -> Table:
    """The ``asr-audit lift`` table: one row per (model, condition) and per paired difference, and one
    row per model with its intelligibility gate (sentences kept / gated out)."""
    gate = d.get("gate_max_wer")
    t = _table(
        f"audio lift ({spans} spans) on {corpus}, nats/char; gate: unmasked WER <= "
        f"{fmt_num(gate, 2) if gate is not None else 'off'}",
        ("model", "condition", "lift", "95% CI", "compare r-a", "n", "rows/item"),
        ("model", "condition"),
    )
    for m in d["models"]:
        if "n_clips_kept" in m:
            t.add_row(m["model"], "gate", "", "", "", f"{m['n_clips_kept']} kept / {m['n_clips_gated_out']} out", "")
        for cond, c in m["conditions"].items():
            t.add_row(
                m["model"],
                cond,
                fmt_num(c["lift"]["mean"]),
                fmt_ci(c["lift"]["ci_low"], c["lift"]["ci_high"], sep="-", brackets=False),
                fmt_num(c["compare"]["mean"]),
                str(c["lift"]["n"]),
                fmt_num(m["rows_per_item"], 2),
            )
        for pair, est in m["paired"].items():
            t.add_row(
                m["model"],
                f"paired {pair}",
                fmt_num(est["mean"]),
                fmt_ci(est["ci_low"], est["ci_high"], sep="-", brackets=False),
                fmt_num(None),
                str(est["n"]),
                "",
            )
    return t


def continuation_table(d: Mapping[str, Any], corpus: str) -> Table:
    """The ``asr-audit continue`` table: one row per model."""
    t = _table(
        f"forced continuation on {corpus}: last {d['params']['hide_words']} word(s) hidden",
        ("model", "leak rate", "95% CI", "k/n words", "clips leaking", "failed"),
        ("model",),
    )
    for m in d["models"]:
        t.add_row(
            m["model"],
            fmt_rate(m["leak_rate"]),
            fmt_ci(m["ci_low"], m["ci_high"], sep="-", brackets=False),
            f"{m['k']}/{m['n']}",
            f"{m['n_clips_leaking']}/{m['n_clips']}",
            str(m["n_failed"]),
        )
    return t


def battery_table(d: Mapping[str, Any]) -> Table:
    """The ``asr-audit battery`` table: one row per condition, one column per model (accept-ref [95% CI], n)."""
    t = Table(title=f"trigger battery — {d['measure']} on {d['corpus']} (accept-ref, Wilson 95%)")
    t.add_column("condition")
    for m in d["models"]:
        t.add_column(m, justify="right")
    diffs = {(x["model"], x["condition"]): x for x in d["differences"]}
    for cond in d["conditions"]:
        row = [cond]
        for m in d["models"]:
            c = next(x for x in d["cells"] if x["model"] == m and x["condition"] == cond)
            diff = diffs.get((m, cond))
            delta = f" Δ{fmt_num(diff['estimate'], 2, signed=True)}" if diff and diff["n_items"] else ""
            row.append(f"{fmt_num(c['accept_ref'], 2)} {fmt_ci(c['ci_low'], c['ci_high'], 2)} n={c['n']}{delta}")
        t.add_row(*row)
    return t


def study_table(d: Mapping[str, Any]) -> Table:
    """The courtesy study table of ``asr-audit battery --probe courtesy``."""
    t = Table(title="opening courtesy: presence in the output (Wilson 95%)")
    for col in ("model", "condition", "presence", "95% CI", "k/n", "note"):
        t.add_column(col)
    for r in d["study"]:
        t.add_row(
            r["model"],
            r["condition"],
            fmt_num(r["presence"], 2),
            fmt_ci(r["ci_low"], r["ci_high"], 2),
            f"{r['k']}/{r['n']}",
            r["reason"] or "",
        )
    return t


def battery_screen(d: Mapping[str, Any]) -> list[Table | str]:
    """What ``asr-audit battery`` prints: :func:`battery_table`, the courtesy study's
    :func:`study_table` when it ran, and how many clip/condition cells failed, if any."""
    out: list[Table | str] = [battery_table(d)]
    if d["study"]:
        out.append(study_table(d))
    if d["failures"]:
        out.append(f"{len(d['failures'])} clip/condition failure(s); see --json")
    return out


TRANSCRIBE_SUMMARY_COLUMNS = ("model", "ok", "cached", "computed", "failed", "WER", "coverage", "RTFx", "file")


def transcribe_table(
    rows: Sequence[Mapping[str, Any]], n_clips: int, wer_label: str = "", metric: str = "WER"
) -> Table:
    """The ``asr-audit transcribe`` summary; rows: model, ok, cached, computed, failed, wer, coverage, rtfx, file.

    WER counts failed clips as deleting their reference; coverage is the share of clips transcribed.

    ``wer_label`` names the exact normalizer the WER column was computed after (in the title);
    ``metric`` is ``CER`` when that normalizer's tokens are characters (the column is renamed).
    """
    title = f"transcribed {n_clips} clip(s)" + (f"; {metric} after the {wer_label} normalizer" if wer_label else "")
    columns = tuple(metric if c == "WER" else c for c in TRANSCRIBE_SUMMARY_COLUMNS)
    t = _table(title, columns, ("model", "file"))
    for r in rows:
        t.add_row(
            r["model"],
            str(r["ok"]),
            str(r["cached"]),
            str(r["computed"]),
            str(r["failed"]),
            fmt_num(r["wer"], 2, scale=100, suffix="%"),
            fmt_coverage(r.get("coverage")),
            fmt_num(r["rtfx"], 1),
            str(r["file"]) if r["file"] else UNDEFINED,
        )
    return t


def coverage_table(source: str, n_clips: int, n_models: int, coverage: Sequence[ModelCoverage]) -> Table:
    """The ``asr-audit coverage`` table: rows, hypotheses, empty and missing per prediction file."""
    t = Table(title=f"{source}: {n_clips} clips, {n_models} models", title_justify="left")
    for column in ("model", "file", "rows", "hypotheses", "empty", "missing"):
        t.add_column(column)
    for c in coverage:
        t.add_row(c.model, c.path, str(c.n_rows), str(c.n_hyp), str(c.n_empty), str(c.n_missing))
    return t


def columns_lines(files: Sequence[PredictionFile]) -> list[str]:
    """What ``asr-audit coverage`` says under its table: the column each role was read from, per file."""
    return [
        f"columns of {f.path.name}: " + ", ".join(f"{role}={col or '(blank)'}" for role, col in f.columns.items())
        for f in files
    ]


def _rate_cell(x: Mapping[str, Any]) -> str:
    """``rate [low, high] (k/n)`` of a rate dictionary, or ``— (0/0)``."""
    if not x["n"]:
        return f"{UNDEFINED} (0/0)"
    return f"{fmt_rate(x['rate'])} {fmt_ci(x['ci_low'], x['ci_high'])} ({x['k']}/{x['n']})"


def calib_score_table(d: Mapping[str, Any]) -> Table:
    """The ``asr-audit calib score`` table from a calibration score's ``to_dict()``."""
    t = Table(
        title=f"consensus miner vs planted truth: panel {','.join(d['panel'])}, preset {d['preset']}, "
        f"{d['n_clips']} clips, {d['n_edits']} edits",
        title_justify="left",
    )
    t.add_column("measure")
    t.add_column("rate [95% Wilson] (k/n)")
    t.add_row("precision", _rate_cell(d["precision"]))
    t.add_row("recall", _rate_cell(d["recall"]))
    t.add_row("recall, boundary errors", _rate_cell(d["recall_boundary"]))
    for group, label in (
        ("recall_by_kind", "recall, {}"),
        ("recall_by_position", "recall, {}"),
        ("precision_by_kind", "precision, {} edits"),
        ("precision_by_position", "precision, {} edits"),
    ):
        for key, x in d[group].items():
            t.add_row(label.format(key), _rate_cell(x))
    t.add_row("conventions mined (should be 0)", _rate_cell(d["conventions_mined"]))
    fp = d["false_positives"]
    t.add_row("false positives", f"{fp['on_convention']} on conventions, {fp['unexplained']} unexplained")
    return t


def calib_curve_table(d: Mapping[str, Any]) -> Table:
    """The miner's precision-recall curve over edit confidence, from a calibration score's ``to_dict()``:
    one row per threshold (edits kept when their confidence is at least it); the operating point
    (``params.min_confidence``) is marked."""
    point = (d.get("params") or {}).get("min_confidence")
    t = Table(
        title="precision-recall curve over edit confidence (edits with confidence >= threshold)",
        title_justify="left",
    )
    for col in ("threshold", "edits", "precision (k/n)", "recall (k/n)", ""):
        t.add_column(col, justify="right" if col else "left")
    for p in d.get("curve", []):
        prec = UNDEFINED if p["precision"] is None else f"{p['precision']:.2f} ({p['n_true']}/{p['n_edits']})"
        rec = UNDEFINED if p["recall"] is None else f"{p['recall']:.2f} ({p['n_recalled']}/{p['n_errors']})"
        mark = "<- operating point" if point is not None and abs(p["threshold"] - point) < 1e-9 else ""
        t.add_row(f"{p['threshold']:.2f}", str(p["n_edits"]), prec, rec, mark)
    return t
