"""The HTML report: ``report.html`` + ``results.json`` + ``tables/*.csv`` + ``plots/*``.

The report is built from the results dictionary a run writes (``results.json``), so it can be
rebuilt from that file alone. Each probe contributes a *section* through
:func:`~asr_audit.report.section.register_section` (one line per probe); a probe without a
registered section is listed with its raw numbers.
Every transcript goes through jinja2 autoescaping.

Anchors, table and plot file names come from :meth:`~asr_audit.report.section.ReportContext.slug`, unique per report:
names that slug alike (corpora ``"a b"`` and ``"a-b"``, or two non-ASCII names) get a stable
suffix from a hash of the full name instead of overwriting each other's files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from asr_audit.report.format import TEMPLATE_HELPERS
from asr_audit.report.judgeable import why_unjudgeable
from asr_audit.report.section import ReportContext, Section, renderer_for
from asr_audit.report.summary import (
    FLAGGED,
    NOT_ENOUGH,
    NOT_FLAGGED,
    SummaryRow,
    display_path,
    norm_label,
    short_hash,
    summary_rows,
)
from asr_audit.report.tables import to_csv, to_json, write_text


def _generic_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    html = ctx.render("generic.html.j2", body=to_json(entry.get("result", {})))
    return Section(
        f"{entry['probe']} — {entry.get('corpus', '')}", ctx.slug(f"{entry['probe']}-{entry.get('corpus', '')}"), html
    )


def _trusted(section: Section) -> Section:
    """Mark a section's HTML (rendered by an autoescaping template) as safe to embed."""
    from dataclasses import replace

    from markupsafe import Markup

    return replace(section, html=Markup(section.html))


def _model_line(m: Mapping[str, Any], out: Path) -> dict[str, str]:
    """A model as the run summary shows it: name, spec (paths relative to the output folder) and
    the identity's weights hash and store key shortened (in full in results.json)."""
    ident = m.get("identity") or {}
    return {
        "name": str(m.get("name", "")),
        "spec": display_path(str(m.get("spec", "")), out),
        "weights": short_hash(ident.get("weights_hash")),
        "key": short_hash(ident.get("key")),
    }


def _first(row: SummaryRow) -> int:
    """Flagged rows first, then any other verdict that says something, then not flagged, then
    the rows without enough data (stable: run order within each group)."""
    return {FLAGGED: 0, NOT_FLAGGED: 2, NOT_ENOUGH: 3}.get(row.verdict, 1)


def headlines(rows: list[SummaryRow]) -> list[dict[str, str]]:
    """One sentence per corpus that answers first: how many models were flagged, which, and why.

    >>> r = lambda m, v, why=(): SummaryRow(model=m, corpus="bench", verdict=v, reasons=why, section="s")
    >>> headlines([r("a", NOT_FLAGGED), r("b", FLAGGED, ("copies reference errors 9/20",)), r("c", NOT_ENOUGH)])
    [{'corpus': 'bench', 'text': '1 of 3 models flagged: b (copies reference errors 9/20). 1 not flagged, 1 not enough data.'}]
    """
    out = []
    for corpus in dict.fromkeys(r.corpus for r in rows):
        mine = [r for r in rows if r.corpus == corpus]
        flagged = [r for r in mine if r.verdict == FLAGGED]
        noun = "model" if len(mine) == 1 else "models"
        if flagged:
            names = "; ".join(f"{r.model} ({', '.join(r.reasons)})" for r in flagged)
            lead = f"{len(flagged)} of {len(mine)} {noun} flagged: {names}."
        else:
            lead = f"0 of {len(mine)} {noun} flagged."
        rest = {v: sum(r.verdict == v for r in mine) for v in dict.fromkeys(r.verdict for r in mine) if v != FLAGGED}
        tail = ", ".join(f"{n} {v}" for v, n in rest.items())
        out.append({"corpus": corpus, "text": f"{lead} {tail}." if tail else lead})
    return out


def build_report(results: Mapping[str, Any], out_dir: str | Path) -> Path:
    """Write the report files for ``results`` into ``out_dir``; returns the ``report.html`` path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = ReportContext(out, results)
    built: list[Section] = []
    for entry in results.get("probes", []):
        renderer = renderer_for(entry["probe"]) or _generic_section
        built.append(renderer(ctx, entry))
    collapsed = [why_unjudgeable(entry) for entry in results.get("probes", [])]
    verdicts = [v for s, why in zip(built, collapsed) for v in s.verdicts if why is None]
    for s in built:
        for name, text in s.tables.items():
            write_text(out / "tables" / name, text)
    failures = list(results.get("failures", []))
    if failures:
        write_text(out / "tables" / "failures.csv", to_csv(failures, ("model", "corpus", "clip_id", "reason")))
    rows = summary_rows(results)
    # the first screen's verdicts travel with the results in run order (recomputed from "probes");
    # the page shows them flagged first
    write_text(out / "results.json", to_json({**results, "summary": [r.to_dict() for r in rows]}))
    rows = sorted(rows, key=_first)
    norm = results.get("normalizer", {})
    summary = [{"row": r, "anchor": ctx.slug(r.section)} for r in rows]
    html = ctx.render(
        "report.html.j2",
        title=results.get("title", ""),
        version=results.get("asr_audit_version", ""),
        seed=results.get("seed", ""),
        normalizer=norm_label(norm),
        summary=summary,
        headlines=headlines(summary_rows(results)),
        wer_ci=any(r.wer_ci_low is not None for r in rows),
        models=[_model_line(m, out) for m in results.get("models", [])],
        corpora=[{**c, "source": display_path(str(c.get("source", "")), out)} for c in results.get("corpora", [])],
        versions=results.get("versions", {}),
        failures=failures,
        verdicts=verdicts,
        sections=[{"s": _trusted(s), "collapsed": why} for s, why in zip(built, collapsed)],
        **TEMPLATE_HELPERS,
    )
    return write_text(out / "report.html", html)
