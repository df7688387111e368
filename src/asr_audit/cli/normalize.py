"""Verb ``normalize``: normalize text with one or several normalizers, side by side.

The verb reads the texts, calls :func:`~asr_audit.text.compare.compare_normalizers` once and
prints :func:`~asr_audit.report.normalizers.normalize_compare_table` (or writes JSON).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import typer

from asr_audit.cli import app, console, examples
from asr_audit.errors import ConfigError, InputFileError
from asr_audit.outputs import check_output_file, require_regular_file
from asr_audit.text.compare import DEFAULT_COMPARE

TABLE_MAX_LINES = 20
"""The most texts ``--format auto`` shows as a table; a longer file streams JSON Lines."""
FORMATS = ("auto", "table", "jsonl", "tsv")


@app.command(
    epilog=examples(
        ('asr-audit normalize "Mr. Brown\'s colour, thirty six at 10:00 AM"', "four normalizers side by side"),
        ("asr-audit normalize --compare whisper --file refs.txt --out refs.norm.jsonl", "a whole file, as JSON Lines"),
        ("asr-audit normalize --compare whisper,oal --file refs.txt --format tsv", "text and outputs, tab-separated"),
    )
)
def normalize(
    text: str | None = typer.Argument(None, help="The text to normalize (or use --file)."),
    compare: str = typer.Option(
        ",".join(DEFAULT_COMPARE),
        "--compare",
        help="Comma-separated normalizers, the first is the baseline others are marked against "
        "(see docs/normalizers.md for every registered one).",
    ),
    file: Path | None = typer.Option(None, "--file", "-f", help="A UTF-8 file of texts, one per line."),
    fmt: str = typer.Option(
        "auto",
        "--format",
        help=f"auto (a table for up to {TABLE_MAX_LINES} texts, else jsonl) | table | jsonl (one object per line: "
        "text and each output) | tsv (a header, then text and outputs). jsonl / tsv keep blank lines, in order.",
    ),
    out: Path | None = typer.Option(None, "--out", help="Write the jsonl / tsv lines here instead of stdout."),
    json_out: Path | None = typer.Option(
        None, "--json", help="Write every output (and its marks) as one JSON document; prints no table."
    ),
) -> None:
    """Normalize text with several normalizers side by side; [..] marks tokens unlike the first's."""
    from asr_audit.report.normalizers import normalize_compare_table
    from asr_audit.report.tables import to_json, write_text
    from asr_audit.text.compare import compare_normalizers, parse_names

    if (text is None) == (file is None):
        raise ConfigError(
            "normalize needs a TEXT argument or --file F (not both); fix: e.g. asr-audit normalize 'Mr. Brown'"
        )
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r} is not a format; fix: use one of {', '.join(FORMATS)}")
    if out is not None and fmt == "table":
        raise ConfigError("--out writes JSON Lines or TSV, not a table; fix: drop --format table, or --out")
    names = parse_names(compare)  # an unknown name fails before any file is read
    inputs = (file,) if file is not None else ()
    check_output_file(json_out, "--json", inputs)
    check_output_file(out, "--out", inputs)
    lines = _read_lines(file) if file is not None else [text or ""]
    texts = [line for line in lines if line.strip()]
    if not texts:
        raise InputFileError(file or "TEXT", "holds no text", "write one text per line")
    if fmt == "auto":  # --json alone writes only the JSON document
        small = len(texts) <= TABLE_MAX_LINES and out is None
        fmt = "none" if json_out is not None and out is None else "table" if small else "jsonl"
    try:
        if fmt in ("jsonl", "tsv"):
            _stream(names, lines, fmt, out)
        rows = [c.to_dict() for c in compare_normalizers(names, texts)] if fmt == "table" or json_out else []
    except Exception as exc:  # noqa: BLE001 - a normalizer crashing on the user's text is named, one line
        raise _failing_text(names, texts, file, exc) from None
    if fmt == "table":
        console.print(normalize_compare_table(rows, names))
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json({'normalizers': list(names), 'texts': rows}))}")


def _read_lines(file: Path) -> list[str]:
    require_regular_file(file, "pass a UTF-8 text file")
    try:
        return file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(file, f"cannot be read ({exc.__class__.__name__})", "pass a UTF-8 text file") from None


def _stream(names: tuple[str, ...], lines: list[str], fmt: str, out: Path | None) -> None:
    """Every line's outputs as JSON Lines or TSV, written as they are made (stdout, or ``out``)."""
    from asr_audit.report.normalizers import normalized_jsonl, normalized_tsv
    from asr_audit.text.compare import normalize_lines

    render = normalized_jsonl if fmt == "jsonl" else normalized_tsv
    chunks = render(names, normalize_lines(names, lines))
    if out is None:
        sys.stdout.writelines(chunks)
        sys.stdout.flush()
        return
    from asr_audit.outputs import write_atomic

    write_atomic(out, "".join(chunks))  # the old file stays whole until the new one is complete
    console.print(f"wrote {out} ({len(lines)} lines, {fmt})")


def _failing_text(names: Sequence[str], texts: list[str], file: Path | None, exc: Exception) -> InputFileError:
    """The one-line error naming the first text (its line of ``file``) a normalizer cannot handle."""
    import re

    from asr_audit.text.compare import compare_normalizers

    where, text = "the TEXT argument", texts[0]
    for n, candidate in enumerate(texts, 1):
        try:
            compare_normalizers(names, [candidate])
        except Exception:  # noqa: BLE001 - the one to name
            where, text = (f"{file}:{n}" if file is not None else where), candidate
            break
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)() or float("inf")
    longest = max((len(m) for m in re.findall(r"\d+", text)), default=0)
    cause = f"a number of {longest} digits; Python converts at most {limit}" if longest > limit else type(exc).__name__
    return InputFileError(where, f"a normalizer cannot normalize this text ({cause})", "shorten or split that text")
