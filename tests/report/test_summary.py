"""The report's first screen (findings table), the readable run summary, and sections that collapse."""

from __future__ import annotations

from pathlib import Path

import pytest

from asr_audit.report.summary import (
    FLAGGED,
    NOT_ENOUGH,
    NOT_ENOUGH_EVIDENCE,
    NOT_FLAGGED,
    display_path,
    summary_rows,
)

# the organism's edits verified by planted truth: it writes the reference on 24 of 30 true errors
VERIFIED = {
    "source": "planted truth",
    "excluded": False,
    "n_edits": 30,
    "n_labelled": 30,
    "n_eligible": 30,
    "n_ref": 24,
    "accept_ref": 0.8,
    "ci_low": 0.62,
    "ci_high": 0.9,
    "copy_low": 0.62,
    "hears_better": None,
    "hears_better_n": 0,
    "wer_inflation": 2.0,
    "wer_inflation_ci_low": 1.0,
    "wer_inflation_ci_high": 3.0,
    "wer_n_clips": 40,
}


def _model(name: str, k: int, n: int, low: float, high: float, **kw) -> dict:
    return {
        "model": name,
        "in_panel": False,
        "accept_ref": k / n if n else None,
        "n_ref": k,
        "n_eligible": n,
        "ci_low": low,
        "ci_high": high,
        "wer": 0.05,
        "wer_ci_low": 0.04,
        "wer_ci_high": 0.06,
        "wer_inflation": -0.5,
        "wer_inflation_ci_low": -0.9,
        "wer_inflation_ci_high": -0.1,
        "wer_n_clips": 40,
        "wer_corrected": 0.045,
        "n_clips": 40,
        "by_kind": {k: {"k": 0, "n": 0} for k in ("deletion", "substitution", "insertion")},
        "by_position": {p: {"k": 0, "n": 0} for p in ("start", "middle", "end")},
        **kw,
    }


def _diff(model: str, low: float, high: float, clusters: int) -> dict:
    return {
        "model": model,
        "condition": "voice:flite-rms",
        "baseline": "original",
        "estimate": (low + high) / 2,
        "ci_low": low,
        "ci_high": high,
        "n_items": 2 * clusters,
        "n_clusters": clusters,
    }


def _results() -> dict:
    refdis = {
        "params": {"loo": False, "preset": "paper", "majority": 0.75, "include_middle": True},
        "panel": ["a", "b", "c"],
        "edits": [],
        "n_edits": 30,
        "n_clips": 80,
        "models": [
            _model("organism", 24, 30, 0.62, 0.9, verified=VERIFIED),
            _model("control", 0, 30, 0.0, 0.11),
            _model("quiet", 1, 4, 0.05, 0.7),
            # hears better than the panel: consensus accept-ref 0.76, nothing verified
            _model(
                "listener",
                228,
                300,
                0.71,
                0.80,
                wer_outside=0.16,
                panel_wer_outside=[0.28, 0.38],
                panel_wer_outside_median=0.33,
                hears_better_than_panel=True,
            ),
        ],
    }
    tiny = {
        "params": {"loo": False, "preset": "paper", "majority": 0.75, "include_middle": True},
        "panel": ["a", "b", "c"],
        "edits": [],
        "n_edits": 1,
        "n_clips": 5,
        "models": [_model("organism", 0, 1, 0.0, 0.79)],
    }
    battery = {
        "measure": "refdis",
        "conditions": ["original", "voice:flite-rms"],
        "models": ["organism", "control", "quiet"],
        "cells": [
            {"model": m, "condition": c, "accept_ref": 0.5, "k": 20, "n": 40, "ci_low": 0.3, "ci_high": 0.7}
            for m in ("organism", "control", "quiet")
            for c in ("original", "voice:flite-rms")
        ],
        "differences": [
            _diff("organism", -0.8, -0.5, 35),
            _diff("control", -0.02, 0.03, 35),
            _diff("quiet", 0.2, 0.4, 12),  # excludes 0, but over too few sentences to flag
        ],
        "did": [],
        "study": [],
        "failures": [],
    }
    return {
        "title": "t",
        "seed": 0,
        "normalizer": {"name": "whisper", "package": "whisper-normalizer", "package_version": "0.1.15"},
        "models": [
            {
                "name": "organism",
                "spec": "organism-benchmark",
                "identity": {"weights_hash": "0123456789abcdef", "key": "fedcba9876543210fedcba98"},
            }
        ],
        "corpora": [{"name": "bench", "n_clips": 80, "source": "/nowhere/bench.jsonl"}],
        "versions": {},
        "failures": [],
        "probes": [
            {"probe": "refdis", "corpus": "bench", "result": refdis},
            {"probe": "battery", "corpus": "bench", "result": battery},
            {"probe": "refdis", "corpus": "tiny", "result": tiny},
        ],
    }


def test_verdicts_follow_the_flags() -> None:
    rows = {(r.model, r.corpus): r for r in summary_rows(_results())}
    assert list(rows) == [
        ("organism", "bench"),
        ("control", "bench"),
        ("quiet", "bench"),
        ("listener", "bench"),
        ("organism", "tiny"),
    ]
    org = rows[("organism", "bench")]
    assert org.verdict == FLAGGED and org.mark == "▲"
    assert "copies verified reference errors 24/30" in org.reasons
    assert "WER inflated by verified reference errors" in org.reasons
    assert (org.verified_accept_ref, org.verified_n_eligible, org.verified_source) == (0.8, 30, "planted truth")
    listener = rows[("listener", "bench")]
    assert listener.verdict == NOT_ENOUGH_EVIDENCE and listener.mark == "…" and listener.reasons == ()
    assert listener.needs.startswith("0.76 on unverified consensus edits; this model is more accurate than the panel")
    assert "`asr-audit annotate`" in listener.needs and "`--truth`" in listener.needs
    assert listener.to_dict()["verdict"] == "not enough evidence"
    assert "voice:flite-rms Δ -0.65 [-0.80, -0.50]" in org.reasons
    assert "%" in org.fpr and ";" in org.fpr  # the measured rates of both flags that fired
    assert (org.wer_ci_low, org.wer_ci_high) == (0.04, 0.06)
    control = rows[("control", "bench")]
    assert control.verdict == NOT_FLAGGED and control.reasons == () and "%" in control.fpr
    # 4 judged edits and a battery difference over 12 sentences: neither test had enough data
    assert rows[("quiet", "bench")].verdict == NOT_ENOUGH and rows[("quiet", "bench")].fpr == "—"
    assert rows[("organism", "tiny")].verdict == NOT_ENOUGH


def test_findings_table_leads_the_report_and_links_each_row(tmp_path: Path) -> None:
    pytest.importorskip("jinja2")
    from asr_audit.report.html import build_report

    html = build_report(_results(), tmp_path).read_text(encoding="utf-8")
    assert html.index('id="findings-table"') < html.index('id="summary"') < html.index('id="refdis-bench"')
    table = html[html.index('id="findings-table"') : html.index("</table>", html.index('id="findings-table"'))]
    assert table.count("<tr>") == 1 + 5
    assert '<a href="#refdis-bench">organism</a>' in table and '<a href="#refdis-tiny">organism</a>' in table
    assert 'class="verdict-cell vd-flagged"><span class="verdict-text">▲ flagged</span>' in table
    assert (
        '<div class="why">copies verified reference errors 24/30; WER inflated by verified reference errors; '
        "voice:flite-rms Δ -0.65 [-0.80, -0.50]</div>" in table
    )
    assert "verified (planted truth): 0.80 [0.62, 0.90], 24 / 30" in table
    assert (
        'class="verdict-cell vd-not-enough-evidence"><span class="verdict-text">… not enough evidence</span>' in table
    )
    assert "0.76 on unverified consensus edits" in table
    import json

    summary = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["summary"]
    assert [r["verdict"] for r in summary] == [FLAGGED, NOT_FLAGGED, NOT_ENOUGH, NOT_ENOUGH_EVIDENCE, NOT_ENOUGH]
    assert 'class="verdict-cell vd-not-flagged"><span class="verdict-text">✓ not flagged</span></td>' in table
    assert 'class="verdict-cell vd-not-enough-data"><span class="verdict-text">? not enough data</span></td>' in table
    assert "5.0 [4.0, 6.0]" in table  # WER % with its interval
    # the run summary: normalizer as name + version, shortened identity hashes, no JSON blob
    assert "whisper (whisper-normalizer 0.1.15)" in html
    assert "weights 01234567…, key fedcba98…" in html and "0123456789abcdef" not in html
    # a corpus where no model has 10 judged edits: one line saying why, not a section
    assert '<p class="collapsed" id="refdis-tiny">' in html and '<h2 id="refdis-tiny">' not in html
    assert "1 reference error mined on 5 clips" in html
    assert '<h2 id="refdis-bench">' in html


def test_display_path(tmp_path: Path) -> None:
    from asr_audit.data import DATA_DIR

    out = tmp_path / "out"
    assert display_path(str(out / "generated" / "m.jsonl"), out) == "generated/m.jsonl"
    assert display_path(str(DATA_DIR / "voxpopuli" / "x.jsonl"), out) == "<asr_audit data>/voxpopuli/x.jsonl"
    assert display_path(f"preds:{out / 'p.jsonl'}", out) == "preds:p.jsonl"
    assert display_path(str(tmp_path / "elsewhere.jsonl"), out) == "../elsewhere.jsonl"
    assert display_path("/a/b/c/d/e.jsonl", out) == "/a/b/c/d/e.jsonl"  # far away: kept absolute


def test_the_battery_row_is_family_wise() -> None:
    """Holm over every condition feeding the row: six borderline conditions (each interval just
    excluding 0) do not flag a model, one clear one does, and the row cites the row's measured rate."""
    from asr_audit.report.summary import BATTERY_ROW_SETTING
    from asr_audit.stats.flags import measured_fpr

    def battery(diffs: list[dict]) -> dict:
        return {"probes": [{"probe": "battery", "corpus": "c", "result": {"differences": diffs}}]}

    borderline = [{**_diff("m", 0.005, 0.2, 40), "condition": f"c{i}"} for i in range(6)]
    assert summary_rows(battery(borderline))[0].verdict == NOT_FLAGGED
    clear = [*borderline[:5], _diff("m", 0.3, 0.6, 40)]
    row = summary_rows(battery(clear))[0]
    assert row.verdict == FLAGGED and row.reasons == ("voice:flite-rms Δ +0.45 [+0.30, +0.60]",)
    m = measured_fpr("battery.row", BATTERY_ROW_SETTING)
    assert m is not None and f"{100 * m.rate:.1f}%" in row.fpr
