"""``asr-audit annotate`` in a real headless Chromium (DevTools protocol over a pipe, tests/support/cdp.py).

On a tiny real set (flite speaks 30 sentences whose references carry planted edits; 60 mined
edits, a stratified sample of 50): the page loads with nothing from the network, the audio has a
duration and plays on arrival, 50 edits are labelled by keyboard alone (one key each, the right
answer read off the blind A/B order), the server is killed mid-way and restarted, the page
reloads and resumes without losing a label, undo takes one back, the labels export, and
``refdis --labels`` prints the miner's precision and verified accept-ref with intervals.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from annotate_fixture import build_label_set
from cdp import CHROMIUM, Browser

ARTIFACTS = Path(__file__).parents[2] / "artifacts"
SAMPLE, SEED = 50, 3

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed (scripts/install.sh installs it)"),
    pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed (scripts/install.sh)"),
]


def _refdis_json(preds: Path, out: Path) -> Path:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    result = run_refdis(load_predictions(preds), ["p1", "p2", "p3"], preset_params("anchor", loo=False), seed=0)
    out.write_text(json.dumps(result.to_dict()), encoding="utf-8")
    return out


def _serve(args: list[str]) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "asr_audit", "annotate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "http://127.0.0.1:" in line:
            return proc, int(line.split("http://127.0.0.1:")[1].split("/")[0])
    raise AssertionError(f"annotate exited ({proc.wait()}) without serving")


def _answer(browser: Browser, sample: list, truth: dict[str, bool]) -> str:
    """The key a careful listener presses for the edit on screen: the rendering that was said."""
    index = int(browser.js("document.body.dataset.index"))
    item = sample[index]
    from asr_audit.annotate.items import blind_order

    reference_first = blind_order(item.key, SEED)
    said_reference = not truth[item.edit["clip_id"]]  # the reference is right where nothing was planted in it
    return "1" if said_reference == reference_first else "2"


def test_label_fifty_edits_by_keyboard(tmp_path: Path) -> None:
    from asr_audit.probes.predfiles.verified_labels import draw_sample

    data = build_label_set(tmp_path / "set")
    edits = _refdis_json(data.preds, tmp_path / "refdis.json")
    sample = draw_sample(json.loads(edits.read_text()), SAMPLE, SEED)
    labels, store = tmp_path / "labels.sqlite", tmp_path / "store.sqlite3"
    args = ["--edits", str(edits), "--audio-root", str(data.audio), "--labels", str(labels)]
    args += ["--sample", str(SAMPLE), "--seed", str(SEED), "--annotator", "tester", "--store", str(store)]
    server, port = _serve(args)
    url = f"http://127.0.0.1:{port}/"
    try:
        with Browser(tmp_path / "profile") as browser:
            browser.goto(url)
            browser.wait("document.body.dataset.state === 'ready'")
            assert browser.js("document.getElementById('progress').textContent") == f"1 of {SAMPLE}"
            assert browser.js("document.getElementById('annotator').textContent") == "tester"
            assert browser.wait("document.getElementById('audio').duration") > 0.5
            # blind: the page names neither side, and no model
            text = browser.js("document.body.innerText")
            assert "p1" not in text and "copier" not in text and "reference is right" not in text
            ARTIFACTS.mkdir(exist_ok=True)
            browser.screenshot(ARTIFACTS / "annotate-page.png")
            seconds = 0.0
            for n in range(SAMPLE):
                if n == 20:  # undo: the previous edit comes back, and is labelled again
                    before = browser.js("document.body.dataset.index")
                    browser.press("u")
                    browser.wait(
                        f"document.body.dataset.state === 'ready' && document.body.dataset.index !== '{before}'"
                    )
                    assert browser.js("document.getElementById('progress').textContent") == f"20 of {SAMPLE}"
                    browser.press(_answer(browser, sample, data.reference_wrong))
                    browser.wait(f"document.body.dataset.index === '{before}'")
                if n == 10:  # the whole clip on demand, by a click: longer than the edit's window
                    window = browser.wait("document.getElementById('audio').duration")
                    browser.click("#whole")
                    whole = browser.wait(
                        "!document.getElementById('clip').hidden && document.getElementById('clip').duration"
                    )
                    assert whole > window, (whole, window)
                if n == 30:  # the server dies; a new one on the same port resumes from the labels file
                    server.send_signal(signal.SIGKILL)
                    server.wait()
                    server, _ = _serve([*args, "--port", str(port)])
                    browser.reload()
                    browser.wait("document.body.dataset.state === 'ready'")
                    assert browser.js("document.getElementById('progress').textContent") == f"31 of {SAMPLE}"
                t0 = time.perf_counter()
                index = browser.wait("document.body.dataset.state === 'ready' && document.body.dataset.index")
                browser.wait(f"document.body.dataset.played === '{index}'")  # the audio played on arrival
                browser.press(_answer(browser, sample, data.reference_wrong))
                browser.wait(f"document.body.dataset.index !== '{index}'")
                seconds += time.perf_counter() - t0
            browser.wait("document.body.dataset.state === 'done'")
            exported = browser.js("fetch('/api/export').then(r => r.json())")
            assert browser.console_errors() == []
        print(f"\nlabelled {SAMPLE} edits by keyboard in {seconds:.1f} s (browser + server, no listening time)")
        (ARTIFACTS / "annotate-timing.txt").write_text(f"{SAMPLE} edits by keyboard: {seconds:.2f} s\n")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    rows = exported["labels"]
    assert len(rows) == SAMPLE and {r["annotator"] for r in rows} == {"tester"}
    assert {r["edit_key"] for r in rows} == {s.key for s in sample}
    assert all(
        abs(r["weight"] - s.weight) < 1e-9
        for r, s in zip(sorted(rows, key=lambda r: r["edit_key"]), sorted(sample, key=lambda s: s.key))
    )

    out = subprocess.run(
        [sys.executable, "-m", "asr_audit", "refdis", "--preds", str(data.preds), "--panel", "p1,p2,p3"]
        + ["--no-loo", "--no-text-cache", "--labels", str(labels)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    precision = next(line for line in lines if line.startswith("miner precision"))
    assert "[" in precision and f"(n = {SAMPLE})" in precision, precision
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("accept-ref on verified edits")) :]
    copier = next(line for line in table if line.startswith("│ copier"))
    listener = next(line for line in table if line.startswith("│ listener"))
    assert copier.split("│")[2].strip() == "1.000" and listener.split("│")[2].strip() == "0.000", (copier, listener)
    assert copier.count("[") == 2 and listener.count("[") == 2, (copier, listener)
