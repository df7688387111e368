"""``asr-audit corpus fresh-europarl`` end to end against a European-Parliament-like server on 127.0.0.1.

The server (a thread in this process) serves a paged speeches listing in the Open Data API's
layout, media content pages with their ng-state JSON, an HLS master and floor playlist whose
segments are a sitting recorded here with flite, and one undecodable recording. The locating
model is the bundled Whisper tiny.en. No network.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from urllib.parse import SplitResult, parse_qs

import numpy as np
import pytest
import soundfile as sf
from local_http import serve  # tests/support

from asr_audit.audio.io import to_mono_16k
from asr_audit.corpus.manifests import read_manifest

pytestmark = pytest.mark.skipif(shutil.which("flite") is None, reason="flite not installed")

SR = 16_000
FIRST = [
    "Mister President, it was a bright cold day in April, and the clocks were striking thirteen.",
    "The hallway smelt of boiled cabbage and old rag mats.",
]
SECOND = [
    "Winston Smith slipped quickly through the glass doors of the mansions.",
    "At one end of it a coloured poster had been tacked to the wall.",
]
SITTING_START = 1757926800  # 2025-09-15T09:00:00Z
SEGMENT_S = 4.0
LAST_SEGMENT = 0  # set by the fixture: the index of the trailing-silence segment no speech needs


def _say(text: str, tmp: Path) -> np.ndarray:
    out = tmp / "say.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", text, "-o", str(out)], check=True, timeout=60)
    samples, rate = sf.read(out, dtype="float32")
    return to_mono_16k(samples, rate)


def _iso(seconds: float, z: bool = True) -> str:
    import datetime as dt

    stamp = dt.datetime.fromtimestamp(SITTING_START + seconds, dt.timezone.utc)
    text = stamp.isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z") if z else text.replace("+00:00", "")


def _speech(sid: str, date: str, start: str, end: str, lang3: str, fragments: dict[str, str]) -> dict:
    return {
        "activity_id": f"{date}-{sid}",
        "had_activity_type": "def/ep-activities/PLENARY_DEBATE_SPEECH",
        "activity_date": date,
        "activity_start_date": start,
        "activity_end_date": end,
        "had_participation": {"had_participant_person": ["person/197400"]},
        "recorded_in_a_realization_of": [
            {
                "identifier": f"eli/dl/doc/CRE-10-{date}-{sid}",
                "notation_speechId": sid,
                "originalLanguage": [f"def/ep-languages/{lang3}"],
                "api:xmlFragment": fragments,
            }
        ],
    }


def _fragment(speaker: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f'<speech startTime="x"><from><person refersTo="epdata:person/197400">{speaker}</person>'
        f"<organization>Renew</organization></from>{body}</speech>"
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    global LAST_SEGMENT
    tmp = tmp_path_factory.mktemp("europarl")
    parts: list[np.ndarray] = [np.zeros(SR, np.float32)]
    windows = []
    for speech in (FIRST, SECOND):
        begin = sum(len(p) for p in parts) / SR
        for k, sentence in enumerate(speech):
            parts.append(_say(sentence, tmp))
            if k < len(speech) - 1:
                parts.append(np.zeros(int(0.6 * SR), np.float32))
        windows.append((begin, sum(len(p) for p in parts) / SR))
        parts.append(np.zeros(int(2.5 * SR), np.float32))
    parts.append(np.zeros(int(10 * SR), np.float32))  # the sitting goes on: segments no speech needs
    sitting = np.concatenate(parts)
    step = int(SEGMENT_S * SR)
    files: dict[str, bytes] = {}
    playlist = ["#EXTM3U", "#EXT-X-TARGETDURATION:4", "#EXT-X-PLAYLIST-TYPE:VOD"]
    for n, a in enumerate(range(0, len(sitting), step)):
        chunk = sitting[a : a + step]
        wav = tmp / f"seg{n}.wav"
        sf.write(wav, chunk, SR)
        files[f"/hls/floor/seg{n}.wav"] = wav.read_bytes()
        playlist += [f"#EXTINF:{len(chunk) / SR:.3f},", f"seg{n}.wav"]
        LAST_SEGMENT = n
    playlist.append("#EXT-X-ENDLIST")
    files["/hls/floor/index.m3u8"] = "\n".join(playlist).encode()
    files["/hls/master.m3u8"] = (
        "#EXTM3U\n"
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="fra",NAME="Français",URI="fr/index.m3u8"\n'
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="qaj",NAME="Original",URI="floor/index.m3u8"\n'
        '#EXT-X-STREAM-INF:BANDWIDTH=800000,AUDIO="aud"\nvideo/index.m3u8\n'
    ).encode()
    files["/audio/broken.mp3"] = b"this is not audio"

    def page(event: str, start: int, player: str) -> bytes:
        state = {
            "contentEventKey": {
                "commonId": event,
                "eventType": "PLENARY",
                "title": "Plenary session",
                "startTime": start,
                "endTime": start + 12 * 3600,
                "playerUrl": player,
            }
        }
        return f'<html><body><script id="ng-state" type="application/json">{json.dumps(state)}</script></body></html>'.encode()

    files["/media/content-manager/content-page/20250915-0900-PLENARY"] = page(
        "20250915-0900-PLENARY", SITTING_START, "/hls/master.m3u8"
    )
    files["/media/content-manager/content-page/20250917-0900-PLENARY"] = page(
        "20250917-0900-PLENARY", SITTING_START + 2 * 86400, "/audio/broken.mp3"
    )
    (a1, b1), (a2, b2) = windows
    english = _fragment("Ana Example", [*FIRST[:1], "(Applause)", *FIRST[1:]])
    data = [
        _speech("1-010-0000", "2025-09-15", _iso(a1), _iso(b1), "ENG", {"en": english}),
        _speech(
            "1-011-0000", "2025-09-15", _iso(a2), _iso(b2), "FRA", {"fr": _fragment("Jean", ["Bonjour."]), "en": "x"}
        ),
        _speech(
            "1-012-0000", "2025-09-15", _iso(a2, z=False), _iso(b2, z=False), "ENG", {"en": _fragment("Bo", SECOND)}
        ),
        _speech("1-013-0000", "2025-09-15", _iso(b2 + 3), _iso(b2 + 5), "ENG", {"en": "<speech><p>unclosed</speech>"}),
        _speech("2-001-0000", "2025-09-16", "2025-09-16T09:00:05Z", "2025-09-16T09:01:00Z", "ENG", {"en": english}),
        _speech("3-001-0000", "2025-09-17", "2025-09-17T09:00:05Z", "2025-09-17T09:01:00Z", "ENG", {"en": english}),
        {"activity_id": "MTG-PL-2025-09-15", "had_activity_type": "def/ep-activities/PLENARY_SITTING"},
    ]

    def route(base: str, url: SplitResult) -> tuple[int, bytes]:
        if url.path == "/api/speeches":
            query = parse_qs(url.query)
            offset = int(query["offset"][0])
            if query["sitting-date"] == ["2025-09-15"]:
                status, body = 200, json.dumps({"data": data[offset : offset + 3], "meta": {"total": len(data)}})
            else:
                status, body = 200, json.dumps({"data": [], "meta": {"total": 0}})
            payload = body.encode()
        else:
            status, payload = (200, files[url.path]) if url.path in files else (404, b"not found")
        return status, payload

    with serve(route) as (base, hits):
        yield base, hits


def _args(base: str, tmp_path: Path, *extra: str) -> tuple[str, ...]:
    return (
        "corpus",
        "fresh-europarl",
        "--since",
        "2025-09-15",
        "--until",
        "2025-09-18",
        "--api",
        f"{base}/api",
        "--media",
        f"{base}/media",
        "--min-seconds",
        "1.5",
        "--max-seconds",
        "8",
        "--store",
        str(tmp_path / "store.sqlite3"),
        "-o",
        str(tmp_path / "ep"),
        *extra,
    )


def test_fresh_europarl_builds_a_manifest_from_verbatim_reports_and_reports_broken_items(
    server, tmp_path, run_cli
) -> None:
    base, hits = server
    out = tmp_path / "ep"
    code, stdout, stderr = run_cli(*_args(base, tmp_path))
    assert code == 0, stderr
    rows = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    texts = " ".join(r["text"] for r in rows)
    assert len(rows) >= 3
    assert all(r["text"] in " ".join(FIRST) or r["text"] in " ".join(SECOND) for r in rows)  # the report's words
    assert "Applause" not in texts and "Bonjour" not in texts  # stage directions and other languages stay out
    assert "thirteen." in texts and "wall." in texts
    first = rows[0]
    assert first["source"] == "europarl" and first["language"] == "en" and first["speaker"] == "197400"
    assert first["speaker_name"] == "Ana Example" and first["group"] == "Renew"
    assert first["sitting_date"] == "2025-09-15" and first["speech_id"] == "1-010-0000"
    assert "sitting-date=2025-09-15" in first["text_url"] and first["recording_url"] == f"{base}/hls/master.m3u8"
    assert first["media_page"].endswith("/content-page/20250915-0900-PLENARY")
    assert first["retrieved"].endswith("+00:00") and first["end"] > first["start"] >= 0
    verbatim = " ".join(FIRST)
    assert first["text_sha256"] == hashlib.sha256(verbatim.encode()).hexdigest()
    assert first["audio_sha256"] == hashlib.sha256((out / first["audio_filepath"]).read_bytes()).hexdigest()
    assert {r["speech_id"] for r in rows} == {"1-010-0000", "1-012-0000"}
    corpus = read_manifest(out / "manifest.jsonl")
    audio = corpus.clips[0].audio_path
    assert len(corpus.clips) == len(rows) and audio is not None and Path(audio).is_file()

    summary = json.loads((out / "fresh.json").read_text())
    assert summary["speeches"] == 5  # four English speeches read, one unreadable; French and non-speeches out
    reasons = {s["speech"]: s["reason"] for s in summary["skipped"]}
    assert set(reasons) == {"1-013-0000", "2-001-0000", "3-001-0000"}
    assert "does not parse" in reasons["1-013-0000"] and "fix:" in reasons["1-013-0000"]
    assert "no recording of the sitting of 2025-09-16" in reasons["2-001-0000"] and "fix:" in reasons["2-001-0000"]
    assert f"{base}/audio/broken.mp3: cannot decode the audio" in reasons["3-001-0000"]
    assert "BytesIO" not in reasons["3-001-0000"]  # libsndfile's reason, not a memory address
    assert all("\n" not in r for r in reasons.values())
    assert "3 speech(es) skipped" in stdout
    assert hits[f"/hls/floor/seg{LAST_SEGMENT}.wav"] == 0  # only the segments holding a speech are downloaded

    segment_hits = sum(n for path, n in hits.items() if path.startswith("/hls/floor/seg"))
    code, _, _ = run_cli(*_args(base, tmp_path))  # a rerun: downloads and transcripts come from the caches
    assert code == 0
    assert sum(n for path, n in hits.items() if path.startswith("/hls/floor/seg")) == segment_hits
    assert (out / "manifest.jsonl").read_text().splitlines() == [json.dumps(r, ensure_ascii=False) for r in rows]


def test_fresh_europarl_errors_are_one_line(server, tmp_path, run_cli) -> None:
    base, _ = server
    code, _, err = run_cli(*_args(base, tmp_path, "--language", "english"))
    assert code == 2 and err.strip().startswith("error: --language 'english' is not an EU language code; fix:")
    args = list(_args(base, tmp_path))
    args[3], args[5] = "2024-01-01", "2024-01-31"
    code, _, err = run_cli(*args)
    assert code == 2 and err.strip().splitlines() == [
        f"error: no plenary speech in 'en' from 2024-01-01 to 2024-01-31 at {base}/api; "
        "fix: widen the date range or check --language"
    ]
