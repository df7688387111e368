"""The report section of the positive controls (``validity``), registered with :func:`register_section`.

``benchmarks/validity.py --report DIR`` writes a result entry ``{"probe": "validity", "result":
{"targets": [...], "seconds": ..., "seed": ...}}``: one row per target of issue 13
(:class:`asr_audit.organism.validity.Target` as a dict), with what was measured, its 95% interval
and whether the target is met. The template ``templates/validity.html.j2`` is rendered by the
report's autoescaping jinja2 environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.report.format import TEMPLATE_HELPERS
from asr_audit.report.section import ReportContext, Section, register_section
from asr_audit.report.tables import to_csv

VALIDITY_COLUMNS = ("section", "claim", "value", "low", "high", "n", "status", "detail")


@register_section("validity")
def validity_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    anchor = ctx.slug(f"validity-{entry.get('corpus', '')}")
    targets = list(r.get("targets", []))
    counts = {
        s: sum(t.get("status") == s for t in targets)
        for s in ("met", "NOT met", "not run", "undefined", "stale", "unverified")
    }
    html = ctx.render("validity.html.j2", r=r, targets=targets, counts=counts, **TEMPLATE_HELPERS)
    return Section(
        "Validity: positive controls (model organisms)",
        anchor,
        html,
        tables={f"{anchor}.csv": to_csv(targets, VALIDITY_COLUMNS)},
    )
