"""Verb ``normalize``: normalize text with one or several normalizers, side by side.

The verb reads the texts, calls :func:`~asr_audit.text.compare.compare_normalizers` once and
prints :func:`~asr_audit.report.normalizers.normalize_compare_table` (or writes JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer

from asr_audit.cli import app, console
from asr_audit.errors import ConfigError, InputFileError
from asr_audit.outputs import check_output_file, require_regular_file
from asr_audit.text.compare import DEFAULT_COMPARE


@app.command(
    epilog="Examples:\n\n"
    '  asr-audit normalize "Mr. Brown\'s colour, thirty six at 10:00 AM"\n\n'
    "  asr-audit normalize --compare whisper,oal,basic-es --file refs.txt --json side.json"
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
    json_out: Path | None = typer.Option(None, "--json", help="Write every output (and its marks) as JSON."),
) -> None:
    """Normalize text with several normalizers side by side; [..] marks tokens unlike the first's."""
    from asr_audit.report.normalizers import normalize_compare_table
    from asr_audit.report.tables import to_json, write_text
    from asr_audit.text.compare import compare_normalizers, parse_names

    if (text is None) == (file is None):
        raise ConfigError(
            "normalize needs a TEXT argument or --file F (not both); fix: e.g. asr-audit normalize 'Mr. Brown'"
        )
    names = parse_names(compare)  # an unknown name fails before any file is read
    check_output_file(json_out, "--json", (file,))
    if file is not None:
        require_regular_file(file, "pass a UTF-8 text file")
        try:
            raw = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFileError(file, f"cannot be read ({exc.__class__.__name__})", "pass a UTF-8 text file") from None
        texts = [line for line in raw.splitlines() if line.strip()]
        if not texts:
            raise InputFileError(file, "holds no text", "write one text per line")
    else:
        assert text is not None
        texts = [text]
    try:
        rows = [c.to_dict() for c in compare_normalizers(names, texts)]
    except Exception as exc:  # noqa: BLE001 - a normalizer crashing on the user's text is named, one line
        raise _failing_text(names, texts, file, exc) from None
    console.print(normalize_compare_table(rows, names))
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json({'normalizers': list(names), 'texts': rows}))}")


def _failing_text(names: Sequence[str], texts: list[str], file: Path | None, exc: Exception) -> InputFileError:
    """The one-line error naming the first text (its line of ``file``) a normalizer cannot handle."""
    import re
    import sys

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
