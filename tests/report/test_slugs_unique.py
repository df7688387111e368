"""Names that slug alike never share a table, plot or anchor in one report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("jinja2")

from asr_audit.report.html import build_report
from asr_audit.report.section import ReportContext, slug

CORPORA = ["a b", "a-b", "A_B", "日本語", "中文", "Ελληνικά", "café", "cafe"]


def _results() -> dict:
    probes = [
        {
            "probe": "transcribe",
            "corpus": c,
            "result": {"models": [{"model": f"m-{i}", "n_clips": i + 1, "n_failed": 0, "wer": 0.1 * i}]},
        }
        for i, c in enumerate(CORPORA)
    ]
    probes.append({"probe": "mystery", "corpus": "a b", "result": {"x": 1}})
    probes.append({"probe": "mystery", "corpus": "a-b", "result": {"x": 2}})
    return {"title": "t", "probes": probes, "failures": [], "models": [], "corpora": []}


def test_every_section_gets_its_own_table_and_anchor(tmp_path: Path) -> None:
    report = build_report(_results(), tmp_path).read_text()
    tables = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert len(tables) == len(CORPORA), tables  # one transcribe table per corpus, none overwritten
    contents = {(tmp_path / "tables" / t).read_text() for t in tables}
    assert len(contents) == len(CORPORA)
    anchors = re.findall(r'<h2 id="([^"]+)"', report)
    assert len(anchors) == len(set(anchors)), anchors
    assert sum(a not in ("summary", "verdicts", "failures") for a in anchors) == len(CORPORA) + 2


def test_clean_names_keep_their_plain_slug_and_suffixes_are_stable(tmp_path: Path) -> None:
    ctx = ReportContext(tmp_path, {})
    first = [ctx.slug(f"refdis-{c}") for c in CORPORA]
    assert first[0] == "refdis-a-b" and len(set(first)) == len(first)
    assert all(re.fullmatch(r"[a-z0-9-]+", s) for s in first)
    assert [ctx.slug(f"refdis-{c}") for c in CORPORA] == first  # same text, same slug
    again = ReportContext(tmp_path, {})
    assert [again.slug(f"refdis-{c}") for c in CORPORA] == first  # stable across reports
    assert slug("café") == "cafe"
