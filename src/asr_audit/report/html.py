"""The HTML report: ``report.html`` + ``results.json`` + ``tables/*.csv`` + ``plots/*``.

The report is built from the results dictionary a run writes (``results.json``), so it can be
rebuilt from that file alone. Each probe contributes a *section* through :func:`register_section`
(one line per probe); a probe without a registered section is listed with its raw numbers.
Every transcript goes through jinja2 autoescaping.

Anchors, table and plot file names come from :meth:`ReportContext.slug`, unique per report:
names that slug alike (corpora ``"a b"`` and ``"a-b"``, or two non-ASCII names) get a stable
suffix from a hash of the full name instead of overwriting each other's files.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_audit.errors import require
from asr_audit.report.tables import to_csv, to_json, write_text


@dataclass(frozen=True, slots=True)
class Figure:
    path: str  # relative to the report
    caption: str


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    anchor: str
    html: str  # already-escaped markup produced by a template
    figures: tuple[Figure, ...] = ()
    verdicts: tuple[dict[str, str], ...] = ()
    tables: Mapping[str, str] = field(default_factory=dict)  # csv file name -> csv text


# ids report.html.j2 itself uses, and the failures table's file stem
RESERVED_ANCHORS = frozenset({"summary", "verdicts", "failures"})


class ReportContext:
    """What a section renderer gets: the output folder, a template renderer, a figure writer."""

    def __init__(self, out_dir: Path, results: Mapping[str, Any]) -> None:
        self.out_dir = out_dir
        self.results = results
        self._slugs: dict[str, str] = {}  # text -> its slug in this report
        self._taken: set[str] = set(RESERVED_ANCHORS)
        jinja2 = require("jinja2", "report")
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader("asr_audit.report", "templates"),
            autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
            undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
        )

    def slug(self, text: str) -> str:
        """:func:`slug` of ``text``, unique in this report: the same text always gets the same slug;
        a different text whose slug is taken gets ``-<6 hex of its hash>`` appended."""
        if text in self._slugs:
            return self._slugs[text]
        base = out = slug(text)
        if out in self._taken:
            out = f"{base}-{hashlib.sha1(text.encode('utf-8', 'surrogatepass')).hexdigest()[:6]}"
            n = 2
            while out in self._taken:  # a hash-suffix clash: vanishingly rare, still resolved
                out, n = f"{base}-{hashlib.sha1(text.encode('utf-8', 'surrogatepass')).hexdigest()[:6]}-{n}", n + 1
        self._slugs[text] = out
        self._taken.add(out)
        return out

    def render(self, template: str, **kw: Any) -> str:
        return self.env.get_template(template).render(**kw)

    def figure(self, name: str, data: bytes, caption: str) -> Figure:
        rel = f"plots/{name}"
        path = self.out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return Figure(rel, caption)


SectionRenderer = Callable[[ReportContext, Mapping[str, Any]], Section]
_SECTIONS: dict[str, SectionRenderer] = {}


def register_section(probe: str) -> Callable[[SectionRenderer], SectionRenderer]:
    """Register the renderer for results of ``probe`` (one line per probe)."""

    def deco(fn: SectionRenderer) -> SectionRenderer:
        _SECTIONS[probe] = fn
        return fn

    return deco


def slug(text: str) -> str:
    """Lower-case ASCII letters and digits joined by ``-`` (accents folded); not unique: see
    :meth:`ReportContext.slug`.

    >>> slug("Café au lait / 2")
    'cafe-au-lait-2'
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-") or "x"


def _generic_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    html = ctx.render("generic.html.j2", body=to_json(entry.get("result", {})))
    return Section(f"{entry['probe']} — {entry.get('corpus', '')}", ctx.slug(f"{entry['probe']}-{entry.get('corpus', '')}"), html)


def _trusted(section: Section) -> Section:
    """Mark a section's HTML (rendered by an autoescaping template) as safe to embed."""
    from dataclasses import replace

    from markupsafe import Markup

    return replace(section, html=Markup(section.html))


def build_report(results: Mapping[str, Any], out_dir: str | Path) -> Path:
    """Write the report files for ``results`` into ``out_dir``; returns the ``report.html`` path."""
    from asr_audit.report import sections, sections_audio, sections_battery  # noqa: F401 - register the sections

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = ReportContext(out, results)
    built: list[Section] = []
    for entry in results.get("probes", []):
        renderer = _SECTIONS.get(entry["probe"], _generic_section)
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
        normalizer=norm.get("name", "") if isinstance(norm, Mapping) else norm,
        normalizer_detail=to_json(norm).strip(),
        models=results.get("models", []),
        corpora=results.get("corpora", []),
        versions=results.get("versions", {}),
        failures=failures,
        verdicts=verdicts,
        sections=[_trusted(s) for s in built],
    )
    return write_text(out / "report.html", html)
