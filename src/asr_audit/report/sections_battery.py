"""Report sections for the trigger battery (``battery``) and the courtesy case study (``courtesy``).

Import this module from :mod:`asr_audit.report.sections` to register them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.report import plots
from asr_audit.report.html import ReportContext, Section, register_section
from asr_audit.report.tables import to_csv

CELL_COLUMNS = ("model", "condition", "accept_ref", "k", "n", "ci_low", "ci_high", "n_failed")
DIFF_COLUMNS = ("model", "condition", "baseline", "estimate", "ci_low", "ci_high", "n_items", "n_clusters")
DID_COLUMNS = ("model", "voice", "estimate", "ci_low", "ci_high", "n_items", "n_clusters")

_TEMPLATE = """
<p>Measure <code>{{ r.measure }}</code> on {{ corpus }}: accept-ref (share of items where the output
follows the reference) under each audio condition, Wilson 95% intervals; &Delta; is the paired
difference against the original audio with a sentence-clustered bootstrap interval.</p>
<table class="data"><thead><tr><th>condition</th>{% for m in r.models %}<th>{{ m }}</th>{% endfor %}</tr></thead><tbody>
{% for cond in r.conditions %}<tr><td>{{ cond }}</td>{% for m in r.models %}{% set c = cells[(m, cond)] %}{% set d = diffs.get((m, cond)) %}
<td>{{ fmt(c.accept_ref) }} [{{ fmt(c.ci_low) }}, {{ fmt(c.ci_high) }}] n={{ c.n }}{% if d %}<br>&Delta; {{ sfmt(d.estimate) }} [{{ sfmt(d.ci_low) }}, {{ sfmt(d.ci_high) }}]{% endif %}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>
{% if r.did %}<h4>Difference in differences</h4><p>(benchmark donor &minus; conversational donor) on the benchmark audio minus the same on a fresh voice's audio.</p>
<table class="data"><thead><tr><th>model</th><th>voice</th><th>DiD</th><th>95% CI</th><th>clusters</th></tr></thead><tbody>
{% for d in r.did %}<tr><td>{{ d.model }}</td><td>{{ d.voice }}</td><td>{{ sfmt(d.estimate) }}</td><td>[{{ sfmt(d.ci_low) }}, {{ sfmt(d.ci_high) }}]</td><td>{{ d.n_clusters }}</td></tr>{% endfor %}
</tbody></table>{% endif %}
{% if r.study %}<h4>Opening courtesy: presence in the output</h4>
<table class="data"><thead><tr><th>model</th><th>condition</th><th>presence</th><th>95% CI</th><th>k/n</th><th>note</th></tr></thead><tbody>
{% for s in r.study %}<tr><td>{{ s.model }}</td><td>{{ s.condition }}</td><td>{{ fmt(s.presence) }}</td><td>[{{ fmt(s.ci_low) }}, {{ fmt(s.ci_high) }}]</td><td>{{ s.k }}/{{ s.n }}</td><td>{{ s.reason or "" }}</td></tr>{% endfor %}
</tbody></table>{% endif %}
{% if r.failures %}<p>{{ r.failures|length }} clip/condition failure(s) (see results.json).</p>{% endif %}
"""


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _sfmt(x: float | None) -> str:
    return "-" if x is None else f"{x:+.2f}"


@register_section("battery")
@register_section("courtesy")
def battery_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"{entry['probe']}-{corpus}")
    cells = {(c["model"], c["condition"]): c for c in r["cells"]}
    diffs = {(d["model"], d["condition"]): d for d in r["differences"]}
    rows = [{"model": c["model"], "condition": c["condition"], "rate": c["accept_ref"], "ci_low": c["ci_low"],
             "ci_high": c["ci_high"]} for c in r["cells"] if c["accept_ref"] is not None]
    figs = []
    if rows:
        figs.append(ctx.figure(f"{anchor}-conditions.png",
                               plots.rates_by_group(rows, "condition", f"Trigger battery — {r['measure']} on {corpus}",
                                                    "accept-ref"),
                               "Accept-ref per model under each audio condition (Wilson 95%)"))
    html = ctx.env.from_string(_TEMPLATE).render(r=r, corpus=corpus or r["corpus"], cells=cells, diffs=diffs, fmt=_fmt, sfmt=_sfmt)
    tables = {f"{anchor}-cells.csv": to_csv(r["cells"], CELL_COLUMNS),
              f"{anchor}-differences.csv": to_csv(r["differences"], DIFF_COLUMNS)}
    if r["did"]:
        tables[f"{anchor}-did.csv"] = to_csv(r["did"], DID_COLUMNS)
    title = "Opening courtesy" if entry["probe"] == "courtesy" else "Trigger battery"
    return Section(f"{title} — {corpus}", anchor, html, tuple(figs), (), tables)
