"""Issue 31 (Reliability II): what the exit-code matrix cannot see for the new verbs: no local file
read because a server named it, no secret printed, no write outside the output folder, no input
replaced, no partial or truncated output, no pairing of a gate over other clips.

The ``corpus fresh-*`` cases download from the hostile server on 127.0.0.1
(``tests/support/hostile_http.py``); each has a pytest deadline.
"""

from __future__ import annotations

import errno
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import hyps
from cases_verbs import (
    SMALL_PANEL,
    VOX,
    _doc,
    _librivox,
    book,
    results,
    section,
    speech_item,
)
from hostile_http import hostile, skip_retry_waits

from asr_audit.data import VOXPOPULI_EXAMPLES

pytestmark = pytest.mark.timeout(90)
SECRET = "TOP-SECRET-CONTENT"


def _everything_under(root: Path) -> str:
    """Every file's bytes under ``root``, as text (to look for a leaked secret)."""
    return "".join(p.read_bytes().decode("latin-1") for p in root.rglob("*") if p.is_file())


def _fresh(tmp_path: Path, document: object, run_cli, *more: str) -> tuple[int, str, str, Path]:
    work = tmp_path / "case"
    work.mkdir(exist_ok=True)
    argv = _librivox(lambda t: _doc(document)(t), *more)(work)
    code, out, err = run_cli(*argv)
    return code, out, err, work / "out"


@pytest.mark.parametrize("field", ["listen_url", "url_text_source"])
def test_a_catalogue_naming_a_local_file_gets_nothing_read(field: str, tmp_path: Path, run_cli) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    sec = section(listen_url=secret.as_uri()) if field == "listen_url" else section()
    text = (
        secret.as_uri()
        if field == "url_text_source"
        else hostile().answer("book-text", b"Chapter one. It was a bright cold day.") + "/b.txt"
    )
    code, out, err, folder = _fresh(tmp_path, book([sec], url_text_source=text), run_cli)
    assert code == 2 and "Traceback" not in out + err
    assert SECRET not in _everything_under(folder) and SECRET not in out + err
    skipped = json.loads((folder / "fresh.json").read_text())["skipped"]
    assert len(skipped) == 1 and f"names a file URL ({secret.as_uri()})" in skipped[0]["reason"]
    assert "refused" in skipped[0]["reason"] and "refused" in err


def test_a_media_page_naming_a_local_file_gets_nothing_read(tmp_path: Path, run_cli) -> None:
    secret = tmp_path / "secret.mp3"
    secret.write_text(SECRET + "\n")
    state = {"contentEventKey": {"commonId": "e1", "startTime": 1759906800, "playerUrl": secret.as_uri()}}
    page = f'<html><script id="ng-state" type="application/json">{json.dumps(state)}</script></html>'.encode()
    work = tmp_path / "case"
    work.mkdir()
    hyps(work)
    media = hostile().answer("media-file", page)
    api = hostile().answer("api-file", {"data": [speech_item()]})
    code, out, err = run_cli(
        "corpus", "fresh-europarl", "--since", "2025-10-06", "--until", "2025-10-09", "-o", str(work / "out"),
        "-m", f"preds:{work / 'h.jsonl'}", "--api", api, "--media", media, "--store", str(work / "s.sqlite"),
        "--download-deadline", "3",
    )  # fmt: skip
    assert code == 2, err
    assert SECRET not in _everything_under(work / "out")
    skipped = json.loads((work / "out" / "fresh.json").read_text())["skipped"]
    assert f"names a file URL ({secret.as_uri()})" in skipped[0]["reason"]


def test_an_error_page_served_as_200_is_not_cached(tmp_path: Path, run_cli) -> None:
    work = tmp_path / "case"
    work.mkdir()
    argv = _librivox(lambda t: f"{hostile().base}/html-200/run-{t.parent.name}")(work)
    path = f"/html-200/run-{tmp_path.name}/feed/audiobooks/"
    for run in (1, 2):  # the advised rerun asks the server again
        code, _, err = run_cli(*argv)
        assert code == 2 and "not JSON" in err
        assert hostile().hits[path] == run


def test_a_password_in_the_api_url_is_never_printed(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    skip_retry_waits(monkeypatch)
    work = tmp_path / "case"
    work.mkdir()
    port = hostile().base.rsplit(":", 1)[1]
    argv = _librivox(lambda t: f"http://auditor:hunter2-s3cret@127.0.0.1:{port}/not-http")(work)
    code, out, err = run_cli(*argv)
    assert code == 2 and "hunter2-s3cret" not in out + err and "auditor:***@127.0.0.1" in err
    fresh = work / "out" / "fresh.json"
    assert not fresh.exists() or "hunter2-s3cret" not in fresh.read_text()


def test_export_hub_never_writes_outside_out(tmp_path: Path, run_cli) -> None:
    res = results(tmp_path, lambda d: json.loads(json.dumps(d).replace('"whisper-tiny.en"', '".."')))
    out = tmp_path / "nested" / "cards"
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = run_cli(
        "export", "hub", "--results", str(res), "--dataset-id", "x/y", "--task-id", "vox", "--out", str(out)
    )
    assert code == 2 and "leave the --out folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing beside the results, nothing in nested/
    assert not (tmp_path / "nested" / ".eval_results").exists()


@pytest.mark.parametrize(
    "more",
    [["--measures", "bogus"], ["--models", "whisper-tiny.en,nope"], ["--date", "yesterday"], ["--dataset-id", ""]],
)
def test_export_hub_leaves_nothing_on_a_bad_input(more: list[str], tmp_path: Path, run_cli) -> None:
    out = tmp_path / "cards"
    args = ["export", "hub", "--results", str(results(tmp_path)), "--dataset-id", "x/y", "--task-id", "vox"]
    code, _, err = run_cli(*args, "--out", str(out), *more)
    assert code == 2 and "fix:" in err
    assert not out.exists()  # not even the marker: everything is checked before the first write


def test_export_hub_on_a_full_disk_leaves_no_card(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    out = tmp_path / "cards"
    real = os.replace
    calls = {"n": 0}

    def replace(src: str, dst: str) -> None:
        calls["n"] += 1
        if calls["n"] == 1:  # the first card staged: the disk fills
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    args = ["export", "hub", "--results", str(results(tmp_path)), "--dataset-id", "x/y", "--task-id", "vox"]
    monkeypatch.setattr("asr_audit.outputs.os.replace", replace)
    code, _, err = run_cli(*args, "--out", str(out))
    assert code == 2 and "disk full" in err and "Traceback" not in err
    assert not list(out.rglob("*.yaml")) and not [p for p in out.iterdir() if p.name.startswith(".export-")]


@pytest.mark.parametrize("verb", ["gate", "normalize", "export-table"])
def test_a_full_disk_keeps_the_old_output_whole(
    verb: str, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = "the previous good output\n"
    target = tmp_path / ("out.csv" if verb == "export-table" else "out.json")
    target.write_text(old)

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    argv = {
        "gate": ["gate", "--preds", VOX, "--candidate", "whisper-small.en", "--baseline", "wav2vec2-base-960h",
                 "--panel", SMALL_PANEL, "--no-loo", "--resamples", "200", "--json", str(target)],
        "normalize": ["normalize", "a b", "--json", str(target)],
        "export-table": ["export", "table", "--results", str(results(tmp_path)), "--out", str(target)],
    }[verb]  # fmt: skip
    monkeypatch.setattr("asr_audit.outputs.os.replace", full)
    code, _, err = run_cli(*argv)
    assert code == 2 and "disk full" in err and "Traceback" not in err
    assert target.read_text() == old  # not truncated, not emptied
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []  # no temp file left


def test_refdis_write_corrected_never_replaces_an_input(tmp_path: Path, run_cli) -> None:
    import shutil

    preds = Path(shutil.copytree(VOXPOPULI_EXAMPLES, tmp_path / "preds"))
    victim = preds / "whisper-tiny.en.jsonl"
    before = victim.read_bytes()
    code, _, err = run_cli(
        "refdis", "--preds", str(preds), "--panel", SMALL_PANEL, "--no-loo", "--resamples", "20",
        "--write-corrected", str(victim),
    )  # fmt: skip
    assert code == 2 and "would replace the input" in err
    assert victim.read_bytes() == before


def test_gate_on_disjoint_clips_is_undecided(tmp_path: Path, run_cli) -> None:
    """Candidate and baseline evaluated on different halves: nothing can be paired (exit 2), where
    the union pairing passed it (bound -11.04, "no regression")."""
    import shutil

    preds = Path(shutil.copytree(VOXPOPULI_EXAMPLES, tmp_path / "preds"))
    for name, keep in (("whisper-small.en", 0), ("wav2vec2-base-960h", 1)):
        src = preds / f"{name}.jsonl"
        lines = src.read_text().splitlines()
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines[keep::2]) + "\n")
        src.unlink()
    out = tmp_path / "gate.json"
    code, _, err = run_cli(
        "gate", "--preds", str(preds), "--candidate", str(tmp_path / "whisper-small.en.jsonl"),
        "--baseline", str(tmp_path / "wav2vec2-base-960h.jsonl"), "--panel", SMALL_PANEL, "--no-loo",
        "--resamples", "200", "--json", str(out),
    )  # fmt: skip
    data = json.loads(out.read_text())
    assert code == 2 and data["decision"] == "undecided", err
    assert all(t["status"] == "not tested" and "on 0 clip(s) in common" in t["reason"] for t in data["tests"])


def test_a_backend_without_hook_sites_is_named_in_plain_words(tmp_path: Path) -> None:
    """Not "backend ... cannot sites" (defect 12)."""
    from asr_audit.errors import BackendError
    from asr_audit.models.base import SITES, load_backend, require_capability

    backend = load_backend(f"preds:{hyps(tmp_path)}")
    with pytest.raises(BackendError, match=r"cannot expose hook sites \(it supports: transcribe\)"):
        require_capability(backend, SITES)


def test_run_exits_2_when_every_clip_of_a_model_failed(tmp_path: Path, run_cli) -> None:
    """As `transcribe` does (defect 12): a model that transcribed nothing is not a result."""
    from cases import LIBRI, spec

    answers_nothing = hyps(tmp_path, ids=("not-a-clip",))
    body = (
        f'title = "t"\noutput = "{tmp_path / "out"}"\nstore = "{tmp_path / "s.sqlite"}"\n'
        f'[[corpus]]\nname = "libri"\nspec = "{LIBRI}"\n'
        f'[[model]]\nname = "m"\nspec = "preds:{answers_nothing}"\n'
    )
    code, _, err = run_cli("run", str(spec(tmp_path, body)), "--no-progress")
    assert code == 2 and "every clip failed for m on libri" in err and "Traceback" not in err
    assert (tmp_path / "out" / "report.html").exists()  # the report (with the failures) is still written


def test_a_capture_that_fails_leaves_no_array_without_manifest(tmp_path: Path) -> None:
    """An unreadable clip mid-capture: the site files go too, so no half capture is left (defect 12)."""
    pytest.importorskip("torch")
    from asr_audit.errors import AuditError
    from asr_audit.mechrun.capture import MANIFEST, capture

    class Sites:
        batch_size = 8

        def site_module(self, site: str) -> object:
            return object()

    def clips():  # the first clip's audio cannot be read
        raise AuditError("a.wav: cannot decode the audio")
        yield  # pragma: no cover

    out = tmp_path / "caps"
    out.mkdir()
    (out / MANIFEST).write_text("{}")  # an older capture in the folder
    with pytest.raises(AuditError, match="cannot decode"):
        capture(Sites(), clips(), ["encoder.layers.2.out"], out)
    assert sorted(p.name for p in out.iterdir()) == []


def test_terminal_escapes_in_names_and_texts_print_as_text(tmp_path: Path, run_cli) -> None:
    """A file name or text cannot retitle or clear the terminal (defect 12): shown as ``^[``."""
    name = tmp_path / "x\x1b]0;pwned\x07\x1b[2Jy.txt"
    code, out, err = run_cli("normalize", "--file", str(name))
    assert code == 2 and "\x1b]" not in err and "\x1b[2J" not in err and "^[]0;pwned" in err
    code, out, err = run_cli("normalize", "a\x1b[2Jb")
    assert code == 0 and "\x1b[2J" not in out and "^[[2J" in out
