"""LibriVox as a source of fresh held-out speech: recent sections, their readers and their texts.

LibriSpeech and every benchmark cut from LibriVox fix a set of readers and recordings; a model
trained on them may have learned their transcripts. LibriVox keeps publishing: sections catalogued
after a model's training cutoff, read by the same volunteers, are speech no model has seen.

* :func:`list_sections` pages through the LibriVox API feed
  (``<api>/feed/audiobooks/?format=json&extended=1&since=<unix time>&limit=..&offset=..``; the
  ``since`` filter is the catalogue date) and keeps the sections of the wanted language read by
  the wanted readers (LibriSpeech speaker ids *are* LibriVox reader ids: :func:`read_speakers`
  reads a ``SPEAKERS.TXT``). A book whose record carries a catalogue date after ``until`` is
  skipped; the API's record layout is read leniently (``books`` as a list or an id-keyed object).
* :func:`gutenberg_text_url` maps a book's ``url_text_source`` (a Project Gutenberg page) to its
  plain-text file; :func:`strip_gutenberg` cuts the licence header and footer.
"""

from __future__ import annotations

import datetime as dt
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asr_audit.errors import InputFileError
from asr_audit.fresh.fetch import Fetcher, FetchError
from asr_audit.outputs import require_regular_file

LIBRIVOX_API = "https://librivox.org/api"
PAGE_SIZE = 50


@dataclass(frozen=True, slots=True)
class Reader:
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class Section:
    """One recorded section (chapter) of a LibriVox book."""

    book_id: str
    book_title: str
    section_id: str
    number: str
    title: str
    listen_url: str
    readers: tuple[Reader, ...]
    language: str
    text_url: str | None  # the book's text source (a Gutenberg page, usually)
    catalog_date: str | None  # as the API gives it, when it does
    playtime: float | None  # seconds
    page: str = ""  # the feed page that named it (the origin of its listen and text URLs)

    @property
    def reader_ids(self) -> frozenset[str]:
        return frozenset(r.id for r in self.readers)


def feed_url(api: str, since: dt.date, limit: int, offset: int) -> str:
    """The API feed URL of one page of audiobooks catalogued since ``since`` (UTC midnight)."""
    stamp = int(dt.datetime(since.year, since.month, since.day, tzinfo=dt.timezone.utc).timestamp())
    query = urllib.parse.urlencode({"format": "json", "extended": 1, "since": stamp, "limit": limit, "offset": offset})
    return f"{api.rstrip('/')}/feed/audiobooks/?{query}"


def _str(value: object) -> str:
    return "" if value is None else str(value).strip()


def _seconds(value: object) -> float | None:
    text = _str(value)
    if not text:
        return None
    if ":" in text:  # "hh:mm:ss"
        total = 0.0
        for part in text.split(":"):
            if not part.strip().isdigit():
                return None
            total = total * 60 + int(part)
        return total
    try:
        return float(text)
    except ValueError:
        return None


def _records(value: object, what: str, url: str) -> list[Any]:
    """A list of records as the API gives it (a list, an id-keyed object, or absent)."""
    if value is None or value == "":
        return []
    if isinstance(value, Mapping):
        return list(value.values())
    if not isinstance(value, list):
        raise FetchError(
            f"{url}: {what} is a {type(value).__name__}, expected a list; fix: check --api points at the LibriVox API"
        )
    return value


def parse_books(payload: Any, url: str) -> list[Section]:
    """The sections of one feed page (``{"books": [...]}``); an ``{"error": ...}`` page is empty.
    A field of the wrong type (``"sections": 5``) is a :class:`FetchError` naming the page."""
    if not isinstance(payload, Mapping):
        raise FetchError(f"{url}: expected a JSON object with 'books'; fix: check --api")
    books = payload.get("books")
    if books is None:
        return []  # the API answers {"error": "Audiobooks could not be found"} past the last page
    out: list[Section] = []
    for book in _records(books, "'books'", url):
        if not isinstance(book, Mapping):
            continue
        sections = _records(book.get("sections"), f"book {_str(book.get('id'))!r}'s 'sections'", url)
        date = _str(book.get("date_catalog") or book.get("catalog_date")) or None
        for sec in sections:
            if not isinstance(sec, Mapping) or not _str(sec.get("listen_url")):
                continue
            readers = tuple(
                Reader(_str(r.get("reader_id")), _str(r.get("display_name")))
                for r in _records(sec.get("readers"), f"section {_str(sec.get('id'))!r}'s 'readers'", url)
                if isinstance(r, Mapping) and _str(r.get("reader_id"))
            )
            out.append(
                Section(
                    book_id=_str(book.get("id")),
                    book_title=_str(book.get("title")),
                    section_id=_str(sec.get("id")),
                    number=_str(sec.get("section_number")),
                    title=_str(sec.get("title")),
                    listen_url=_str(sec.get("listen_url")),
                    readers=readers,
                    language=_str(sec.get("language") or book.get("language")),
                    text_url=_str(book.get("url_text_source")) or None,
                    catalog_date=date,
                    playtime=_seconds(sec.get("playtime")),
                    page=url,
                )
            )
    return out


def list_sections(
    fetcher: Fetcher,
    *,
    since: dt.date,
    until: dt.date | None = None,
    readers: frozenset[str] | None = None,
    language: str | None = "English",
    api: str = LIBRIVOX_API,
    max_pages: int = 200,
    page_size: int = PAGE_SIZE,
    max_sections: int | None = None,
) -> list[Section]:
    """Sections catalogued in [since, until] in ``language`` read by one of ``readers`` (None: anyone),
    each once (a section listed again, on one page or a repeated page, is kept the first time);
    paging stops once ``max_sections`` are found."""
    found: list[Section] = []
    seen: set[str] = set()
    for page in range(max_pages):
        if max_sections is not None and len(found) >= max_sections:
            break
        url = feed_url(api, since, page_size, page * page_size)
        sections = parse_books(fetcher.json(url, accept=(404,)), url)  # past the last page: 404 {"error": ...}
        if not sections:
            break
        new = 0
        for sec in sections:
            key = sec.section_id or sec.listen_url  # section ids name the audio folders and clip ids
            if key in seen:
                continue
            seen.add(key)
            new += 1
            if until is not None and sec.catalog_date and sec.catalog_date[:10] > until.isoformat():
                continue
            if language and sec.language and sec.language.casefold() != language.casefold():
                continue
            if readers is not None and not (sec.reader_ids & readers):
                continue
            found.append(sec)
        if not new:
            break  # the API repeats a page: nothing further to find
    return found if max_sections is None else found[:max_sections]


def read_speakers(path: str | Path) -> frozenset[str]:
    """Reader ids from a LibriSpeech ``SPEAKERS.TXT`` (``ID | SEX | SUBSET | MINUTES | NAME``;
    ``;`` starts a comment) or a plain list with one id per line."""
    path = require_regular_file(path, "give a readable file (LibriSpeech's SPEAKERS.TXT or one id per line)")
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise InputFileError(path, f"cannot read the speakers file ({exc.strerror})", "give a readable file") from None
    ids = set()
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith(";"):
            continue
        first = line.split("|")[0].strip()
        if not first.isdigit():
            raise InputFileError(
                path, f"{first!r} is not a reader id", "use LibriSpeech's SPEAKERS.TXT or one id per line", n
            )
        ids.add(first)
    if not ids:
        raise InputFileError(path, "no reader id in the file", "use LibriSpeech's SPEAKERS.TXT or one id per line")
    return frozenset(ids)


_GUTENBERG = re.compile(r"gutenberg\.org/(?:ebooks|etext|files|cache/epub)/(\d+)")


def gutenberg_text_url(url: str | None) -> str | None:
    """The plain-text URL of a Project Gutenberg book page (a ``.txt`` URL as it is; else None).

    >>> gutenberg_text_url("http://www.gutenberg.org/ebooks/1342")
    'https://www.gutenberg.org/cache/epub/1342/pg1342.txt'
    """
    if not url:
        return None
    m = _GUTENBERG.search(url)
    if m:
        n = m.group(1)
        return f"https://www.gutenberg.org/cache/epub/{n}/pg{n}.txt"
    return url if url.lower().split("?")[0].endswith(".txt") else None


_START = re.compile(r"^\*\*\*\s*START OF (THE|THIS) PROJECT GUTENBERG.*$", re.MULTILINE | re.IGNORECASE)
_END = re.compile(r"^\*\*\*\s*END OF (THE|THIS) PROJECT GUTENBERG.*$", re.MULTILINE | re.IGNORECASE)


def strip_gutenberg(text: str) -> str:
    """The book between Project Gutenberg's ``*** START OF ...`` and ``*** END OF ...`` lines (the
    whole text when they are absent)."""
    start = _START.search(text)
    end = _END.search(text)
    lo = start.end() if start else 0
    hi = end.start() if end and end.start() > lo else len(text)
    return text[lo:hi].strip()


def describe_readers(sections: Iterable[Section]) -> dict[str, str]:
    """Reader id -> name over ``sections``."""
    return {r.id: r.name for s in sections for r in s.readers}
