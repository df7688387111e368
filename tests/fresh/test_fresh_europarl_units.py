"""European Parliament source, pure parts: the speeches listing, media pages, HLS playlists, windows."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from asr_audit.errors import AuditError, ConfigError
from asr_audit.fresh.build import EuroparlConfig, read_window
from asr_audit.fresh.europarl import (
    Part,
    find_sittings,
    list_speeches,
    parse_sitting_page,
    parse_speeches,
    recording_parts,
    speeches_url,
)
from asr_audit.fresh.fetch import Fetcher, FetchError

SR = 16_000


def _item(lang3: str, fragments: dict[str, str], item_no: str = "003", **extra: object) -> dict:
    item: dict[str, object] = {
        "had_activity_type": "https://data.europarl.europa.eu/def/ep-activities/PLENARY_DEBATE_SPEECH",
        "activity_start_date": "2025-10-08T09:10:00+02:00",
        "activity_end_date": "2025-10-08T09:12:00+02:00",
        "had_participation": {"had_participant_person": ["https://data.europarl.europa.eu/person/124831"]},
        "recorded_in_a_realization_of": [
            {"identifier": f"eli/dl/doc/CRE-10-2025-10-08-ITM-{item_no}_EN", "originalLanguage": [f"lang/{lang3}"]}
            | {"api:xmlFragment": fragments}
        ],
    }
    item.update(extra)
    return item


def test_parse_speeches_keeps_original_language_speeches_and_names_unreadable_ones() -> None:
    good = '<speech xmlns="http://docs.oasis-open.org/legaldocml/ns/akn/3.0"><from><person>Ana</person></from><p>Hello.</p></speech>'
    payload = {
        "data": [
            _item("ENG", {"en": good}),
            _item("DEU", {"de": "<speech><p>Hallo.</p></speech>", "en": good}),  # a translation: not English speech
            _item("ENG", {"de": "<speech/>"}),  # no English text
            _item("ENG", {"en": good}, activity_end_date="2025-10-08T09:00:00+02:00"),
            {"had_activity_type": "def/ep-activities/PLENARY_SITTING"},
        ]
    }
    speeches, problems = parse_speeches(payload, "u", "en")
    assert [s.text for s in speeches] == ["Hello."]
    s = speeches[0]
    assert s.speaker == "Ana" and s.person_id == "124831" and s.speech_id == "CRE-10-2025-10-08-ITM-003_EN"
    assert s.start == dt.datetime(2025, 10, 8, 7, 10, tzinfo=dt.timezone.utc) and s.sitting_date == "2025-10-08"
    assert ["no 'en' verbatim fragment" in p["reason"] for p in problems] == [True, False]
    assert "ends (07:00:00) before it starts (07:10:00)" in problems[1]["reason"]
    assert all(p["reason"].startswith("speech ") and "; fix: " in p["reason"] for p in problems)
    assert parse_speeches(payload, "u", "de")[0][0].text == "Hallo."
    with pytest.raises(FetchError, match="expected a JSON object with a 'data' list"):
        parse_speeches([1], "u", "en")


def test_list_speeches_pages_until_the_total_and_stops_on_no_content(tmp_path: Path) -> None:
    good = "<speech><p>Hello.</p></speech>"
    one, two, three = (_item("ENG", {"en": good}, n) for n in ("001", "002", "003"))
    pages = {0: [one, two], 2: [three]}

    class Paged(Fetcher):
        def get(
            self, url: str, *, accept: tuple[int, ...] = (), origin: str | None = None, limit: int | None = None
        ) -> bytes:
            offset = int(url.rsplit("offset=", 1)[1])
            if offset not in pages:
                return b""  # HTTP 204
            return json.dumps({"data": pages[offset], "meta": {"total": 9}}).encode()

    speeches, _ = list_speeches(Paged(), since=dt.date(2025, 10, 6), until=dt.date(2025, 10, 9), language="en")
    assert len(speeches) == 3
    pages[2] = [three, one]  # listed again (a repeated page, or twice on one page): kept once
    speeches, _ = list_speeches(Paged(), since=dt.date(2025, 10, 6), until=dt.date(2025, 10, 9), language="en")
    assert [s.speech_id[-6:-3] for s in speeches] == ["001", "002", "003"]
    first, _ = list_speeches(
        Paged(), since=dt.date(2025, 10, 6), until=dt.date(2025, 10, 9), language="en", max_speeches=2
    )
    assert len(first) == 2  # enough found on the first page: the second is never asked for
    url = speeches_url("https://api/v2/", dt.date(2025, 10, 6), dt.date(2025, 10, 9), 100, 0)
    assert url.startswith("https://api/v2/speeches?sitting-date=2025-10-06&sitting-date-end=2025-10-09&include-output")


def test_media_pages_are_read_with_angular_escapes_and_probed_by_sitting_time(tmp_path: Path) -> None:
    event = {
        "commonId": "20251008-0900-PLENARY",
        "eventType": "PLENARY",
        "startTime": 1759906970,
        "playerUrl": "/m.m3u8",
    }
    escaped = json.dumps({"contentEventKey": event}).replace('"', "&q;")
    page = f'<script id="ng-state" type="application/json">{escaped}</script>'
    sitting = parse_sitting_page(page, "https://media/content-page/x")
    assert sitting is not None and sitting.start == 1759906970 and sitting.audio_url == "https://media/m.m3u8"
    assert parse_sitting_page('<script id="ng-state">{"other": 1}</script>', "u") is None
    with pytest.raises(FetchError, match=r'u: no <script id="ng-state"> JSON in the page; fix: check --media'):
        parse_sitting_page("<html></html>", "u")
    with pytest.raises(FetchError, match="no numeric startTime"):
        parse_sitting_page('<script id="ng-state">{"contentEventKey": {"commonId": "x"}}</script>', "u")
    media = tmp_path / "media"
    (media / "content-manager" / "content-page").mkdir(parents=True)
    (media / "content-manager" / "content-page" / "20251008-1500-PLENARY").write_text(page)
    found = find_sittings(Fetcher(), dt.date(2025, 10, 8), media=media.as_uri(), times=("1500",))
    assert [s.event_id for s in found] == ["20251008-0900-PLENARY"]


def test_hls_playlists_give_the_floor_segments_and_windows_read_only_what_they_need(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    audio = (0.1 * rng.standard_normal(12 * SR)).astype(np.float32)
    lines = ["#EXTM3U"]
    for n in range(3):
        sf.write(tmp_path / f"s{n}.wav", audio[n * 4 * SR : (n + 1) * 4 * SR], SR)
        lines += ["#EXTINF:4.0,", f"s{n}.wav"]
    (tmp_path / "floor.m3u8").write_text("\n".join(lines))
    (tmp_path / "master.m3u8").write_text(
        '#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="qaj",URI="floor.m3u8"\n'
        '#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO="a"\nvideo.m3u8\n'
    )
    fetcher = Fetcher()
    parts = recording_parts(fetcher, (tmp_path / "master.m3u8").as_uri())
    assert [(p.offset, p.duration, Path(p.url).name) for p in parts] == [
        (0.0, 4.0, "s0.wav"),
        (4.0, 4.0, "s1.wav"),
        (8.0, 4.0, "s2.wav"),
    ]
    (tmp_path / "s0.wav").unlink()  # the window below needs only s1 and s2
    window = read_window(fetcher, parts, 5.0, 9.5)
    assert np.allclose(window, audio[5 * SR : int(9.5 * SR)], atol=1e-4)
    with pytest.raises(AuditError, match=r"past the recording's end \(12.0 s\)"):
        read_window(fetcher, parts, 13.0, 14.0)
    (tmp_path / "other.m3u8").write_text('#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,LANGUAGE="eng",URI="floor.m3u8"\n')
    with pytest.raises(FetchError, match=r'no floor audio rendition \(LANGUAGE="qaj"\) among eng'):
        recording_parts(fetcher, (tmp_path / "other.m3u8").as_uri())
    (tmp_path / "bad.m3u8").write_text("not a playlist")
    with pytest.raises(FetchError, match="not an HLS playlist"):
        recording_parts(fetcher, (tmp_path / "bad.m3u8").as_uri())
    assert recording_parts(fetcher, "https://x/sitting.mp3") == [Part(0.0, None, "https://x/sitting.mp3")]


def test_europarl_config_checks_its_flags() -> None:
    with pytest.raises(ConfigError, match="--language 'xx' is not an EU language code"):
        EuroparlConfig(since=dt.date(2025, 1, 1), language="xx")
    with pytest.raises(ConfigError, match="--until 2024-01-01 is before --since 2025-01-01"):
        EuroparlConfig(since=dt.date(2025, 1, 1), until=dt.date(2024, 1, 1))
    with pytest.raises(ConfigError, match="--max-speeches 0 must be >= 1"):
        EuroparlConfig(since=dt.date(2025, 1, 1), max_speeches=0)
