"""``asr-audit corpus fresh-librivox`` and ``fresh-europarl``: fresh held-out corpora from public sources."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from asr_audit.cli import app, console, err_console, examples, split_list
from asr_audit.cli.common import STORE_HELP, store_session
from asr_audit.errors import ConfigError
from asr_audit.outputs import check_output_dir, mark_output_dir

if TYPE_CHECKING:
    from asr_audit.fresh.build import FreshResult

corpus_app = typer.Typer(
    help="Build corpora: fresh held-out speech recorded after a model's training.",
    epilog=examples(
        ("asr-audit corpus fresh-librivox --since 2025-06-01 -o fresh/", "a fresh LibriVox corpus"),
        ("asr-audit corpus fresh-europarl --since 2025-09-08 --language en -o ep/", "fresh English plenary speeches"),
    ),
    no_args_is_help=True,
)
app.add_typer(corpus_app, name="corpus")


def _date(value: str | None, flag: str) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"{flag} {value!r} is not a date; fix: write it as YYYY-MM-DD") from None


def _build(
    build: Callable[..., FreshResult],
    config: object,
    out: Path,
    model: str,
    downloads: Path | None,
    store: Path | None,
    items: str,
    force: bool,
    deadline: float,
    max_mb: float,
) -> None:
    """Run a fresh-corpus ``build`` with the locating ``model``, the download cache and the store,
    and print what it kept (``items``: what the source lists, e.g. ``section(s)``). The output
    folder is checked first (a file, or a non-empty folder of other files without ``force``)."""
    from asr_audit.fresh.fetch import Fetcher

    check_output_dir(out, "--out", force)
    if downloads is not None:
        check_output_dir(downloads, "--downloads", force=True)
    if not deadline > 0 or deadline != deadline:
        raise ConfigError(f"--download-deadline {deadline} must be > 0 seconds")
    if not max_mb > 0 or max_mb != max_mb:
        raise ConfigError(f"--max-download-mb {max_mb} must be > 0")
    fetcher = Fetcher(
        cache=downloads or out / ".downloads",
        deadline=deadline,
        max_bytes=int(max_mb * 1e6),
        progress=lambda m: err_console.print(m, highlight=False, markup=False),
    )
    from asr_audit.models.base import load_backend

    backend = load_backend(model)
    mark_output_dir(out)
    with store_session(store) as st:
        result = build(
            config, out, backend=backend, store=st, fetcher=fetcher, say=lambda m: err_console.print(m, highlight=False)
        )
    console.print(
        f"kept {result.kept} piece(s) ({result.seconds / 60:.1f} min) from {result.items} {items}; "
        f"{result.dropped} not found in the text, {len(result.skipped)} {items} skipped"
    )
    console.print(f"wrote {result.manifest}")


@corpus_app.command(
    "fresh-librivox",
    epilog=examples(
        (
            "asr-audit corpus fresh-librivox --since 2025-06-01 --readers LibriSpeech/SPEAKERS.TXT -o fresh-librivox/",
            "new recordings by LibriSpeech's own readers, with their books' text",
        ),
        (
            "asr-audit corpus fresh-librivox --since 2025-06-01 --reader-ids 19,26 --max-sections 5 -o fresh/",
            "a small corpus from two readers",
        ),
    ),
)
def fresh_librivox(
    since: str = typer.Option(
        ..., "--since", help="First catalogue date, YYYY-MM-DD (after the model's training cutoff)."
    ),
    until: str | None = typer.Option(None, "--until", help="Last catalogue date, YYYY-MM-DD (default: today)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (manifest.jsonl, audio/, fresh.json)."),
    readers: Path | None = typer.Option(
        None, "--readers", help="LibriSpeech SPEAKERS.TXT (or one reader id per line): keep only these readers."
    ),
    reader_ids: str | None = typer.Option(None, "--reader-ids", help="Comma-separated LibriVox reader ids to keep."),
    language: str = typer.Option("English", "--language", help="LibriVox language name of the sections."),
    model: str = typer.Option(
        "whisper-tiny.en", "--model", "-m", help="Model that locates each piece in the book text (not the reference)."
    ),
    min_match: float = typer.Option(
        0.8, "--min-match", help="Keep pieces whose transcript matches this share of words."
    ),
    min_seconds: float = typer.Option(2.0, "--min-seconds", help="Shortest piece."),
    max_seconds: float = typer.Option(20.0, "--max-seconds", help="Longest piece."),
    max_sections: int | None = typer.Option(None, "--max-sections", help="Stop after this many sections."),
    api: str = typer.Option("https://librivox.org/api", "--api", help="LibriVox API base URL."),
    text_url: str | None = typer.Option(
        None, "--text-url", help="One plain-text URL for every section (default: each book's Gutenberg text)."
    ),
    downloads: Path | None = typer.Option(
        None, "--downloads", help="Download cache folder (default: OUT/.downloads); reruns fetch nothing twice."
    ),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty folder that is not asr-audit output."),
    download_deadline: float = typer.Option(
        1800.0, "--download-deadline", help="Seconds one download may take in all (a slow server is given up)."
    ),
    max_download_mb: float = typer.Option(512.0, "--max-download-mb", help="Largest recording downloaded (MB)."),
) -> None:
    """Fetch LibriVox sections catalogued in a date range, cut them at pauses, find each piece's text
    in its book, and write a manifest with provenance."""
    from asr_audit.fresh.build import FreshConfig, build_librivox
    from asr_audit.fresh.librivox import read_speakers

    ids: set[str] = set(split_list(reader_ids, "--reader-ids") or [])
    if readers is not None:
        ids |= read_speakers(readers)
    config = FreshConfig(
        since=_date(since, "--since") or dt.date.today(),
        until=_date(until, "--until"),
        readers=frozenset(ids) if ids else None,
        language=language,
        api=api,
        max_sections=max_sections,
        min_s=min_seconds,
        max_s=max_seconds,
        min_match=min_match,
        text_url=text_url,
    )
    _build(
        build_librivox, config, out, model, downloads, store, "section(s)", force, download_deadline, max_download_mb
    )


@corpus_app.command(
    "fresh-europarl",
    epilog=examples(
        (
            "asr-audit corpus fresh-europarl --since 2025-09-08 --until 2025-09-11 --language en -o fresh-europarl/",
            "English plenary speeches of one session week, with their verbatim text",
        ),
        (
            "asr-audit corpus fresh-europarl --since 2025-10-06 --language es -m whisper-base --max-speeches 20 -o es/",
            "twenty Spanish speeches, located with the multilingual whisper-base",
        ),
    ),
)
def fresh_europarl(
    since: str = typer.Option(
        ..., "--since", help="First sitting date, YYYY-MM-DD (after the model's training cutoff)."
    ),
    until: str | None = typer.Option(None, "--until", help="Last sitting date, YYYY-MM-DD (default: today)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (manifest.jsonl, audio/, fresh.json)."),
    language: str = typer.Option(
        "en", "--language", help="ISO 639-1 code of the speeches' original language (en, de, fr, es, ...)."
    ),
    model: str = typer.Option(
        "whisper-tiny.en",
        "--model",
        "-m",
        help="Model that locates each piece in the speech's text (not the reference); multilingual for non-English.",
    ),
    min_match: float = typer.Option(
        0.8, "--min-match", help="Keep pieces whose transcript matches this share of words."
    ),
    min_seconds: float = typer.Option(2.0, "--min-seconds", help="Shortest piece."),
    max_seconds: float = typer.Option(20.0, "--max-seconds", help="Longest piece."),
    margin: float = typer.Option(
        1.0, "--margin", help="Seconds of recording kept before and after each speech's time stamps."
    ),
    max_speeches: int | None = typer.Option(None, "--max-speeches", help="Stop after this many speeches."),
    api: str = typer.Option(
        "https://data.europarl.europa.eu/api/v2", "--api", help="European Parliament Open Data API base URL."
    ),
    media: str = typer.Option(
        "https://control.eup.glcloud.eu", "--media", help="Base URL of the Parliament's media content pages."
    ),
    downloads: Path | None = typer.Option(
        None, "--downloads", help="Download cache folder (default: OUT/.downloads); reruns fetch nothing twice."
    ),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty folder that is not asr-audit output."),
    download_deadline: float = typer.Option(
        1800.0, "--download-deadline", help="Seconds one download may take in all (a slow server is given up)."
    ),
    max_download_mb: float = typer.Option(512.0, "--max-download-mb", help="Largest recording downloaded (MB)."),
) -> None:
    """Fetch European Parliament plenary speeches given in a date range in one original language,
    cut each speech's window from its sitting's recording, find each piece's text in the speech's
    verbatim report, and write a manifest with provenance."""
    from asr_audit.fresh.build import EuroparlConfig, build_europarl

    config = EuroparlConfig(
        since=_date(since, "--since") or dt.date.today(),
        until=_date(until, "--until"),
        language=language,
        api=api,
        media=media,
        max_speeches=max_speeches,
        min_s=min_seconds,
        max_s=max_seconds,
        min_match=min_match,
        margin=margin,
    )
    _build(
        build_europarl, config, out, model, downloads, store, "speech(es)", force, download_deadline, max_download_mb
    )
