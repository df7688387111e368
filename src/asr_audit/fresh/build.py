"""Build a fresh held-out corpus: download recent recordings and their texts, cut, locate, write a manifest.

The pipeline for one source (LibriVox here): list the sections of a date range (and of the
benchmark's readers), then per section download the audio and the book's text, cut the
recording at its pauses (:mod:`~asr_audit.fresh.segment`), transcribe the pieces with a model
through the store (cached: a rerun or a killed run transcribes nothing twice), find each piece's
text in the book (:mod:`~asr_audit.fresh.locate`) and keep the pieces whose transcript matches it
well enough. A section that fails (download, decoding, no text source, not found in its book)
is recorded with its reason and the run goes on.

Outputs in the output folder: ``manifest.jsonl`` (the leaderboard manifest fields
``audio_filepath``, ``text``, ``duration``, plus ``id``, ``speaker``, ``language`` and the
provenance of every row: source, book, section, reader, recording URL, text URL, start/end in
the recording, catalogue date, match share and the locating model), the pieces as 16 kHz FLAC
under ``audio/``, and ``fresh.json`` (the settings, the counts and every skipped section).

The reference of a piece is the book's text, not the model's: the model only says *where* in
the book the piece is. Keeping pieces by match share favours pieces that model transcribes
well; use a locating model outside the set being audited (the default is the bundled
``whisper-tiny.en``), and lower ``min_match`` to keep more.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.audio.io import SAMPLE_RATE, to_mono_16k
from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.errors import AuditError, ConfigError
from asr_audit.fresh.fetch import Fetcher, FetchError
from asr_audit.fresh.librivox import LIBRIVOX_API, Section, gutenberg_text_url, list_sections, strip_gutenberg
from asr_audit.fresh.locate import Book, locate
from asr_audit.fresh.segment import segment_speech
from asr_audit.models.base import Backend
from asr_audit.store.sqlite import Store
from asr_audit.store.transcribe import transcribe_corpus

Say = Callable[[str], None]


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
        if self.until is not None and self.until < self.since:
            raise ConfigError(f"--until {self.until} is before --since {self.since}; fix: swap them")
        if not 0 < self.min_s < self.max_s:
            raise ConfigError(f"need 0 < --min-seconds < --max-seconds, got {self.min_s}, {self.max_s}")
        if not 0 <= self.min_match <= 1:
            raise ConfigError(f"--min-match {self.min_match} must be in [0, 1]")
        if self.max_sections is not None and self.max_sections < 1:
            raise ConfigError(f"--max-sections {self.max_sections} must be >= 1")


@dataclass(slots=True)
class FreshResult:
    manifest: Path
    kept: int = 0
    dropped: int = 0  # pieces cut but not found well enough in the text
    sections: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0


def decode(data: bytes, what: str) -> np.ndarray:
    """Any audio file soundfile reads (WAV, FLAC, OGG, MP3 with libsndfile >= 1.1) as 16 kHz mono."""
    import soundfile as sf

    try:
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=False)
    except Exception as exc:  # noqa: BLE001 - libsndfile raises several types for a bad file
        raise AuditError(f"{what}: cannot decode the audio ({exc}); fix: check the URL serves audio") from None
    return to_mono_16k(samples, rate)


def _text_for(section: Section, config: FreshConfig, fetcher: Fetcher, books: dict[str, Book]) -> tuple[str, Book]:
    """The section's plain-text URL and its book (downloaded once per URL)."""
    url = config.text_url or gutenberg_text_url(section.text_url)
    if url is None:
        raise AuditError(f"book {section.book_id} has no plain-text source ({section.text_url or 'none given'})")
    book = books.get(url)
    if book is None:
        book = books[url] = Book.from_text(strip_gutenberg(fetcher.text(url)))
    return url, book


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
    import soundfile as sf

    say = say or (lambda _msg: None)
    out.mkdir(parents=True, exist_ok=True)
    sections = list_sections(
        fetcher,
        since=config.since,
        until=config.until,
        readers=config.readers,
        language=config.language,
        api=config.api,
    )
    if config.max_sections is not None:
        sections = sections[: config.max_sections]
    if not sections:
        who = "any reader" if config.readers is None else f"{len(config.readers)} given reader(s)"
        raise AuditError(
            f"no {config.language} section catalogued since {config.since} by {who} at {config.api}; "
            "fix: widen the date range or the readers"
        )
    say(f"{len(sections)} section(s) catalogued since {config.since} match")
    result = FreshResult(manifest=out / "manifest.jsonl", sections=len(sections))
    books: dict[str, Book] = {}
    rows: list[dict[str, Any]] = []
    located_by = backend.identity().key
    for n, sec in enumerate(sections, 1):
        label = f"section {sec.section_id} ({sec.book_title} {sec.number})"
        try:
            text_url, book = _text_for(sec, config, fetcher, books)
            samples = decode(fetcher.get(sec.listen_url), sec.listen_url)
            pieces = segment_speech(samples, min_s=config.min_s, max_s=config.max_s)
            if not pieces:
                raise AuditError("no speech found in the recording")
            folder = out / "audio" / sec.section_id
            folder.mkdir(parents=True, exist_ok=True)
            clips = []
            for k, p in enumerate(pieces):
                path = folder / f"{sec.section_id}_{k:04d}.flac"
                if not path.is_file():  # written under a temporary name: a killed run leaves no half file
                    a, b = int(p.start * SAMPLE_RATE), int(p.end * SAMPLE_RATE)
                    tmp = path.with_name(f".{path.name}.tmp")
                    sf.write(tmp, samples[a:b], SAMPLE_RATE, format="FLAC")
                    tmp.replace(path)
                clips.append(Clip(id=f"{sec.section_id}_{k:04d}", reference="", audio_path=str(path)))
            outcome = transcribe_corpus(
                backend, Corpus(name="fresh", split="pieces", source=str(out), clips=tuple(clips)), store
            )
            hyps = {r.clip_id: r.hypothesis for r in outcome.records}
            order = [c.id for c in clips]
            found = locate(book, [hyps.get(cid, "") for cid in order])
        except (AuditError, FetchError) as exc:
            result.skipped.append({"section": sec.section_id, "url": sec.listen_url, "reason": str(exc)})
            say(f"[{n}/{len(sections)}] {label}: skipped ({exc})")
            continue
        kept = 0
        reader = sec.readers[0] if sec.readers else None
        for piece, loc, cid in zip(pieces, found, order):
            if loc.lo >= loc.hi or loc.match < config.min_match or cid not in hyps:
                result.dropped += 1
                continue
            kept += 1
            result.seconds += piece.duration
            rows.append(
                {
                    "audio_filepath": str(Path("audio") / sec.section_id / f"{cid}.flac"),
                    "text": book.reference(loc.lo, loc.hi),
                    "duration": round(piece.duration, 3),
                    "id": f"librivox/{reader.id if reader else 'unknown'}/{sec.book_id}/{cid}",
                    "speaker": reader.id if reader else None,
                    "language": config.language,
                    "source": "librivox",
                    "book_id": sec.book_id,
                    "book_title": sec.book_title,
                    "section_id": sec.section_id,
                    "reader": reader.name if reader else None,
                    "listen_url": sec.listen_url,
                    "text_url": text_url,
                    "start": round(piece.start, 3),
                    "end": round(piece.end, 3),
                    "catalog_date": sec.catalog_date,
                    "match": round(loc.match, 4),
                    "located_by": located_by,
                }
            )
        result.kept += kept
        say(f"[{n}/{len(sections)}] {label}: {kept} of {len(pieces)} piece(s) kept")
    with open(result.manifest, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n")
    summary = {
        "source": "librivox",
        "config": {
            k: (sorted(v) if isinstance(v, frozenset) else str(v) if isinstance(v, dt.date) else v)
            for k, v in asdict(config).items()
        },
        "located_by": located_by,
        "sections": result.sections,
        "kept": result.kept,
        "dropped": result.dropped,
        "seconds": round(result.seconds, 3),
        "skipped": result.skipped,
    }
    (out / "fresh.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if not rows:
        raise AuditError(
            f"no utterance kept from {result.sections} section(s) ({len(result.skipped)} skipped; see {out / 'fresh.json'}); "
            "fix: widen the date range or the readers, or lower --min-match"
        )
    return result
