"""Report sections of the audio probes ``masked`` and ``lift`` (registered with :func:`register_section`).

Templates ``templates/masked.html.j2`` and ``templates/lift.html.j2`` are rendered by the report's
autoescaping jinja2 environment, so transcripts and model names are escaped like everywhere else
in the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.report import plots
from asr_audit.report.format import TEMPLATE_HELPERS
from asr_audit.report.section import ReportContext, Section, register_section
from asr_audit.report.tables import to_csv

MASKED_COLUMNS = ("model", "accept_ref", "ci_low", "ci_high", "k", "n", "n_items", "n_gated_out", "n_failed")
LIFT_COLUMNS = ("model", "condition", "lift", "ci_low", "ci_high", "compare", "n")
GATE_COLUMNS = ("model", "n_clips_kept", "n_clips_gated_out", "n_kept", "n_gated_out")
MAX_ROWS = 200


@register_section("masked")
def masked_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"masked-{corpus}")
    p = r.get("params", {})
    models = r["models"]
    figs = []
    rows = [
        {
            "model": m["model"],
            "condition": p.get("method", ""),
            "rate": m["accept_ref"] if m["n"] else None,
            "ci_low": m["ci_low"],
            "ci_high": m["ci_high"],
        }
        for m in models
    ]
    if any(row["rate"] is not None for row in rows):
        figs.append(
            ctx.figure(
                f"{anchor}.png",
                plots.rates_by_group(
                    rows,
                    "condition",
                    f"Masked-{p.get('kind', 'number')} recovery — {corpus}",
                    "accept-ref (recovered / eligible)",
                    colours=ctx.colours,
                ),
                "Share of eligible masked items whose transcript still contains the hidden target (Wilson 95%)",
            )
        )
    items = r.get("items", [])
    html = ctx.render(
        "masked.html.j2",
        kind=p.get("kind", "number"),
        method=p.get("method", "silence"),
        pad=p.get("pad", 0),
        gate=p.get("gate_max_wer", ""),
        models=models,
        items=items[:MAX_ROWS],
        truncated=len(items) > MAX_ROWS,
        **TEMPLATE_HELPERS,
    )
    return Section(
        f"Masked-{p.get('kind', 'number')} recovery — {corpus}",
        anchor,
        html,
        tuple(figs),
        tables={f"{anchor}.csv": to_csv(models, MASKED_COLUMNS)},
    )


def lift_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (model, condition) and per paired difference."""
    rows = []
    for m in result["models"]:
        for cond, c in m.get("conditions", {}).items():
            rows.append(
                {
                    "model": m["model"],
                    "condition": cond,
                    "lift": c["lift"]["mean"],
                    "ci_low": c["lift"]["ci_low"],
                    "ci_high": c["lift"]["ci_high"],
                    "compare": c["compare"]["mean"],
                    "n": c["lift"]["n"],
                }
            )
        for pair, est in m.get("paired", {}).items():
            rows.append(
                {
                    "model": m["model"],
                    "condition": f"paired {pair}",
                    "lift": est["mean"],
                    "ci_low": est["ci_low"],
                    "ci_high": est["ci_high"],
                    "compare": None,
                    "n": est["n"],
                }
            )
    return rows


@register_section("lift")
def lift_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"lift-{corpus}")
    rows = lift_rows(r)
    gates = [{k: m.get(k) for k in GATE_COLUMNS} for m in r["models"] if "n_clips_kept" in m]
    html = ctx.render(
        "lift.html.j2",
        spans=r.get("spans", ""),
        rows=rows,
        skipped=r.get("skipped", []),
        gates=gates,
        gate=r.get("gate_max_wer"),
        **TEMPLATE_HELPERS,
    )
    figs = []
    pts = [
        {
            "model": x["model"],
            "condition": x["condition"],
            "rate": x["lift"],
            "ci_low": x["ci_low"],
            "ci_high": x["ci_high"],
        }
        for x in rows
        if x["lift"] is not None and x["ci_low"] is not None
    ]
    if pts:
        figs.append(
            ctx.figure(
                f"{anchor}.png",
                plots.rates_by_group(
                    pts,
                    "condition",
                    f"Audio lift — {corpus}",
                    "lift (nats per character)",
                    ylim=None,
                    zero_line=True,
                    colours=ctx.colours,
                ),
                "Mean teacher-forced lift per condition with sentence-clustered 95% intervals (> 0: the audio raised the span)",
            )
        )
    voices = [
        {
            "model": f"{v['model']} · {v['condition']}",
            "voice": v["voice"],
            "rate": v["mean"],
            "ci_low": v["ci_low"],
            "ci_high": v["ci_high"],
        }
        for v in r.get("by_voice", [])
        if v["mean"] is not None
    ]
    if len({v["voice"] for v in voices}) > 1:
        figs.append(
            ctx.figure(
                f"{anchor}-voices.png",
                plots.rates_by_group(
                    voices,
                    "voice",
                    f"Audio lift per voice — {corpus}",
                    "lift (nats per character)",
                    ylim=None,
                    zero_line=True,
                    colours=ctx.colours,
                ),
                "Lift per voice condition (the clip's speaker / TTS voice), sentence-clustered 95% intervals",
            )
        )
    tables = {f"{anchor}.csv": to_csv(rows, LIFT_COLUMNS)}
    if gates:
        tables[f"{anchor}-gate.csv"] = to_csv(gates, GATE_COLUMNS)
    if r.get("by_voice"):
        tables[f"{anchor}-voices.csv"] = to_csv(
            r["by_voice"], ("model", "condition", "voice", "mean", "ci_low", "ci_high", "n")
        )
    return Section(f"Audio lift ({r.get('spans', '')}) — {corpus}", anchor, html, tuple(figs), tables=tables)
