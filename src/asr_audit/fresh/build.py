"""Build a fresh held-out corpus: download recent recordings and their texts, cut, locate, write a manifest.

The pipeline, shared by every source: list the items of a date range (LibriVox sections, of the
benchmark's readers; European Parliament speeches, in one original language), then per item
download the audio and its text, cut the recording at its pauses
(:mod:`~asr_audit.fresh.segment`), transcribe the pieces with a model through the store (cached:
a rerun or a killed run transcribes nothing twice), find each piece's text in the item's text
(:mod:`~asr_audit.fresh.locate`) and keep the pieces whose transcript matches it well enough
(:func:`cut_and_locate`, :func:`collect`). An item that fails (download, decoding, no text, a
malformed record, not found in its text) is recorded with its reason and the run goes on.

Outputs in the output folder (:func:`write_outputs`): ``manifest.jsonl`` (the leaderboard manifest
fields ``audio_filepath``, ``text``, ``duration``, plus ``id``, ``speaker``, ``language`` and the
provenance of every row: for LibriVox the book, section, reader, recording URL, text URL,
start/end in the recording and catalogue date; for the Parliament the sitting date, speech id,
speaker, time stamps, text and recording URLs, retrieval time and content hashes; both with the
match share and the locating model), the pieces as 16 kHz FLAC under ``audio/``, and
``fresh.json`` (the settings, the counts and every skipped item).

The reference of a piece is the source's text, not the model's: the model only says *where* in
the text the piece is. Keeping pieces by match share favours pieces that model transcribes
well; use a locating model outside the set being audited (the default is the bundled
``whisper-tiny.en``), and lower ``min_match`` to keep more.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from asr_audit.audio.io import SAMPLE_RATE, to_mono_16k
from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.errors import AuditError, ConfigError, MissingExtraError, require
from asr_audit.fresh.europarl import (
    EP_API,
    EP_MEDIA,
    SITTING_TIMES,
    Part,
    Sitting,
    Speech,
    find_sittings,
    list_speeches,
    overlapping,
    recording_parts,
    sitting_page_url,
)
from asr_audit.fresh.europarl import LANGUAGES as EP_LANGUAGES
from asr_audit.fresh.fetch import Fetcher, shown
from asr_audit.fresh.librivox import LIBRIVOX_API, Section, gutenberg_text_url, list_sections, strip_gutenberg
from asr_audit.fresh.locate import Book, Located, locate
from asr_audit.fresh.segment import Segment, segment_speech
from asr_audit.models.base import Backend
from asr_audit.store.base import Store
from asr_audit.store.transcribe import transcribe_corpus

Say = Callable[[str], None]
T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class FreshConfig:
    """What to fetch and how to cut it."""

    since: dt.date
    until: dt.date | None = None
    readers: frozenset[str] | None = None
    language: str = "English"
    api: str = LIBRIVOX_API
    max_sections: int | None = None
    min_s: float = 2.0
    max_s: float = 20.0
    min_match: float = 0.8
    text_url: str | None = None  # one text for every section (else each book's Gutenberg text)

    def __post_init__(self) -> None:
        check_settings(self.since, self.until, self.min_s, self.max_s, self.min_match)
        if self.max_sections is not None and self.max_sections < 1:
            raise ConfigError(f"--max-sections {self.max_sections} must be >= 1")


def check_settings(since: dt.date, until: dt.date | None, min_s: float, max_s: float, min_match: float) -> None:
    """The date range and cut settings every fresh source shares (a :class:`ConfigError` naming the flag)."""
    if until is not None and until < since:
        raise ConfigError(f"--until {until} is before --since {since}; fix: swap them")
    if not 0 < min_s < max_s:
        raise ConfigError(f"need 0 < --min-seconds < --max-seconds, got {min_s}, {max_s}")
    if not 0 <= min_match <= 1:
        raise ConfigError(f"--min-match {min_match} must be in [0, 1]")


@dataclass(slots=True)
class FreshResult:
    manifest: Path
    kept: int = 0
    dropped: int = 0  # pieces cut but not found well enough in the text
    items: int = 0  # sections (LibriVox) or speeches (European Parliament) listed
    skipped: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Piece:
    """One cut of a recording, written as ``path`` (relative to the output folder), and where its
    transcript lies in the text (``transcribed``: the model gave a transcript)."""

    clip_id: str
    path: Path
    segment: Segment
    located: Located
    transcribed: bool

    def kept(self, min_match: float) -> bool:
        """Whether the piece was found in the text with at least ``min_match`` of its words."""
        loc = self.located
        return self.transcribed and loc.lo < loc.hi and loc.match >= min_match


def decode(data: bytes, what: str) -> np.ndarray:
    """Any audio file soundfile reads (WAV, FLAC, OGG, MP3 with libsndfile >= 1.1), else any that
    FFmpeg reads through PyAV (MPEG-TS or ADTS with AAC, M4A: the usual HLS segments), as 16 kHz mono."""
    import soundfile as sf

    try:
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=False)
    except Exception as exc:  # noqa: BLE001 - libsndfile raises several types for a bad file
        reason = getattr(exc, "error_string", None) or str(exc)  # libsndfile's own words, not the buffer's repr
        samples, rate = _decode_ffmpeg(data, what, reason)
    return to_mono_16k(samples, rate)


def _soundfile_reads(data: bytes) -> bool:
    """Whether libsndfile recognises ``data``'s format (from its header)."""
    import soundfile as sf

    try:
        sf.info(io.BytesIO(data))
    except Exception:  # noqa: BLE001 - libsndfile raises several types for a bad file
        return False
    return True


def _decode_ffmpeg(data: bytes, what: str, reason: str) -> tuple[np.ndarray, int]:
    """(samples shaped (n, channels), rate) of what FFmpeg decodes through PyAV; ``reason`` is
    libsndfile's, named in the one-line error when FFmpeg cannot decode it either."""
    try:
        av = require("av", "audio")
    except MissingExtraError:
        raise AuditError(
            f"{what}: cannot decode the audio ({reason}); fix: check the URL serves audio; AAC or MPEG-TS "
            "(HLS) audio needs PyAV: pip install 'asr-audit[audio]'"
        ) from None
    chunks: list[np.ndarray] = []
    rate = 0
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                raise ValueError("no audio stream")
            # planar float frames of the stream's own rate and layout; to_mono_16k downmixes and resamples
            resampler = av.AudioResampler(format="fltp")
            for frame in container.decode(audio=0):
                for out in resampler.resample(frame):
                    rate = out.sample_rate
                    chunks.append(out.to_ndarray())
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray())
    except Exception as exc:  # noqa: BLE001 - FFmpeg raises several types for a bad file
        raise AuditError(
            f"{what}: cannot decode the audio ({reason}; FFmpeg: {' '.join(str(exc).split())}); "
            "fix: check the URL serves audio"
        ) from None
    if not chunks or rate <= 0:
        raise AuditError(f"{what}: cannot decode the audio (no audio samples); fix: check the URL serves audio")
    return np.concatenate(chunks, axis=1).T, rate


def cut_and_locate(
    samples: np.ndarray,
    book: Book,
    key: str,
    *,
    out: Path,
    min_s: float,
    max_s: float,
    backend: Backend,
    store: Store,
) -> list[Piece]:
    """Cut a 16 kHz recording at its pauses into ``out/audio/<key>/<key>_NNNN.flac``, transcribe the
    pieces through the store (cached) and locate each in ``book``."""
    import soundfile as sf

    segments = segment_speech(samples, min_s=min_s, max_s=max_s)
    if not segments:
        raise AuditError("no speech found in the recording")
    folder = out / "audio" / key
    folder.mkdir(parents=True, exist_ok=True)
    clips = []
    for k, p in enumerate(segments):
        path = folder / f"{key}_{k:04d}.flac"
        if not path.is_file():  # written under a temporary name: a killed run leaves no half file
            a, b = int(p.start * SAMPLE_RATE), int(p.end * SAMPLE_RATE)
            tmp = path.with_name(f".{path.name}.tmp")
            sf.write(tmp, samples[a:b], SAMPLE_RATE, format="FLAC")
            tmp.replace(path)
        clips.append(Clip(id=f"{key}_{k:04d}", reference="", audio_path=str(path)))
    outcome = transcribe_corpus(
        backend, Corpus(name="fresh", split="pieces", source=str(out), clips=tuple(clips)), store
    )
    hyps = {r.clip_id: r.hypothesis for r in outcome.records}
    found = locate(book, [hyps.get(c.id, "") for c in clips])
    return [
        Piece(c.id, Path("audio") / key / f"{c.id}.flac", seg, loc, c.id in hyps)
        for c, seg, loc in zip(clips, segments, found)
    ]


Rows = list[dict[str, Any]]


def kept_rows(
    pieces: Sequence[Piece],
    book: Book,
    *,
    min_match: float,
    located_by: str,
    head: Callable[[Piece], dict[str, Any]],
    tail: Callable[[Piece], dict[str, Any]],
    shift: float = 0.0,
) -> tuple[Rows, float]:
    """The manifest rows of the pieces found in ``book`` with at least ``min_match`` of their words,
    and their seconds. A row: the clip's path, reference text and duration, ``head``'s fields (id,
    speaker, language, source and the source's provenance), the piece's start and end in the
    recording (plus ``shift`` seconds, where the audio read began), ``tail``'s fields, the match
    share and the locating model."""
    rows: Rows = []
    seconds = 0.0
    for p in pieces:
        if not p.kept(min_match):
            continue
        seconds += p.segment.duration
        rows.append(
            {
                "audio_filepath": str(p.path),
                "text": book.reference(p.located.lo, p.located.hi),
                "duration": round(p.segment.duration, 3),
                **head(p),
                "start": round(shift + p.segment.start, 3),
                "end": round(shift + p.segment.end, 3),
                **tail(p),
                "match": round(p.located.match, 4),
                "located_by": located_by,
            }
        )
    return rows, seconds


def collect(
    items: Sequence[T],
    process: Callable[[T], tuple[Rows, float, int]],
    result: FreshResult,
    *,
    label: Callable[[T], str],
    skip: Callable[[T], dict[str, str]],
    say: Say,
) -> Rows:
    """Run ``process`` on every item (it returns the rows kept, their seconds and the pieces cut);
    an item that fails with an :class:`AuditError` is recorded in ``result.skipped`` (``skip``'s
    fields plus the reason) and the run goes on."""
    rows: Rows = []
    for n, item in enumerate(items, 1):
        try:
            kept, seconds, cut = process(item)
        except AuditError as exc:  # FetchError included
            result.skipped.append({**skip(item), "reason": str(exc)})
            say(f"[{n}/{len(items)}] {label(item)}: skipped ({exc})")
            continue
        rows += kept
        result.kept += len(kept)
        result.dropped += cut - len(kept)
        result.seconds += seconds
        say(f"[{n}/{len(items)}] {label(item)}: {len(kept)} of {cut} piece(s) kept")
    return rows


def write_outputs(
    out: Path,
    result: FreshResult,
    rows: Rows,
    *,
    source: str,
    config: Any,
    located_by: str,
    unit: str,
    units: str,
    fix: str,
) -> None:
    """Write ``manifest.jsonl`` (None fields dropped) and ``fresh.json`` (the ``source``, the
    settings, the locating model, the items listed under the key ``units``, the counts and the
    skipped items); raise when no row was kept, naming the ``unit`` listed and the ``fix``."""
    with open(result.manifest, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n")
    summary = {
        "source": source,
        "config": config_summary(config),
        "located_by": located_by,
        units: result.items,
        "kept": result.kept,
        "dropped": result.dropped,
        "seconds": round(result.seconds, 3),
        "skipped": result.skipped,
    }
    (out / "fresh.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if not rows:
        raise AuditError(
            f"no utterance kept from {result.items} {unit}(s) ({len(result.skipped)} skipped; "
            f"see {out / 'fresh.json'}); fix: {fix}"
        )


def config_summary(config: Any) -> dict[str, Any]:
    """A config dataclass as JSON values (sets sorted, dates as ISO strings)."""
    return {
        k: (
            sorted(v)
            if isinstance(v, frozenset)
            else str(v)
            if isinstance(v, dt.date)
            else shown(v)
            if isinstance(v, str)
            else v
        )
        for k, v in asdict(config).items()
    }


def _text_for(section: Section, config: FreshConfig, fetcher: Fetcher, books: dict[str, Book]) -> tuple[str, Book]:
    """The section's plain-text URL and its book (downloaded once per URL)."""
    url = config.text_url or gutenberg_text_url(section.text_url)
    if url is None:
        raise AuditError(f"book {section.book_id} has no plain-text source ({section.text_url or 'none given'})")
    book = books.get(url)
    if book is None:
        origin = None if config.text_url else section.page  # --text-url is the user's; a book's is the API's
        book = books[url] = Book.from_text(strip_gutenberg(fetcher.text(url, origin=origin)))
    return url, book


def _decoded(fetcher: Fetcher, url: str, origin: str | None) -> np.ndarray:
    """The audio at ``url`` (named by ``origin``), decoded; a body that is not audio (an error page
    served as 200) is dropped from the download cache, so a rerun asks again."""
    data = fetcher.get(url, origin=origin)
    try:
        return decode(data, url)
    except AuditError:
        fetcher.forget(url)
        raise


def build_librivox(
    config: FreshConfig,
    out: Path,
    *,
    backend: Backend,
    store: Store,
    fetcher: Fetcher,
    say: Say | None = None,
) -> FreshResult:
    """Fetch, cut, locate and write the manifest (see the module docstring)."""
    say = say or (lambda _msg: None)
    out.mkdir(parents=True, exist_ok=True)
    sections = list_sections(
        fetcher,
        since=config.since,
        until=config.until,
        readers=config.readers,
        language=config.language,
        api=config.api,
        max_sections=config.max_sections,
    )
    if not sections:
        who = "any reader" if config.readers is None else f"{len(config.readers)} given reader(s)"
        raise AuditError(
            f"no {config.language} section catalogued since {config.since} by {who} at {shown(config.api)}; "
            "fix: widen the date range or the readers"
        )
    say(f"{len(sections)} section(s) catalogued since {config.since} match")
    result = FreshResult(manifest=out / "manifest.jsonl", items=len(sections))
    books: dict[str, Book] = {}
    located_by = backend.identity().key

    def process(sec: Section) -> tuple[Rows, float, int]:
        text_url, book = _text_for(sec, config, fetcher, books)
        samples = _decoded(fetcher, sec.listen_url, sec.page)
        pieces = cut_and_locate(
            samples, book, sec.section_id, out=out, min_s=config.min_s, max_s=config.max_s, backend=backend, store=store
        )
        reader = sec.readers[0] if sec.readers else None
        rows, seconds = kept_rows(
            pieces,
            book,
            min_match=config.min_match,
            located_by=located_by,
            head=lambda p: {
                "id": f"librivox/{reader.id if reader else 'unknown'}/{sec.book_id}/{p.clip_id}",
                "speaker": reader.id if reader else None,
                "language": config.language,
                "source": "librivox",
                "book_id": sec.book_id,
                "book_title": sec.book_title,
                "section_id": sec.section_id,
                "reader": reader.name if reader else None,
                "listen_url": sec.listen_url,
                "text_url": text_url,
            },
            tail=lambda _p: {"catalog_date": sec.catalog_date},
        )
        return rows, seconds, len(pieces)

    rows = collect(
        sections,
        process,
        result,
        label=lambda sec: f"section {sec.section_id} ({sec.book_title} {sec.number})",
        skip=lambda sec: {"section": sec.section_id, "url": sec.listen_url},
        say=say,
    )
    write_outputs(
        out,
        result,
        rows,
        source="librivox",
        config=config,
        located_by=located_by,
        unit="section",
        units="sections",
        fix="widen the date range or the readers, or lower --min-match",
    )
    return result


@dataclass(frozen=True, slots=True, kw_only=True)
class EuroparlConfig:
    """Which plenary speeches to fetch and how to cut them."""

    since: dt.date
    until: dt.date | None = None  # None: today
    language: str = "en"  # ISO 639-1 of the speeches' original language
    api: str = EP_API
    media: str = EP_MEDIA
    max_speeches: int | None = None
    min_s: float = 2.0
    max_s: float = 20.0
    min_match: float = 0.8
    margin: float = 1.0  # seconds of recording kept before and after each speech's time stamps

    def __post_init__(self) -> None:
        check_settings(self.since, self.until, self.min_s, self.max_s, self.min_match)
        if self.language not in EP_LANGUAGES:
            raise ConfigError(
                f"--language {self.language!r} is not an EU language code; fix: use one of "
                + ", ".join(sorted(EP_LANGUAGES))
            )
        if self.max_speeches is not None and self.max_speeches < 1:
            raise ConfigError(f"--max-speeches {self.max_speeches} must be >= 1")
        if self.margin < 0:
            raise ConfigError(f"--margin {self.margin} must be >= 0")


def read_window(fetcher: Fetcher, parts: Sequence[Part], start: float, end: float) -> np.ndarray:
    """Seconds [start, end) of a recording given as timed parts, as 16 kHz mono: only the parts that
    hold the window are downloaded (cached) and decoded."""
    start = max(0.0, start)
    needed = overlapping(parts, start, end)
    if not needed:
        total = sum(p.duration or 0.0 for p in parts)
        raise AuditError(
            f"{parts[0].url}: seconds {start:.1f}-{end:.1f} lie past the recording's end ({total:.1f} s); "
            "fix: the speech's time stamps do not fall in this recording"
        )
    bodies = [fetcher.get(p.url, origin=p.origin) for p in needed]
    try:
        if _soundfile_reads(bodies[0]):  # whole files (WAV, FLAC, MP3...): each part decoded on its own
            audio = np.concatenate([decode(body, p.url) for body, p in zip(bodies, needed)])
        else:
            # HLS MPEG-TS segments are slices of one continuous stream: their bytes are joined and decoded
            # once, as players do. Decoding each on its own would restart the AAC decoder at every
            # segment, adding its priming samples (~21 ms at 48 kHz) per segment and shifting the window.
            more = f" (+{len(needed) - 1} following segment(s))" if len(needed) > 1 else ""
            audio = decode(b"".join(bodies), needed[0].url + more)
    except AuditError:
        for p in needed:  # not audio (an error page served as 200): a rerun asks again
            fetcher.forget(p.url)
        raise
    a = int(round((start - needed[0].offset) * SAMPLE_RATE))
    b = int(round((end - needed[0].offset) * SAMPLE_RATE))
    return audio[a:b]


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("_") or "speech"


def build_europarl(
    config: EuroparlConfig,
    out: Path,
    *,
    backend: Backend,
    store: Store,
    fetcher: Fetcher,
    say: Say | None = None,
) -> FreshResult:
    """List the speeches of a date range, cut each one's window from its sitting's recording,
    locate the pieces in the speech's verbatim text and write the manifest (``docs/fresh.md``)."""
    say = say or (lambda _msg: None)
    out.mkdir(parents=True, exist_ok=True)
    until = config.until or dt.date.today()
    speeches, problems = list_speeches(
        fetcher,
        since=config.since,
        until=until,
        language=config.language,
        api=config.api,
        max_speeches=config.max_speeches,
    )
    if config.max_speeches is not None:
        speeches = speeches[: config.max_speeches]
    if not speeches and not problems:
        raise AuditError(
            f"no plenary speech in '{config.language}' from {config.since} to {until} at {shown(config.api)}; "
            "fix: widen the date range or check --language"
        )
    say(f"{len(speeches)} '{config.language}' speech(es) from {config.since} to {until}")
    result = FreshResult(manifest=out / "manifest.jsonl", items=len(speeches) + len(problems))
    for problem in problems:
        result.skipped.append(problem)
        say(f"speech {problem['speech']}: skipped ({problem['reason']})")
    sittings: dict[str, list[Sitting] | AuditError] = {}
    parts: dict[str, list[Part]] = {}
    located_by = backend.identity().key

    def sitting_for(speech: Speech) -> Sitting:
        found = sittings.get(speech.sitting_date)
        if found is None:
            try:
                found = find_sittings(fetcher, dt.date.fromisoformat(speech.sitting_date), media=config.media)
            except AuditError as exc:
                found = exc
            sittings[speech.sitting_date] = found
        if isinstance(found, AuditError):
            raise found
        if not found:
            page = sitting_page_url(config.media, dt.date.fromisoformat(speech.sitting_date), "{HHMM}")
            raise AuditError(
                f"no recording of the sitting of {speech.sitting_date} at {shown(page)} (HHMM in {', '.join(SITTING_TIMES)}); "
                "fix: check --media, or wait until the Parliament publishes the sitting's video"
            )
        for sitting in reversed(found):
            if sitting.covers(speech.start):
                return sitting
        raise AuditError(
            f"speech {speech.speech_id} starts at {speech.start:%Y-%m-%dT%H:%M:%SZ}, outside the recordings of "
            f"{speech.sitting_date} ({', '.join(shown(s.page_url) for s in found)}); fix: leave this speech out"
        )

    def process(speech: Speech) -> tuple[Rows, float, int]:
        sitting = sitting_for(speech)
        if sitting.audio_url not in parts:
            parts[sitting.audio_url] = recording_parts(fetcher, sitting.audio_url, origin=sitting.page_url)
        offset = speech.start.timestamp() - sitting.start - config.margin
        end = speech.end.timestamp() - sitting.start + config.margin
        samples = read_window(fetcher, parts[sitting.audio_url], offset, end)
        book = Book.from_text(speech.text)
        key = _safe(speech.speech_id)
        pieces = cut_and_locate(
            samples, book, key, out=out, min_s=config.min_s, max_s=config.max_s, backend=backend, store=store
        )
        text_sha = hashlib.sha256(speech.text.encode("utf-8")).hexdigest()
        retrieved = fetcher.retrieved(speech.url)
        rows, seconds = kept_rows(
            pieces,
            book,
            min_match=config.min_match,
            located_by=located_by,
            head=lambda p: {
                "id": f"europarl/{speech.sitting_date}/{p.clip_id}",
                "speaker": speech.person_id or speech.speaker,
                "language": speech.language,
                "source": "europarl",
                "sitting_date": speech.sitting_date,
                "speech_id": speech.speech_id,
                "speaker_name": speech.speaker,
                "group": speech.group,
                "speech_start": speech.start.isoformat(timespec="seconds"),
                "speech_end": speech.end.isoformat(timespec="seconds"),
                "text_url": shown(speech.url),
                "recording_url": shown(sitting.audio_url),
                "media_page": shown(sitting.page_url),
            },
            tail=lambda p: {
                "retrieved": retrieved,
                "text_sha256": text_sha,
                "audio_sha256": hashlib.sha256((out / p.path).read_bytes()).hexdigest(),
            },
            shift=max(0.0, offset),
        )
        return rows, seconds, len(pieces)

    rows = collect(
        speeches,
        process,
        result,
        label=lambda s: f"speech {s.speech_id} ({s.speaker}, {s.sitting_date})",
        skip=lambda s: {"speech": s.speech_id, "url": shown(s.url)},
        say=say,
    )
    write_outputs(
        out,
        result,
        rows,
        source="europarl",
        config=config,
        located_by=located_by,
        unit="speech",
        units="speeches",
        fix="widen the date range, or lower --min-match",
    )
    return result
