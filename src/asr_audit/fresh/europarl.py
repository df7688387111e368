"""European Parliament plenaries as a source of fresh held-out speech: speeches, their verbatim text, the recording.

VoxPopuli (and every benchmark cut from it) fixes a set of plenary sessions up to 2020; the
Parliament keeps sitting. Speeches given after a model's training cutoff, with the verbatim report
of what was said, are speech no model has seen. Built from public documentation, **not checked
against the live services** (this project has no internet; see ``docs/fresh.md``):

* :func:`list_speeches` pages through the EP Open Data Portal API
  (``<api>/speeches?sitting-date=<since>&sitting-date-end=<until>&include-output=xml_fragment&limit=..&offset=..``,
  JSON-LD with ``data`` and ``meta.total``) and keeps the plenary debate speeches
  (``had_activity_type`` ``.../PLENARY_DEBATE_SPEECH``) whose *original* language is the wanted
  one; the text is that language's verbatim XML fragment (``<from>`` names the speaker, ``<p>``
  holds what was said), never a translation. A record that cannot be read is returned as a
  problem naming the speech and the fix, and the rest go on.
* :func:`find_sittings` finds the recordings of one sitting date: the EP's media content page
  ``<media>/content-manager/content-page/<YYYYMMDD>-<HHMM>-PLENARY`` (probed at the usual
  sitting times) carries an ``ng-state`` JSON with the recording's start time and its player URL.
* :func:`recording_parts` turns a player URL into timed parts: an HLS playlist (the floor rendition
  ``LANGUAGE="qaj"`` of a master playlist, then its segments) or a plain audio file (one part).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from asr_audit.fresh.fetch import Fetcher, FetchError, check_named, shown

EP_API = "https://data.europarl.europa.eu/api/v2"
EP_MEDIA = "https://control.eup.glcloud.eu"
SITTING_TIMES = ("0900", "1500", "2100", "1800")  # the usual plenary sitting start times (HHMM)
PAGE_SIZE = 100
FLOOR = "qaj"  # the HLS language tag of the floor (original-language) audio
SPEECH_TYPE = "PLENARY_DEBATE_SPEECH"

# ISO 639-3 (the API's originalLanguage tags) -> ISO 639-1, for the EU's 24 official languages
ISO3_TO_ISO1 = {
    "bul": "bg", "ces": "cs", "dan": "da", "deu": "de", "ell": "el", "eng": "en", "spa": "es", "est": "et",
    "fin": "fi", "fra": "fr", "gle": "ga", "hrv": "hr", "hun": "hu", "ita": "it", "lit": "lt", "lav": "lv",
    "mlt": "mt", "nld": "nl", "pol": "pl", "por": "pt", "ron": "ro", "slk": "sk", "slv": "sl", "swe": "sv",
}  # fmt: skip
LANGUAGES = frozenset(ISO3_TO_ISO1.values())


@dataclass(frozen=True, slots=True)
class Speech:
    """One speaker intervention of a plenary sitting, with its verbatim text in its original language."""

    speech_id: str
    sitting_date: str  # YYYY-MM-DD
    start: dt.datetime  # UTC
    end: dt.datetime  # UTC
    speaker: str
    person_id: str | None
    group: str | None
    language: str  # ISO 639-1 of the original
    text: str
    url: str  # the listing page it came from


@dataclass(frozen=True, slots=True)
class Sitting:
    """One recording of a sitting: its media page, start (and end) in Unix seconds, and player URL."""

    event_id: str
    page_url: str
    start: float
    end: float | None
    audio_url: str

    def covers(self, when: dt.datetime) -> bool:
        t = when.timestamp()
        return t >= self.start and (self.end is None or t <= self.end)


@dataclass(frozen=True, slots=True)
class Part:
    """A timed piece of a recording: ``offset`` seconds from its start, ``duration`` (None: to the end)."""

    offset: float
    duration: float | None
    url: str
    origin: str | None = None  # the playlist (or media page) that named ``url``; None: the user typed it


def speeches_url(api: str, since: dt.date, until: dt.date, limit: int, offset: int) -> str:
    """The API URL of one page of speeches given in sittings from ``since`` to ``until``."""
    query = urllib.parse.urlencode(
        {
            "sitting-date": since.isoformat(),
            "sitting-date-end": until.isoformat(),
            "include-output": "xml_fragment",
            "limit": limit,
            "offset": offset,
        }
    )
    return f"{api.rstrip('/')}/speeches?{query}"


def _last(iri: object) -> str:
    return str(iri).rstrip("/").rsplit("/", 1)[-1] if iri else ""


def _first(value: object) -> Any:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _when(value: object, field: str) -> dt.datetime:
    text = str(value or "").strip()
    try:
        stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{field} {text!r} is not an ISO date-time") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.astimezone(dt.timezone.utc)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _flat(element: ET.Element) -> str:
    return " ".join(" ".join(element.itertext()).split())


def verbatim_text(fragment: str) -> tuple[str, str, str | None]:
    """(text, speaker, group) of one speech's XML fragment: the ``<p>`` paragraphs outside ``<from>``
    (paragraphs wholly in parentheses, the report's stage directions, dropped), the ``<person>`` and
    ``<organization>`` of ``<from>``. Raises ``ValueError`` when the XML does not parse.

    >>> verbatim_text('<speech><from><person>Ana Pérez</person><organization>Renew</organization></from>'
    ...               '<p>Mr President, thank you.</p><p>(Applause)</p><p>We agree.</p></speech>')
    ('Mr President, thank you. We agree.', 'Ana Pérez', 'Renew')
    """
    try:
        root = ET.fromstring(fragment)
    except ET.ParseError as exc:
        raise ValueError(f"its XML fragment does not parse ({exc})") from None
    speaker, group = "", None
    skip: set[int] = set()
    for el in root.iter():
        if _local(el.tag) == "from":
            skip |= {id(x) for x in el.iter()}
            for x in el.iter():
                if _local(x.tag) == "person" and not speaker:
                    speaker = _flat(x)
                elif _local(x.tag) == "organization" and group is None:
                    group = _flat(x) or None
    paragraphs = [_flat(el) for el in root.iter() if _local(el.tag) == "p" and id(el) not in skip]
    kept = [p for p in paragraphs if p and not (p.startswith("(") and p.endswith(")"))]
    return " ".join(kept), speaker, group


def parse_speeches(payload: Any, url: str, language: str) -> tuple[list[Speech], list[dict[str, str]]]:
    """The debate speeches of one listing page given in ``language`` (ISO 639-1), and a problem
    record (speech, url, reason) for each such speech that cannot be read."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("data", []), (list, type(None))):
        raise FetchError(f"{shown(url)}: expected a JSON object with a 'data' list; fix: check --api")
    speeches: list[Speech] = []
    problems: list[dict[str, str]] = []
    for item in payload.get("data") or []:
        if not isinstance(item, Mapping) or _last(item.get("had_activity_type")) != SPEECH_TYPE:
            continue
        record = _first(item.get("recorded_in_a_realization_of")) or {}
        if not isinstance(record, Mapping):
            record = {}
        original = ISO3_TO_ISO1.get(_last(_first(record.get("originalLanguage"))).lower())
        if original != language:
            continue
        speech_id = str(
            record.get("notation_speechId") or _last(record.get("identifier")) or _last(item.get("activity_id")) or "?"
        )
        try:
            start = _when(item.get("activity_start_date"), "activity_start_date")
            end = _when(item.get("activity_end_date"), "activity_end_date")
            if end <= start:
                raise ValueError(f"it ends ({end:%H:%M:%S}) before it starts ({start:%H:%M:%S})")
            fragments = record.get("api:xmlFragment") or {}
            fragment = fragments.get(language) if isinstance(fragments, Mapping) else None
            if not fragment:
                raise ValueError(f"it has no '{language}' verbatim fragment (api:xmlFragment)")
            text, speaker, group = verbatim_text(str(fragment))
            if not text:
                raise ValueError("its verbatim fragment has no text paragraph")
        except ValueError as exc:
            problems.append(
                {
                    "speech": speech_id,
                    "url": shown(url),
                    "reason": f"speech {speech_id} at {shown(url)}: {exc}; fix: check --api points at the EP Open Data "
                    "API v2 (the record layout may have changed) or leave this speech out",
                }
            )
            continue
        participation = item.get("had_participation")
        persons = participation.get("had_participant_person") if isinstance(participation, Mapping) else None
        person_id = _last(_first(persons)) or None
        speeches.append(
            Speech(
                speech_id=speech_id,
                sitting_date=str(item.get("activity_date") or start.date().isoformat())[:10],
                start=start,
                end=end,
                speaker=speaker or (person_id or "unknown"),
                person_id=person_id,
                group=group,
                language=original,
                text=text,
                url=url,
            )
        )
    return speeches, problems


def list_speeches(
    fetcher: Fetcher,
    *,
    since: dt.date,
    until: dt.date,
    language: str,
    api: str = EP_API,
    page_size: int = PAGE_SIZE,
    max_pages: int = 500,
    max_speeches: int | None = None,
) -> tuple[list[Speech], list[dict[str, str]]]:
    """Every debate speech in ``language`` given in sittings from ``since`` to ``until`` (each
    once), and the problem records of those that cannot be read (see :func:`parse_speeches`);
    paging stops once ``max_speeches`` are found."""
    speeches: list[Speech] = []
    problems: list[dict[str, str]] = []
    seen: set[str] = set()
    offset = 0
    for _ in range(max_pages):
        url = speeches_url(api, since, until, page_size, offset)
        body = fetcher.get(url)  # the API answers 204 (no content) past the end
        if not body.strip():
            break
        try:
            payload = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            fetcher.forget(url)
            raise FetchError(f"{shown(url)}: the response is not JSON ({exc}); fix: check --api") from None
        items = payload.get("data") if isinstance(payload, Mapping) else None
        page, bad = parse_speeches(payload, url, language)
        before = len(seen)
        for speech in page:  # a speech listed again (on one page, or a repeated page) is kept once
            if speech.speech_id not in seen:
                seen.add(speech.speech_id)
                speeches.append(speech)
        for problem in bad:
            if problem["speech"] not in seen:
                seen.add(problem["speech"])
                problems.append(problem)
        if not items or (max_speeches is not None and len(speeches) >= max_speeches):
            break
        if (page or bad) and len(seen) == before:
            break  # the API repeats a page: nothing further to find
        offset += len(items)
        meta = payload.get("meta")
        total = meta.get("total") if isinstance(meta, Mapping) else None
        if total is not None:
            if isinstance(total, bool) or not isinstance(total, (int, float, str)) or not str(total).isdigit():
                raise FetchError(
                    f"{shown(url)}: meta.total {str(total)[:40]!r} is not a count; fix: check --api points at the "
                    "EP Open Data API v2"
                )
            if offset >= int(total):
                break
    return speeches, problems


def sitting_page_url(media: str, date: dt.date, hhmm: str) -> str:
    """The media content page of the sitting of ``date`` starting at ``hhmm``."""
    return f"{media.rstrip('/')}/content-manager/content-page/{date:%Y%m%d}-{hhmm}-PLENARY"


_NG_STATE = re.compile(r'<script id="ng-state"[^>]*>(.*?)</script>', re.DOTALL)
_NG_ESCAPES = {"&q;": '"', "&s;": "'", "&l;": "<", "&g;": ">", "&a;": "&"}


def parse_sitting_page(html: str, url: str) -> Sitting | None:
    """The recording described by a media content page (None: the page names no plenary event)."""
    match = _NG_STATE.search(html)
    if match is None:
        raise FetchError(f'{url}: no <script id="ng-state"> JSON in the page; fix: check --media')
    raw = match.group(1)
    try:
        state = json.loads(raw)
    except json.JSONDecodeError:
        for code, char in _NG_ESCAPES.items():  # Angular's older TransferState escaping
            raw = raw.replace(code, char)
        try:
            state = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FetchError(f"{url}: the ng-state JSON does not parse ({exc}); fix: check --media") from None
    event = state.get("contentEventKey") if isinstance(state, Mapping) else None
    if not isinstance(event, Mapping) or not event.get("commonId"):
        return None
    if str(event.get("eventType", "PLENARY")) != "PLENARY":
        return None
    player = str(event.get("playerUrl") or "")
    try:
        start = float(event["startTime"])
        end = float(event["endTime"]) if event.get("endTime") is not None else None
    except (KeyError, TypeError, ValueError):
        raise FetchError(f"{url}: the event has no numeric startTime; fix: check --media") from None
    if not player:
        raise FetchError(f"{url}: the event has no playerUrl; fix: check --media")
    audio = urllib.parse.urljoin(url, player)
    check_named(audio, url)  # a page may name http(s) recordings only (an absolute file: survives urljoin)
    return Sitting(str(event["commonId"]), url, start, end, audio)


def find_sittings(
    fetcher: Fetcher, date: dt.date, *, media: str = EP_MEDIA, times: Sequence[str] = SITTING_TIMES
) -> list[Sitting]:
    """The recordings of the sittings held on ``date`` (probing each usual start time)."""
    found: dict[str, Sitting] = {}
    for hhmm in times:
        url = sitting_page_url(media, date, hhmm)
        body, status = fetcher.response(url, accept=(404,))
        if status == 404 or not body.strip():
            continue
        try:
            sitting = parse_sitting_page(body.decode("utf-8", errors="replace"), url)
        except FetchError:
            fetcher.forget(url)  # an error page served as 200 is not kept: a rerun asks again
            raise
        if sitting is not None:
            found.setdefault(sitting.event_id, sitting)
    return sorted(found.values(), key=lambda s: s.start)


_ATTR = re.compile(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)')


def _attrs(line: str) -> dict[str, str]:
    return {k: v.strip('"') for k, v in _ATTR.findall(line.split(":", 1)[1] if ":" in line else "")}


def recording_parts(fetcher: Fetcher, url: str, origin: str | None = None) -> list[Part]:
    """The timed parts of a recording: the segments of an HLS playlist (``.m3u8``; from a master
    playlist, its floor rendition ``LANGUAGE="qaj"``, else its first variant) or the file itself.
    ``origin``: the page that named ``url`` (None: the user typed it); every URL a playlist names
    is fetched with that playlist as its origin (see :mod:`~asr_audit.fresh.fetch`)."""
    if not urllib.parse.urlsplit(url).path.endswith(".m3u8"):
        if origin is not None:
            check_named(url, origin)
        return [Part(0.0, None, url, origin)]
    for _ in range(3):  # master -> media playlist
        lines = [ln.strip() for ln in fetcher.text(url, origin=origin).splitlines() if ln.strip()]
        if not lines or lines[0] != "#EXTM3U":
            fetcher.forget(url)
            raise FetchError(
                f"{shown(url)}: not an HLS playlist (no #EXTM3U line); fix: check the recording's player URL"
            )
        audio = [_attrs(ln) for ln in lines if ln.startswith("#EXT-X-MEDIA:")]
        audio = [a for a in audio if a.get("TYPE") == "AUDIO" and a.get("URI")]
        variants = [lines[i + 1] for i, ln in enumerate(lines[:-1]) if ln.startswith("#EXT-X-STREAM-INF")]
        if not audio and not variants:
            break
        floor = [a for a in audio if a.get("LANGUAGE", "").lower() == FLOOR]
        if audio and not floor:
            langs = ", ".join(sorted({a.get("LANGUAGE", "?") for a in audio}))
            raise FetchError(
                f'{url}: no floor audio rendition (LANGUAGE="{FLOOR}") among {langs}; '
                "fix: check the recording's player URL"
            )
        origin, url = url, urllib.parse.urljoin(url, floor[0]["URI"] if floor else variants[0])
    parts: list[Part] = []
    offset = 0.0
    duration: float | None = None
    for ln in lines:
        if ln.startswith("#EXTINF:"):
            try:
                duration = float(ln.split(":", 1)[1].split(",", 1)[0])
            except ValueError:
                raise FetchError(f"{url}: bad segment duration {ln!r}; fix: check the recording's player URL") from None
        elif not ln.startswith("#"):
            if duration is None:
                raise FetchError(f"{url}: segment {ln} has no #EXTINF duration; fix: check the recording's player URL")
            segment = urllib.parse.urljoin(url, ln)
            check_named(segment, url)
            parts.append(Part(offset, duration, segment, url))
            offset += duration
            duration = None
    if not parts:
        raise FetchError(f"{url}: the HLS playlist lists no segment; fix: check the recording's player URL")
    return parts


def overlapping(parts: Sequence[Part], start: float, end: float) -> list[Part]:
    """The parts that hold any of [start, end) seconds.

    >>> [p.url for p in overlapping([Part(0, 4, "a"), Part(4, 4, "b"), Part(8, 4, "c")], 3.5, 8.0)]
    ['a', 'b']
    """
    return [p for p in parts if p.offset < end and (p.duration is None or p.offset + p.duration > start)]
