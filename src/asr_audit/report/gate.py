"""The regression gate's renderings: a short Markdown summary for a pull-request comment, a table.

Renderers read the gate's result dictionary only (``GateResult.to_dict()``) and return strings.
Model names and file paths are data: Markdown control characters in them are escaped, so a
model called ``a|b`` or ``<img>`` cannot break or inject into the comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rich.table import Table

from asr_audit.report.format import TEMPLATE_HELPERS, UNDEFINED, fmt_num
from asr_audit.report.section import ReportContext, Section, register_section

LABELS = {"accept_ref": "accept-ref", "wer_inflation": "WER inflation", "wer": "WER"}
ICONS = {"pass": "✅", "regression": "❌", "undecided": "⚠️"}
# the null-calibration setting of the gate as the verb runs it (no verified edits: WER only)
GATE_SETTING = "all worlds: equal models, default min effects, as shipped (no verification: WER only)"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def md_escape(text: object) -> str:
    """``text`` with Markdown control characters backslash-escaped and line breaks flattened.

    >>> md_escape("org/model|v2 <b>")
    'org/model\\\\|v2 \\\\<b\\\\>'
    """
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _pts(x: Any, signed: bool = False) -> str:
    return fmt_num(x, 2, signed=signed)


def _bound(t: Mapping[str, Any]) -> str:
    if t.get("lower_bound") is None:
        return UNDEFINED
    return f"≥ {_pts(t['lower_bound'], signed=True)}"


def gate_markdown(d: Mapping[str, Any]) -> str:
    """The gate's decision as a short Markdown comment: headline, one row per measure, settings."""
    decision = str(d["decision"])
    opts = d["options"]
    cand, base = md_escape(d["candidate"]), md_escape(d["baseline"])
    headline = {
        "pass": f"no regression of **{cand}** against **{base}**",
        "regression": f"**{cand}** regresses against **{base}**",
        "undecided": f"undecided: too little data to compare **{cand}** with **{base}**",
    }[decision]
    lines = [
        f"### {ICONS[decision]} asr-audit gate: {headline}",
        "",
        "| measure (points) | candidate | baseline | difference | one-sided bound | min effect | result |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for t in d["tests"]:
        result = t["status"] if t["status"] != "not tested" else f"not tested ({md_escape(t.get('reason', ''))})"
        if t["status"] == "regression":
            result = "**regression**"
        lines.append(
            f"| {LABELS[t['measure']]} | {_pts(t['candidate'])} | {_pts(t['baseline'])} | "
            f"{_pts(t['difference'], signed=True)} | {_bound(t)} | {_pts(t['min_effect'])} | {result} |"
        )
    n_tested = sum(t["status"] != "not tested" for t in d["tests"])
    mode = (
        f"panel {md_escape(', '.join(d['panel']))}" if d["mode"] == "panel" else "two-reference (corrected references)"
    )
    lines += [
        "",
        f"Higher is worse for every measure. A regression: the paired cluster-bootstrap lower bound of "
        f"candidate − baseline exceeds the minimum effect, one-sided at level {opts['level']:g} "
        f"(Bonferroni over {n_tested} tested measure(s)). {d['n_clips']} clips, clustered by "
        f"{md_escape(d['clustering'])}; {d['n_edits']} mined edits ({mode}); normalizer "
        f"{md_escape(d['normalizer'].get('label', d['normalizer'].get('name', '?')))}; "
        f"{opts['bootstrap_resamples']} resamples, seed {d['seed']}.",
    ]
    return "\n".join(lines) + "\n"


def gate_table(d: Mapping[str, Any]) -> Table:
    """The gate's tests as a terminal table (points)."""
    t = Table(title=f"gate: {d['candidate']} vs {d['baseline']} — {d['decision']}")
    for col in ("measure", "candidate", "baseline", "difference", "lower bound", "min effect", "alpha", "result"):
        t.add_column(col, justify="left" if col in ("measure", "result") else "right")
    for r in d["tests"]:
        t.add_row(
            LABELS[r["measure"]],
            _pts(r["candidate"]),
            _pts(r["baseline"]),
            _pts(r["difference"], signed=True),
            _pts(r["lower_bound"], signed=True),
            _pts(r["min_effect"]),
            fmt_num(r["alpha"], 4),
            r["status"] if r["status"] != "not tested" else f"not tested: {r.get('reason', '')}",
        )
    return t


GATE_CSV_COLUMNS = (
    "measure",
    "candidate",
    "baseline",
    "difference",
    "lower_bound",
    "upper_bound",
    "alpha",
    "min_effect",
    "p_value",
    "n_clusters",
    "status",
    "reason",
)


@register_section("gate")
def gate_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    """The report's section for a run with ``[probes.gate]``: the decision and one row per measure."""
    from asr_audit.report.tables import to_csv
    from asr_audit.stats.flags import fpr_note

    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"gate-{corpus}")
    headline = {
        "pass": f"pass: no regression of {r['candidate']} against {r['baseline']}",
        "regression": f"regression: {r['candidate']} is worse than {r['baseline']}",
        "undecided": "undecided: too little data to test any measure",
    }[r["decision"]]
    html = ctx.render(
        "gate.html.j2",
        r=r,
        headline=headline,
        labels=LABELS,
        fpr_note=fpr_note("gate.regression", GATE_SETTING),
        **TEMPLATE_HELPERS,
    )
    rows = [{k: t.get(k) for k in GATE_CSV_COLUMNS} for t in r["tests"]]
    return Section(
        f"Regression gate — {corpus}", anchor, html, tables={f"{anchor}.csv": to_csv(rows, GATE_CSV_COLUMNS)}
    )
