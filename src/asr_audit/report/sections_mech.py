"""Report section of the mechanism layer (``mech``): the layer-sweep plot, the steering table
with Wilson intervals and flips, and the edit-locus patching table.

The entry's ``result`` holds any of: ``sweep`` (rows of :class:`asr_audit.mechrun.direction.SweepRow`),
``site`` (the chosen site), ``steer`` (name -> :meth:`asr_audit.mechrun.steer.SteerResult.to_dict`)
and ``patch`` (:meth:`asr_audit.mechrun.patch.PatchResult.to_dict`), as
``benchmarks/mechanism.py`` writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.report import plots
from asr_audit.report.format import TEMPLATE_HELPERS
from asr_audit.report.section import ReportContext, Section, register_section
from asr_audit.report.tables import to_csv

STEER_COLUMNS = (
    "run", "arm", "accept_ref", "ci_low", "ci_high", "k", "n", "ref_to_spoken", "spoken_to_ref", "wer",
)  # fmt: skip
PATCH_COLUMNS = (
    "kind", "condition", "n", "median_full", "median_patched", "toward_audio",
    "median_change", "change_low", "change_high", "toward_low", "toward_high",
)  # fmt: skip


def steer_rows(steer: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (run, arm), in the run's order."""
    rows = []
    for run, res in steer.items():
        for arm in res["arms"]:
            r = arm["accept_ref"]
            rows.append(
                {
                    "run": run,
                    "arm": arm["label"],
                    "accept_ref": r["rate"],
                    "ci_low": r["ci_low"],
                    "ci_high": r["ci_high"],
                    "k": r["k"],
                    "n": r["n"],
                    "ref_to_spoken": arm["flips"]["ref_to_spoken"],
                    "spoken_to_ref": arm["flips"]["spoken_to_ref"],
                    "wer": arm["wer"],
                }
            )
    return rows


@register_section("mech")
def mech_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"mech-{corpus}")
    sweep = list(r.get("sweep", []))
    figs = []
    if sweep:
        pts = [
            {"model": "held-out AUC", "site": s["site"], "rate": s["auc"], "ci_low": s["auc"], "ci_high": s["auc"]}
            for s in sweep
        ]
        figs.append(
            ctx.figure(
                f"{anchor}-sweep.png",
                plots.rates_by_group(
                    pts, "site", f"Layer sweep — {corpus}", "held-out AUC (A above B)", chance=0.5, colours=ctx.colours
                ),
                "Held-out separability of the diff-in-means projection at each site (0.5 = chance)",
            )
        )
    steer = steer_rows(r.get("steer", {}))
    if steer:
        pts = [
            {
                "model": x["run"],
                "arm": x["arm"],
                "rate": x["accept_ref"],
                "ci_low": x["ci_low"],
                "ci_high": x["ci_high"],
            }
            for x in steer
        ]
        figs.append(
            ctx.figure(
                f"{anchor}-steer.png",
                plots.rates_by_group(
                    pts, "arm", f"Steering — {corpus}", "accept-ref on planted sites", colours=ctx.colours
                ),
                "accept-ref per arm (clean, intervention, random and shuffled controls), Wilson 95%",
            )
        )
    patch = list(r.get("patch", {}).get("table", []))
    html = ctx.render("mech.html.j2", sweep=sweep, site=r.get("site"), steer=steer, patch=patch, **TEMPLATE_HELPERS)
    tables = {}
    if steer:
        tables[f"{anchor}-steer.csv"] = to_csv(steer, STEER_COLUMNS)
    if patch:
        tables[f"{anchor}-patch.csv"] = to_csv(patch, PATCH_COLUMNS)
    return Section(f"Mechanism — {corpus}", anchor, html, tuple(figs), tables=tables)
