"""Verb ``normalize``: normalize text with one or several normalizers, side by side.

The verb reads the texts, calls :func:`~asr_audit.text.compare.compare_normalizers` once and
prints :func:`~asr_audit.report.normalizers.normalize_compare_table` (or writes JSON).
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from asr_audit.cli import app, console, examples
from asr_audit.errors import ConfigError, InputFileError
from asr_audit.outputs import check_output_file
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
    check_output_file(json_out, "--json")
    check_output_file(out, "--out")
    lines = _read_lines(file) if file is not None else [text or ""]
    texts = [line for line in lines if line.strip()]
    if not texts:
        raise InputFileError(file or "TEXT", "holds no text", "write one text per line")
    if fmt == "auto":  # --json alone writes only the JSON document
        small = len(texts) <= TABLE_MAX_LINES and out is None
        fmt = "none" if json_out is not None and out is None else "table" if small else "jsonl"
    if fmt in ("jsonl", "tsv"):
        _stream(names, lines, fmt, out)
    rows = [c.to_dict() for c in compare_normalizers(names, texts)] if fmt == "table" or json_out else []
    if fmt == "table":
        console.print(normalize_compare_table(rows, names))
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json({'normalizers': list(names), 'texts': rows}))}")


def _read_lines(file: Path) -> list[str]:
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
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(chunks)
    console.print(f"wrote {out} ({len(lines)} lines, {fmt})")
