"""The labelling session and its 127.0.0.1 server over plain HTTP (the browser test drives the page)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import wave
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import pytest
from annotate_fixture import build_label_set

from asr_audit.errors import ConfigError

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "flite"], capture_output=True).returncode != 0, reason="flite is not installed"
)


@pytest.fixture(scope="module")
def labelset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    root = tmp_path_factory.mktemp("annotate")
    data = build_label_set(root / "set", n_clips=6)
    result = run_refdis(load_predictions(data.preds), ["p1", "p2", "p3"], preset_params("anchor", loo=False))
    edits = root / "refdis.json"
    edits.write_text(json.dumps(result.to_dict()))
    return edits, data.audio


def _session(labelset: tuple[Path, Path], db: Path, who: str = "ann", sample: int | None = None):
    from asr_audit.annotate.server import prepare
    from asr_audit.store.labels import LabelStore

    edits, audio = labelset
    return prepare(edits, audio, LabelStore(db), sample=sample, seed=0, annotator=who)


@pytest.fixture
def served(labelset: tuple[Path, Path], tmp_path: Path) -> Iterator[tuple[str, object]]:
    from asr_audit.annotate.server import make_server

    session = _session(labelset, tmp_path / "labels.sqlite")
    server = make_server(session)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", session
    finally:
        server.shutdown()
        server.server_close()


def _get(url: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def _post(url: str, data: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(data).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_page_state_label_undo_audio(served: tuple[str, object]) -> None:
    base, session = served
    status, headers, page = _get(base + "/")
    assert status == 200 and b"<audio" in page
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert b"http://" not in page and b"https://" not in page  # no network asset
    state = json.loads(_get(base + "/api/state")[2])
    assert state["done"] == 0 and state["n"] == 12 and state["item"]["index"] == 0
    assert {o["name"] for o in state["item"]["options"]} == {"A", "B"}
    # the window is a cut of the whole clip, both valid WAV
    _, _, window = _get(base + "/audio/edit/0.wav")
    _, _, whole = _get(base + "/audio/clip/0.wav")
    with wave.open(BytesIO(window)) as w, wave.open(BytesIO(whole)) as c:
        assert w.getframerate() == 16000 and 0 < w.getnframes() <= c.getnframes()
    status, after = _post(base + "/api/label", {"index": 0, "choice": "B"})
    assert status == 200 and after["done"] == 1 and after["item"]["index"] == 1
    status, back = _post(base + "/api/undo", {})
    assert back["done"] == 0 and back["item"]["index"] == 0
    assert _post(base + "/api/label", {"index": 0, "choice": "maybe"})[0] == 400
    assert _post(base + "/api/label", {"index": 99, "choice": "A"})[0] == 400
    assert _get(base + "/audio/edit/99.wav")[0] == 400
    assert _get(base + "/etc/passwd")[0] == 404
    # a page from another origin (DNS rebinding) gets nothing
    assert _get(base + "/api/state", host="evil.example:80")[0] == 403


def test_choices_are_recorded_unblinded_and_resume(labelset: tuple[Path, Path], tmp_path: Path) -> None:
    from asr_audit.store.labels import PANEL, REFERENCE, open_labels

    db = tmp_path / "labels.sqlite"
    s = _session(labelset, db, sample=5)
    first = s.items[0]
    s.label(0, "A")
    s.label(1, "cant-tell")
    with open_labels(db) as store:
        rows = store.rows()
    assert rows[0].choice == (REFERENCE if first.reference_first else PANEL)
    assert rows[0].edit_key == first.key and rows[0].run_hash == s.run_hash
    assert rows[1].choice == "cant-tell" and all(r.weight == pytest.approx(12 / 5, rel=0.5) for r in rows)
    again = _session(labelset, db, sample=5)  # a new server on the same file resumes
    assert again.state()["done"] == 2 and [i.key for i in again.items] == [i.key for i in s.items]
    other = _session(labelset, db, who="second", sample=5)  # a second annotator starts at the beginning
    assert other.state()["done"] == 0


def test_refuses_without_audio(labelset: tuple[Path, Path], tmp_path: Path) -> None:
    from asr_audit.annotate.server import prepare
    from asr_audit.store.labels import LabelStore

    edits, _ = labelset
    with pytest.raises(ConfigError, match="needs the clips' audio"):
        prepare(edits, None, LabelStore(tmp_path / "l.sqlite"), sample=None, seed=0, annotator="a")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no audio for 6 of 6 clips"):
        prepare(edits, tmp_path / "empty", LabelStore(tmp_path / "l.sqlite"), sample=None, seed=0, annotator="a")
    out = subprocess.run(
        [sys.executable, "-m", "asr_audit", "annotate", "--edits", str(edits), "--labels", str(tmp_path / "x.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "--audio-root" in out.stderr


def test_windows_from_word_timings_even_where_the_reference_cannot_be_aligned(
    labelset: tuple[Path, Path], tmp_path: Path
) -> None:
    """sphinx cannot align some references that misname a word (the planted errors); their clips
    are aligned with the panel's text instead, so every edit gets a window, not the whole clip."""
    pytest.importorskip("pocketsphinx")
    from asr_audit.align import get_aligner
    from asr_audit.annotate.server import prepare
    from asr_audit.store.labels import LabelStore

    edits, audio = labelset
    lines: list[str] = []
    s = prepare(
        edits,
        audio,
        LabelStore(tmp_path / "l.sqlite"),
        sample=None,
        seed=0,
        annotator="a",
        aligner=get_aligner("sphinx"),
        progress=lines.append,
    )
    assert any("the panel's text aligned" in line for line in lines), lines
    assert all(it.timed for it in s.items)
    for it in s.items:  # a second each side at most, inside the clip, shorter than the clip
        assert 0 <= it.window[0] < it.window[1] <= it.duration
        assert it.window[1] - it.window[0] < it.duration or it.duration < 2.5
