"""Line-by-line JSONL reading with one-line errors naming file, line and fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from asr_audit.errors import InputFileError


def iter_jsonl(path: Path, what: str = "file") -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSONL file (a BOM is allowed)."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputFileError(
                    path, f"line is not valid UTF-8 (byte {exc.start})", f"re-encode the {what} as UTF-8", lineno
                ) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                if exc.msg == "Extra data" and "\r" in line.rstrip("\r\n"):
                    raise InputFileError(
                        path,
                        "lines end in a carriage return only (CR, old Mac line ends), so the file reads as one line",
                        "convert the line ends to LF, e.g. tr '\\r' '\\n' < in.jsonl > out.jsonl",
                        lineno,
                    ) from None
                raise InputFileError(
                    path, f"bad JSON at column {exc.colno}: {exc.msg}", "write one JSON object per line (JSONL)", lineno
                ) from None
            except RecursionError:
                raise InputFileError(
                    path, "JSON nested too deeply to read", "write one flat JSON object per line (JSONL)", lineno
                ) from None
            if not isinstance(obj, dict):
                raise InputFileError(
                    path, f"expected a JSON object, got {type(obj).__name__}", "write one JSON object per line", lineno
                )
            yield lineno, obj
