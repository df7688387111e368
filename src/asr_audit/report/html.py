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
from asr_audit.report.summary import display_path, norm_label, short_hash, summary_rows
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
    # the first screen's verdicts travel with the results (they are recomputed from "probes")
    write_text(out / "results.json", to_json({**results, "summary": [r.to_dict() for r in rows]}))
    norm = results.get("normalizer", {})
    summary = [{"row": r, "anchor": ctx.slug(r.section)} for r in rows]
    html = ctx.render(
        "report.html.j2",
        title=results.get("title", ""),
        version=results.get("asr_audit_version", ""),
        seed=results.get("seed", ""),
        normalizer=norm_label(norm),
        summary=summary,
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
