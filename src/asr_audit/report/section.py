"""What a report section is, and the registry of section renderers (one per probe).

:mod:`asr_audit.report.html` builds the report from the registered renderers; the section
modules (``sections*.py``) register theirs with :func:`register_section`. Both import this
module, never each other.

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
from asr_audit.registry import Registry
from asr_audit.report.plots import model_colours


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
RESERVED_ANCHORS = frozenset({"summary", "verdicts", "failures", "findings", "findings-table"})


class ReportContext:
    """What a section renderer gets: the output folder, a template renderer, a figure writer,
    and the report's unique slugs."""

    def __init__(self, out_dir: Path, results: Mapping[str, Any]) -> None:
        self.out_dir = out_dir
        self.results = results
        self._slugs: dict[str, str] = {}  # text -> its slug in this report
        self._taken: set[str] = set(RESERVED_ANCHORS)
        # one colour per model in every plot, in the run's model order
        self.colours = model_colours([str(m.get("name", "")) for m in results.get("models", [])])
        jinja2 = require("jinja2", "report")
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader("asr_audit.report", "templates"),
            autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
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
# modules whose import registers the built-in sections
SECTION_MODULES = (
    "asr_audit.report.sections",
    "asr_audit.report.sections_audio",
    "asr_audit.report.sections_battery",
    "asr_audit.report.gate",
    "asr_audit.report.sections_validity",
    "asr_audit.report.sections_mech",
)
SECTIONS: Registry[SectionRenderer] = Registry(
    "report section", fix="register one with asr_audit.report.section.register_section", modules=SECTION_MODULES
)


def register_section(probe: str) -> Callable[[SectionRenderer], SectionRenderer]:
    """Register the renderer for results of ``probe`` (one line per probe)."""
    return SECTIONS.register(probe)


def slug(text: str) -> str:
    """Lower-case ASCII letters and digits joined by ``-`` (accents folded); not unique: see
    :meth:`ReportContext.slug`.

    >>> slug("Café au lait / 2")
    'cafe-au-lait-2'
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-") or "x"


def renderer_for(probe: str) -> SectionRenderer | None:
    """The renderer registered for ``probe`` (``None``: the report lists its raw numbers)."""
    return SECTIONS.get(probe) if probe in SECTIONS else None
