"""The HTML report in a real headless Chromium: no console errors, images load, transcripts escaped."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cdp import HEADLESS_FLAGS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).parents[2] / "artifacts"


def _convention_preds(folder: Path) -> Path:
    """Twelve synthetic clips whose references alternate Mister / Mr (as in test_golden.py): a model
    that copies the reference's spelling and one that always writes Mr, so the switch rate is
    defined (on the VoxPopuli examples it is not, and that section collapses to one line)."""
    folder.mkdir(parents=True, exist_ok=True)
    refs = {f"c{i:02d}": f"Thank you, {'Mister' if i % 2 else 'Mr'} President, item {i}." for i in range(12)}
    for name, hyp in (("copy", lambda t: t), ("habit", lambda t: t.replace("Mister", "Mr"))):
        lines = [json.dumps({"id": c, "text": t, "pred_text": hyp(t)}) for c, t in refs.items()]
        (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _results(tmp: Path) -> dict:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL
    from asr_audit.probes.predfiles.ortho import switch_rate
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    preds = load_predictions(VOXPOPULI_EXAMPLES)
    r: dict[str, Any] = run_refdis(preds, VOXPOPULI_PANEL, preset_params("anchor")).to_dict()
    # a hostile transcript: must show as text, never run
    r["edits"][0]["renderings"]["distil-small.en"] = "<script>window.__pwned = 1; console.error('pwned')</script>"
    return {
        "asr_audit_version": "test",
        "seed": 0,
        "normalizer": {"name": "whisper"},
        "models": [{"name": m, "spec": f"preds:{m}"} for m in preds.models],
        "corpora": [{"name": "vox", "n_clips": 150, "source": "fixture"}],
        "versions": {},
        "failures": [{"model": "m", "corpus": "vox", "clip_id": "c1", "reason": "audio is empty"}],
        "probes": [
            {"probe": "refdis", "corpus": "vox", "result": r},
            {"probe": "switch_rate", "corpus": "vox", "result": switch_rate(preds, min_per_arm=1).to_dict()},
            {
                "probe": "switch_rate",
                "corpus": "conventions",
                "result": switch_rate(
                    load_predictions(_convention_preds(tmp / "conventions")), min_per_arm=2
                ).to_dict(),
            },
        ],
    }


def test_report_files_and_escaping(tmp_path: Path) -> None:
    from asr_audit.report.html import build_report

    out = tmp_path / "report"
    html_path = build_report(_results(tmp_path), out)
    html = html_path.read_text()
    assert "<script>window.__pwned" not in html and "&lt;script&gt;window.__pwned" in html
    for rel in (
        "results.json",
        "tables/refdis-vox.csv",
        "tables/switch-vox.csv",
        "tables/failures.csv",
        "plots/refdis-vox-wer-vs-acceptref.png",
    ):
        assert (out / rel).is_file(), rel
    assert json.loads((out / "results.json").read_text())["probes"][0]["probe"] == "refdis"
    # rebuilt from the same results: byte-identical files
    again = tmp_path / "again"
    build_report(_results(tmp_path), again)
    for rel in ("report.html", "results.json", "tables/refdis-vox.csv", "plots/refdis-vox-wer-vs-acceptref.png"):
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel


def _page_state(flags: list[str], size: str, page: Path, prefix: str) -> tuple[dict, subprocess.CompletedProcess[str]]:
    """Load ``page`` in headless Chromium at ``size``; the JSON its script wrote into the title
    after ``prefix``, and the run (its stderr holds the console lines)."""
    assert CHROMIUM is not None
    dump = subprocess.run(
        [CHROMIUM, *flags, f"--window-size={size}", "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    title = dump.stdout.split("<title>")[1].split("</title>")[0]
    assert title.startswith(prefix), title
    return json.loads(title[len(prefix) :].replace("&quot;", '"')), dump


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed (scripts/install.sh installs it)")
def test_report_in_headless_chromium(tmp_path: Path) -> None:
    from asr_audit.report.html import build_report

    out = tmp_path / "report"
    html_path = build_report(_results(tmp_path), out)
    # a probe page loads the report in an iframe-free way: we append a checker script to a copy
    checker = out / "check.html"
    page = html_path.read_text().replace(
        "</body>",
        """<script>
window.addEventListener('load', function () {
  var imgs = Array.from(document.images);
  var broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).map(function (i) { return i.src; });
  var shown = document.body.textContent.indexOf("<script>window.__pwned") >= 0;
  var table = document.getElementById('findings-table');
  var box = table ? table.getBoundingClientRect() : null;
  var verdicts = table ? Array.from(table.querySelectorAll('td.verdict-cell')).map(function (td) {
    return [td.querySelector('.verdict-text').textContent.trim(), getComputedStyle(td).backgroundColor];
  }) : [];
  document.title = 'CHECK ' + JSON.stringify({images: imgs.length, broken: broken, pwned: !!window.__pwned, shown: shown,
    top: box && box.top, bottom: box && box.bottom, right: box && box.right, height: window.innerHeight,
    width: window.innerWidth, scrolled: window.scrollY, verdicts: verdicts});
});
</script></body>""",
    )
    checker.write_text(page)
    flags = [
        *HEADLESS_FLAGS,
        "--disable-quic",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    state, dump = _page_state(flags, "1280,800", checker, "CHECK ")
    assert state["images"] >= 3 and state["broken"] == []
    assert state["pwned"] is False and state["shown"] is True
    # the first screen at 1280x800 holds the headline and the whole summary table: no scrolling to
    # read the answer
    assert state["width"] == 1280 and 0 < state["height"] <= 800, state
    assert state["scrolled"] == 0 and state["top"] >= 0, state
    assert state["bottom"] <= state["height"] and state["right"] <= state["width"], state
    # one row per model of the refdis result; the verdict is words (readable without colour) and colour
    assert len(state["verdicts"]) == 5, state["verdicts"]
    for text, colour in state["verdicts"]:
        assert any(text.endswith(v) for v in ("not flagged", "flagged", "not enough data")), text
        assert colour not in ("rgba(0, 0, 0, 0)", "transparent"), (text, colour)
    # the report logs nothing: any console line (console.error, an uncaught exception) is a failure
    console_lines = [line for line in dump.stderr.splitlines() if ":CONSOLE" in line]
    assert console_lines == [], console_lines
    ARTIFACTS.mkdir(exist_ok=True)
    assert CHROMIUM is not None
    # the whole page, the first screen at 1280x800, and a phone's (390 px wide)
    for name, size in (
        ("report-screenshot", "1280,2400"),
        ("report-first-screen", "1280,800"),
        ("report-phone", "390,844"),
    ):
        shot = ARTIFACTS / f"{name}.png"
        subprocess.run(
            [CHROMIUM, *flags, f"--window-size={size}", f"--screenshot={shot}", html_path.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert shot.is_file() and shot.stat().st_size > 10_000, name
    # on the phone the headline wraps inside the screen and the findings table scrolls in its own
    # box: the answer is readable without scrolling the page sideways
    narrow = checker.with_name("narrow.html")
    narrow.write_text(
        html_path.read_text().replace(
            "</body>",
            """<script>
window.addEventListener('load', function () {
  var h = document.querySelector('p.headline').getBoundingClientRect();
  var box = document.getElementById('findings-box');
  document.title = 'NARROW ' + JSON.stringify({width: window.innerWidth, headline_right: h.right,
    box_right: box.getBoundingClientRect().right, table_wider: box.scrollWidth > box.clientWidth,
    box_scrolls: ['auto', 'scroll'].indexOf(getComputedStyle(box).overflowX) >= 0});
});
</script></body>""",
        )
    )
    state, _ = _page_state(flags, "390,844", narrow, "NARROW ")
    assert state["headline_right"] <= state["width"] and state["box_right"] <= state["width"], state
    assert state["table_wider"] and state["box_scrolls"], state  # the wide table scrolls in its box
