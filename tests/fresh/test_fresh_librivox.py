"""``asr-audit corpus fresh-librivox`` end to end against a LibriVox-like server on 127.0.0.1.

The server (a thread in this process) serves a feed page, a Gutenberg-style book and MP3
recordings made here with flite; the locating model is the bundled Whisper tiny.en. No network.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from urllib.parse import SplitResult

import numpy as np
import pytest
import soundfile as sf
from local_http import serve  # tests/support

from asr_audit.audio.io import to_mono_16k
from asr_audit.corpus.manifests import read_manifest

pytestmark = pytest.mark.skipif(shutil.which("flite") is None, reason="flite not installed")

SENTENCES = [
    "It was a bright cold day in April, and the clocks were striking thirteen.",
    "Winston Smith slipped quickly through the glass doors of the mansions.",
    "The hallway smelt of boiled cabbage and old rag mats.",
    "At one end of it a coloured poster had been tacked to the wall.",
]
BOOK = (
    "The Project Gutenberg eBook of a test\n*** START OF THE PROJECT GUTENBERG EBOOK TEST ***\n\n"
    "CHAPTER I\n\n" + " ".join(SENTENCES) + "\n\nCHAPTER II\n\nSomething else entirely happened later.\n"
    "*** END OF THE PROJECT GUTENBERG EBOOK TEST ***\nlicence text\n"
)


def _say(text: str, tmp: Path) -> np.ndarray:
    out = tmp / "say.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", text, "-o", str(out)], check=True, timeout=60)
    samples, rate = sf.read(out, dtype="float32")
    return to_mono_16k(samples, rate)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("librivox")
    pause = np.zeros(int(0.7 * 16000), dtype=np.float32)
    parts = [pause, _say("This is a LibriVox recording.", tmp), pause]
    for s in SENTENCES:
        parts += [_say(s, tmp), pause]
    mp3 = tmp / "section.mp3"
    sf.write(mp3, np.concatenate(parts), 16000, format="MP3")
    files: dict[str, tuple[int, bytes]] = {
        "/books/test.txt": (200, BOOK.encode()),
        "/audio/1.mp3": (200, mp3.read_bytes()),
    }

    def route(base: str, url: SplitResult) -> tuple[int, bytes]:
        if url.path.rstrip("/") == "/api/feed/audiobooks":
            if "offset=0" in url.query:
                book = {
                    "id": "900",
                    "title": "A Test Book",
                    "language": "English",
                    "url_text_source": f"{base}/books/test.txt",
                    "sections": [
                        {
                            "id": "9001",
                            "section_number": "1",
                            "title": "Chapter 1",
                            "listen_url": f"{base}/audio/1.mp3",
                            "language": "English",
                            "readers": [{"reader_id": "19", "display_name": "Reader Nineteen"}],
                        },
                        {
                            "id": "9002",
                            "section_number": "2",
                            "title": "Chapter 2",
                            "listen_url": f"{base}/audio/missing.mp3",
                            "language": "English",
                            "readers": [{"reader_id": "19", "display_name": "Reader Nineteen"}],
                        },
                        {
                            "id": "9003",
                            "section_number": "3",
                            "title": "Other reader",
                            "listen_url": f"{base}/audio/1.mp3",
                            "language": "English",
                            "readers": [{"reader_id": "777", "display_name": "Someone"}],
                        },
                    ],
                }
                status, body = 200, json.dumps({"books": [book]}).encode()
            else:
                status, body = 404, b'{"error":"Audiobooks could not be found"}'
        else:
            status, body = files.get(url.path, (404, b"not found"))
        return status, body

    with serve(route) as (base, hits):
        yield base, hits


def test_fresh_librivox_builds_a_manifest_with_the_books_text_and_provenance(server, tmp_path, run_cli) -> None:
    base, hits = server
    out, store = tmp_path / "fresh", tmp_path / "store.sqlite3"
    args = (
        "corpus",
        "fresh-librivox",
        "--since",
        "2025-01-01",
        "--api",
        f"{base}/api",
        "--reader-ids",
        "19",
        "--min-seconds",
        "1.5",
        "--max-seconds",
        "8",
        "--store",
        str(store),
        "-o",
        str(out),
    )
    code, stdout, stderr = run_cli(*args)
    assert code == 0, stderr
    rows = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    texts = [r["text"] for r in rows]
    assert len(rows) >= 3
    assert all(t in " ".join(SENTENCES) for t in texts)  # the book's words and punctuation, never the model's
    assert not any("LibriVox" in t for t in texts)  # the spoken preamble is not in the book: dropped
    assert "thirteen." in " ".join(texts)
    first = rows[0]
    assert first["speaker"] == "19" and first["reader"] == "Reader Nineteen" and first["source"] == "librivox"
    assert first["listen_url"].endswith("/audio/1.mp3") and first["text_url"].endswith("/books/test.txt")
    assert first["end"] > first["start"] and first["match"] >= 0.8 and first["located_by"]
    corpus = read_manifest(out / "manifest.jsonl")
    audio = corpus.clips[0].audio_path
    assert len(corpus.clips) == len(rows) and audio is not None and Path(audio).is_file()
    summary = json.loads((out / "fresh.json").read_text())
    assert summary["sections"] == 2  # reader 777's section filtered out
    assert [s["section"] for s in summary["skipped"]] == ["9002"]
    assert "HTTP 404" in summary["skipped"][0]["reason"]
    assert "1 section(s) skipped" in stdout

    audio_hits = hits["/audio/1.mp3"]
    code, stdout2, _ = run_cli(*args)  # a rerun: downloads and transcripts come from the caches
    assert code == 0 and hits["/audio/1.mp3"] == audio_hits
    assert (out / "manifest.jsonl").read_text().splitlines() == [json.dumps(r, ensure_ascii=False) for r in rows]


def test_fresh_librivox_errors_are_one_line(server, tmp_path, run_cli) -> None:
    base, _ = server
    code, _, err = run_cli("corpus", "fresh-librivox", "--since", "2025-13-01", "-o", str(tmp_path))
    assert code == 2 and "--since '2025-13-01' is not a date; fix: write it as YYYY-MM-DD" in err
    code, _, err = run_cli(
        "corpus",
        "fresh-librivox",
        "--since",
        "2025-01-01",
        "--api",
        f"{base}/api",
        "--reader-ids",
        "12345",
        "--store",
        str(tmp_path / "s.sqlite3"),
        "-o",
        str(tmp_path / "o"),
    )
    assert code == 2 and err.strip().splitlines() == [
        f"error: no English section catalogued since 2025-01-01 by 1 given reader(s) at {base}/api; "
        "fix: widen the date range or the readers"
    ]
