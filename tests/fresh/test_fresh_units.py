"""Fresh corpora, pure parts: pause segmentation, locating pieces in a book, the LibriVox feed, downloads."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from asr_audit.errors import AuditError, InputFileError
from asr_audit.fresh.fetch import Fetcher, FetchError
from asr_audit.fresh.librivox import (
    feed_url,
    gutenberg_text_url,
    list_sections,
    parse_books,
    read_speakers,
    strip_gutenberg,
)
from asr_audit.fresh.locate import Book, locate, match_form
from asr_audit.fresh.segment import segment_speech

SR = 16_000


def _speech(seconds: float, rng: np.random.Generator) -> np.ndarray:
    return (0.3 * rng.standard_normal(int(seconds * SR))).astype(np.float32)


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SR), dtype=np.float32)


def test_segments_cut_at_the_longest_pause_in_the_window() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [_silence(0.5), _speech(3, rng), _silence(0.3), _speech(2, rng), _silence(0.8), _speech(4, rng), _silence(0.5)]
    )
    segs = segment_speech(x, min_s=2.0, max_s=7.0)
    assert len(segs) == 2
    # the cut is the 0.8 s pause (3 + 0.3 + 2 s of speech before it), not the 0.3 s one
    assert abs(segs[0].end - (0.5 + 3 + 0.3 + 2 + 0.1)) < 0.05
    assert abs(segs[1].start - (0.5 + 3 + 0.3 + 2 + 0.8 - 0.1)) < 0.05
    assert not any(s.forced for s in segs)


def test_segments_without_pauses_are_forced_and_silence_has_none() -> None:
    rng = np.random.default_rng(1)
    segs = segment_speech(np.concatenate([_silence(0.2), _speech(12.5, rng)]), min_s=2.0, max_s=5.0)
    assert [s.forced for s in segs] == [True, True, False]
    assert all(s.duration <= 5.0 + 0.25 for s in segs)
    assert segment_speech(_silence(3.0)) == []
    with pytest.raises(ValueError):
        segment_speech(_speech(3, rng), min_s=5, max_s=2)


BOOK = (
    "CHAPTER I. It was a bright cold day in April, and the clocks were striking thirteen. "
    "Winston Smith, his chin nuzzled into his breast, slipped quickly through the glass doors. "
    "The hallway smelt of boiled cabbage and old rag mats. At one end of it a coloured poster "
    "had been tacked to the wall."
)


def test_locate_takes_the_books_words_and_gives_edge_words_to_the_piece_that_missed_them() -> None:
    book = Book.from_text(BOOK)
    pieces = [
        "this is a librivox recording all librivox recordings are in the public domain",
        "it was a bright cold day in april and the clocks were striking",
        "fourteen winston smith his chin nuzzled into his breast slipped quickly through the glass doors",
        "the hallway smelt of boiled cabbage and old rag mats",
    ]
    found = locate(book, pieces)
    assert found[0].match < 0.3  # the spoken preamble is not in the book
    assert book.reference(found[1].lo, found[1].hi) == "It was a bright cold day in April, and the clocks were striking"
    # "thirteen" was misheard at the start of the next piece: the book's word goes to that piece
    assert book.reference(found[2].lo, found[2].hi).startswith("thirteen. Winston Smith,")
    assert book.reference(found[3].lo, found[3].hi) == "The hallway smelt of boiled cabbage and old rag mats."
    assert found[3].match == 1.0


def test_locate_without_shared_words_finds_nothing() -> None:
    found = locate(Book.from_text(BOOK), ["completely unrelated words here", ""])
    assert all(f.lo == f.hi for f in found)
    assert match_form("“Don’t!”") == "don't"


def test_parse_books_reads_lists_objects_and_the_end_of_the_feed() -> None:
    book = {
        "id": "7",
        "title": "A Book",
        "language": "English",
        "url_text_source": "http://www.gutenberg.org/ebooks/1342",
        "sections": [
            {
                "id": "70",
                "section_number": "1",
                "title": "One",
                "listen_url": "http://x/1.mp3",
                "playtime": "00:10:05",
                "readers": [{"reader_id": "19", "display_name": "Reader"}],
            },
            {"id": "71", "title": "no audio"},
        ],
    }
    secs = parse_books({"books": [book]}, "u")
    assert len(secs) == 1 and secs[0].playtime == 605 and secs[0].reader_ids == {"19"}
    assert parse_books({"books": {"7": book}}, "u")[0].section_id == "70"
    assert parse_books({"error": "Audiobooks could not be found"}, "u") == []
    with pytest.raises(FetchError, match="expected a JSON object"):
        parse_books([1, 2], "u")
    assert "since=1735689600" in feed_url("https://librivox.org/api", dt.date(2025, 1, 1), 50, 0)


def test_gutenberg_urls_and_texts(tmp_path: Path) -> None:
    assert (
        gutenberg_text_url("https://www.gutenberg.org/etext/84") == "https://www.gutenberg.org/cache/epub/84/pg84.txt"
    )
    assert gutenberg_text_url("http://example.org/book.txt") == "http://example.org/book.txt"
    assert gutenberg_text_url("http://example.org/book.html") is None
    text = "header\n*** START OF THE PROJECT GUTENBERG EBOOK X ***\nThe book.\n*** END OF THE PROJECT GUTENBERG EBOOK X ***\nlicence"
    assert strip_gutenberg(text) == "The book."
    f = tmp_path / "SPEAKERS.TXT"
    f.write_text(
        "; ID | SEX | SUBSET | MINUTES | NAME\n14 | F | train-clean-360 | 25.03 | Kristin LeMoine\n16   | F | train-clean-360 | 25.11 | Alys AtteWater\n"
    )
    assert read_speakers(f) == {"14", "16"}
    f.write_text("14\nnot-an-id\n")
    with pytest.raises(InputFileError, match="SPEAKERS.TXT:2: 'not-an-id' is not a reader id"):
        read_speakers(f)


def test_list_sections_pages_until_the_end_and_filters(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()

    def page(books: list[dict]) -> str:
        p = pages / f"p{len(list(pages.iterdir()))}.json"
        p.write_text(json.dumps({"books": books}))
        return p.as_uri()

    class Paged(Fetcher):
        def json(self, url: str, *, accept: tuple[int, ...] = ()) -> object:
            offset = int(url.split("offset=")[1])
            if offset == 0:
                return {
                    "books": [
                        {
                            "id": "1",
                            "language": "English",
                            "date_catalog": "2025-03-01",
                            "sections": [
                                {"id": "10", "listen_url": "a", "readers": [{"reader_id": "19"}]},
                                {"id": "11", "listen_url": "b", "readers": [{"reader_id": "99"}]},
                            ],
                        },
                        {
                            "id": "2",
                            "language": "French",
                            "sections": [{"id": "20", "listen_url": "c", "readers": [{"reader_id": "19"}]}],
                        },
                    ]
                }
            if offset == 2:
                return {
                    "books": [
                        {
                            "id": "3",
                            "language": "English",
                            "date_catalog": "2026-01-01",
                            "sections": [{"id": "30", "listen_url": "d", "readers": [{"reader_id": "19"}]}],
                        }
                    ]
                }
            return {"error": "Audiobooks could not be found"}

    got = list_sections(
        Paged(), since=dt.date(2025, 1, 1), until=dt.date(2025, 12, 31), readers=frozenset({"19"}), page_size=2
    )
    assert [s.section_id for s in got] == ["10"]


def test_fetcher_errors_name_the_url_and_the_cache_serves_reruns(tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="cannot fetch a ftp URL"):
        Fetcher().get("ftp://example.org/x")
    src = tmp_path / "a.txt"
    src.write_text("hello")
    f = Fetcher(cache=tmp_path / "cache")
    assert f.text(src.as_uri()) == "hello"
    src.write_text("changed")
    assert f.text(src.as_uri()) == "hello"  # cached: a rerun downloads nothing
    with pytest.raises(FetchError, match=r"missing\.txt: .*fix: check the network connection and the URL"):
        Fetcher(retries=0).get((tmp_path / "missing.txt").as_uri())
    with pytest.raises(AuditError):
        Fetcher().json(src.as_uri())


def test_only_http_urls_are_followed_from_an_answer(tmp_path: Path) -> None:
    from asr_audit.fresh.fetch import check_named

    check_named("https://librivox.org/a.mp3", "https://librivox.org/api/feed")
    check_named((tmp_path / "a.mp3").as_uri(), (tmp_path / "feed.json").as_uri())  # a local mirror the user named
    for url in ("file:///etc/hostname", "ftp://x/a.mp3", "data:,x", "a.mp3"):
        with pytest.raises(FetchError, match="refused: only http"):
            check_named(url, "https://librivox.org/api/feed")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    f = Fetcher(cache=tmp_path / "cache")
    with pytest.raises(FetchError, match=f"names a file URL \\({secret.as_uri()}\\)"):
        f.get(secret.as_uri(), origin="https://librivox.org/api/feed")
    assert not (tmp_path / "cache").exists()  # nothing read, nothing copied
    assert f.get(secret.as_uri()) == b"secret"  # typed by the user: read


def test_downloads_have_a_deadline_a_size_cap_and_a_progress_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from hostile_http import hostile  # tests/support

    from asr_audit.fresh import fetch

    monkeypatch.setattr(fetch, "_PROGRESS_EVERY", 0.5)  # a progress line every 0.5 s, not every 5 s
    said: list[str] = []
    f = Fetcher(retries=0, deadline=1.5, progress=said.append)
    with pytest.raises(FetchError, match=r"/drip/x: not downloaded within 1\.5 s \(\d+ bytes received"):
        f.get(f"{hostile().base}/drip/x")
    assert said and said[0].startswith(f"downloading {hostile().base}/drip/x: ")
    with pytest.raises(FetchError, match="larger than 2 MB"):
        Fetcher(retries=0, max_bytes=2_000_000).get(f"{hostile().base}/huge/x")
    with pytest.raises(FetchError, match="ended early"):
        Fetcher(retries=0).get(f"{hostile().base}/truncated/x")


def test_credentials_in_a_url_are_sent_as_a_header_and_never_shown() -> None:
    from asr_audit.fresh.fetch import _request, shown

    req = _request("https://user:p%40ss@example.org/api")
    assert req.full_url == "https://example.org/api" and req.get_header("Authorization") == "Basic dXNlcjpwQHNz"
    assert shown("https://user:p%40ss@example.org/api") == "https://user:***@example.org/api"


def test_sections_listed_twice_are_kept_once_and_paging_stops_early() -> None:
    asked: list[int] = []
    page = {
        "books": [
            {
                "id": "1",
                "language": "English",
                "sections": [
                    {"id": "10", "listen_url": "a", "readers": [{"reader_id": "19"}]},
                    {"id": "10", "listen_url": "a", "readers": [{"reader_id": "19"}]},  # twice on one page
                    {"id": "11", "listen_url": "b", "readers": [{"reader_id": "19"}]},
                ],
            }
        ]
    }

    class Repeating(Fetcher):  # answers the same page at every offset
        def json(self, url: str, *, accept: tuple[int, ...] = ()) -> object:
            asked.append(int(url.split("offset=")[1]))
            return page

    got = list_sections(Repeating(), since=dt.date(2025, 1, 1), page_size=3)
    assert [s.section_id for s in got] == ["10", "11"] and asked == [0, 3]  # the repeat ends the paging
    asked.clear()
    assert [s.section_id for s in list_sections(Repeating(), since=dt.date(2025, 1, 1), max_sections=1)] == ["10"]
    assert asked == [0]  # enough found: no further page


def test_wrong_shape_json_is_a_one_line_error() -> None:
    from asr_audit.fresh.librivox import parse_books

    for payload, message in [
        ({"books": 5}, "'books' is a int"),
        ({"books": [{"id": "1", "sections": 5}]}, "book '1''s 'sections' is a int"),
        ({"books": [{"id": "1", "sections": [{"id": "2", "listen_url": "a", "readers": "x"}]}]}, "'readers' is a str"),
    ]:
        with pytest.raises(FetchError, match=message):
            parse_books(payload, "u")
