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

from asr_audit.report.section import ReportContext, Section, renderer_for
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


def build_report(results: Mapping[str, Any], out_dir: str | Path) -> Path:
    """Write the report files for ``results`` into ``out_dir``; returns the ``report.html`` path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = ReportContext(out, results)
    built: list[Section] = []
    for entry in results.get("probes", []):
        renderer = renderer_for(entry["probe"]) or _generic_section
        built.append(renderer(ctx, entry))
    verdicts = [v for s in built for v in s.verdicts]
    for s in built:
        for name, text in s.tables.items():
            write_text(out / "tables" / name, text)
    failures = list(results.get("failures", []))
    if failures:
        write_text(out / "tables" / "failures.csv", to_csv(failures, ("model", "corpus", "clip_id", "reason")))
    write_text(out / "results.json", to_json(results))
    norm = results.get("normalizer", {})
    html = ctx.render(
        "report.html.j2",
        title=results.get("title", ""),
        version=results.get("asr_audit_version", ""),
        seed=results.get("seed", ""),
        normalizer=norm.get("label", norm.get("name", "")) if isinstance(norm, Mapping) else norm,
        normalizer_detail=to_json(norm).strip(),
        models=results.get("models", []),
        corpora=results.get("corpora", []),
        versions=results.get("versions", {}),
        failures=failures,
        verdicts=verdicts,
        sections=[_trusted(s) for s in built],
    )
    return write_text(out / "report.html", html)
