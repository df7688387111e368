"""Report sections for the trigger battery (``battery``) and the courtesy case study (``courtesy``).

Import this module from :mod:`asr_audit.report.sections` to register them. The markup is
``templates/battery.html.j2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.report import plots
from asr_audit.report.format import TEMPLATE_HELPERS
from asr_audit.report.section import ReportContext, Section, register_section
from asr_audit.report.tables import to_csv
from asr_audit.stats.flags import MIN_CLUSTERS_FOR_A_CLAIM

CELL_COLUMNS = ("model", "condition", "accept_ref", "k", "n", "ci_low", "ci_high", "n_failed")
DIFF_COLUMNS = ("model", "condition", "baseline", "estimate", "ci_low", "ci_high", "n_items", "n_clusters")
DID_COLUMNS = ("model", "voice", "estimate", "ci_low", "ci_high", "n_items", "n_clusters")


@register_section("battery")
@register_section("courtesy")
def battery_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"{entry['probe']}-{corpus}")
    cells = {(c["model"], c["condition"]): c for c in r["cells"]}
    diffs = {(d["model"], d["condition"]): d for d in r["differences"]}
    rows = [
        {
            "model": c["model"],
            "condition": c["condition"],
            "rate": c["accept_ref"],
            "ci_low": c["ci_low"],
            "ci_high": c["ci_high"],
        }
        for c in r["cells"]
        if c["accept_ref"] is not None
    ]
    figs = []
    if rows:
        figs.append(
            ctx.figure(
                f"{anchor}-conditions.png",
                plots.rates_by_group(
                    rows,
                    "condition",
                    f"Trigger battery — {r['measure']} on {corpus}",
                    "accept-ref",
                    colours=ctx.colours,
                ),
                "Accept-ref per model under each audio condition (Wilson 95%)",
            )
        )
    html = ctx.render(
        "battery.html.j2",
        r=r,
        corpus=corpus or r["corpus"],
        cells=cells,
        diffs=diffs,
        min_clusters=MIN_CLUSTERS_FOR_A_CLAIM,
        **TEMPLATE_HELPERS,
    )
    tables = {
        f"{anchor}-cells.csv": to_csv(r["cells"], CELL_COLUMNS),
        f"{anchor}-differences.csv": to_csv(r["differences"], DIFF_COLUMNS),
    }
    if r["did"]:
        tables[f"{anchor}-did.csv"] = to_csv(r["did"], DID_COLUMNS)
    title = "Opening courtesy" if entry["probe"] == "courtesy" else "Trigger battery"
    return Section(f"{title} — {corpus}", anchor, html, tuple(figs), (), tables)
