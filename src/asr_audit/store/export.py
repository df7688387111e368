"""Write prediction files in the Open ASR Leaderboard's JSONL format.

One file per (model, corpus): ``MODEL_<model>_DATASET_<corpus>_<split>.jsonl`` where each part is
made file-name safe (``/``, ``:``, ``#`` and spaces become ``-``; the split has no ``_``). Rows
are ``{"audio_filepath", "duration", "time", "text", "pred_text"}``, sorted by clip id, written
with fixed key order and float formatting, so the same results give the same bytes. ``time``
(per-clip compute seconds) is the one field that differs between two computations of the same
results; ``include_time=False`` leaves it out for byte-for-byte comparisons.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from asr_audit.errors import InputFileError
from asr_audit.outputs import write_atomic

Seconds = float


@dataclass(frozen=True, slots=True)
class PredictionRecord:
    """One row of a prediction file."""

    clip_id: str
    reference: str
    hypothesis: str
    duration: Seconds | None
    time: Seconds | None = None


def name_token(text: str) -> str:
    """A file-name-safe token.

    >>> name_token("openai:http://127.0.0.1:8000#whisper-1")
    'openai-http-127.0.0.1-8000-whisper-1'
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def prediction_file_name(model_spec: str, corpus: str, split: str) -> str:
    """The leaderboard file name for one model on one corpus split.

    >>> prediction_file_name("sphinx:en-us", "test-clean", "test")
    'MODEL_sphinx-en-us_DATASET_test-clean_test.jsonl'
    """
    return f"MODEL_{name_token(model_spec)}_DATASET_{name_token(corpus)}_{name_token(split).replace('_', '-')}.jsonl"


def _num(x: float) -> float:
    return round(float(x), 6)


def render_predictions(records: Iterable[PredictionRecord], include_time: bool = True) -> str:
    """The JSONL text for ``records`` (sorted by clip id; deterministic)."""
    lines = []
    for r in sorted(records, key=lambda r: r.clip_id):
        row: dict[str, object] = {
            "audio_filepath": r.clip_id,
            "duration": None if r.duration is None else _num(r.duration),
        }
        if include_time:
            row["time"] = None if r.time is None else _num(r.time)
        row["text"] = r.reference
        row["pred_text"] = r.hypothesis
        lines.append(json.dumps(row, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def write_predictions(path: str | Path, records: Iterable[PredictionRecord], include_time: bool = True) -> Path:
    """Atomically write a prediction file (a reader never sees a half-written one).

    An unwritable path or a full disk, and text that is not Unicode (a lone surrogate), are
    one-line :class:`~asr_audit.errors.InputFileError` naming the file; the store keeps the
    transcripts, so a rerun writes the file without recomputing them.
    """

    path = Path(path)
    text = render_predictions(records, include_time)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputFileError(
            path,
            "a transcript or reference holds a lone surrogate (\\ud800-\\udfff), which is not text",
            "fix the corpus's text (or report the backend that produced it)",
        ) from None

    return write_atomic(
        path, data, "choose a writable --out folder", "free disk space and rerun (stored transcripts are reused)"
    )
