"""Leaderboard-style JSONL manifests: one JSON object per line.

Fields: ``audio_filepath`` (required; relative paths resolve against the manifest's folder, fsspec
URLs such as ``s3://`` stay as written),
``text`` (required reference, may be empty), ``duration`` (seconds, optional), optional
``speaker``, ``language`` and ``id``. The clip id is ``id`` when given, else ``audio_filepath``
exactly as written — the value the leaderboard's prediction files carry in ``audio_filepath``.

Malformed lines raise :class:`~asr_audit.errors.InputFileError` naming file, line and fix. A
missing or unreadable audio file is *not* a manifest error: the clip fails when its audio is
loaded, and the run reports it and goes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.corpus.jsonl import iter_jsonl
from asr_audit.errors import InputFileError

MANIFEST_SUFFIXES = (".jsonl", ".json", ".ndjson")
DEFAULT_SPLIT = "test"


def corpus_token(text: str) -> str:
    """A file-name-safe token for a corpus or model name (no ``/``, ``:`` or spaces).

    >>> corpus_token("openslr/librispeech_asr clean")
    'openslr-librispeech_asr-clean'
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "corpus"


def _field_str(path: Path, line: int, obj: dict[str, Any], name: str) -> str | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise InputFileError(
            path,
            f"field {name!r} is a {type(value).__name__}, expected a string",
            f"write {name} as a JSON string",
            line,
        )
    return str(value)


def parse_manifest_row(path: Path, line: int, obj: dict[str, Any], corpus: str) -> Clip:
    """One manifest object as a :class:`Clip` (relative audio paths resolved against ``path``)."""
    audio = obj.get("audio_filepath")
    if not isinstance(audio, str) or not audio.strip():
        raise InputFileError(
            path,
            "missing or empty 'audio_filepath'",
            "give every line an audio_filepath (absolute, or relative to the manifest)",
            line,
        )
    if "text" not in obj or obj["text"] is None:
        raise InputFileError(
            path,
            "missing reference field 'text'",
            "give every line its reference transcript in 'text' (\"\" for none)",
            line,
        )
    text = obj["text"]
    if not isinstance(text, str):
        raise InputFileError(
            path, f"'text' is a {type(text).__name__}, expected a string", "write the reference as a JSON string", line
        )
    duration = obj.get("duration")
    if duration is not None:
        if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not duration >= 0:
            raise InputFileError(
                path,
                f"'duration' is {duration!r}, expected a non-negative number of seconds",
                "write duration in seconds, or leave it out to measure it",
                line,
            )
        duration = float(duration)
    audio_path: str | Path = audio
    if "://" not in audio:  # an fsspec URL (s3://, gs://, hf://) is read as written
        audio_path = Path(audio) if Path(audio).is_absolute() else path.parent / audio
    clip_id = _field_str(path, line, obj, "id") or audio
    for what, value in (("'text'", text), ("clip id", clip_id)):
        if any("\ud800" <= ch <= "\udfff" for ch in value):  # only a \udXXX escape puts one there
            raise InputFileError(
                path,
                f"{what} holds a lone surrogate escape (\\ud800-\\udfff), which is not text",
                "write the text as valid Unicode (a surrogate pair or the character itself)",
                line,
            )
    return Clip(
        id=clip_id,
        reference=text,
        audio_path=str(audio_path),
        language=_field_str(path, line, obj, "language"),
        speaker=_field_str(path, line, obj, "speaker"),
        corpus=corpus,
        duration=duration,
    )


def read_manifest(path: str | Path, name: str | None = None, split: str = DEFAULT_SPLIT) -> Corpus:
    """Read a JSONL manifest into a :class:`Corpus` named after the file (or ``name``)."""
    path = Path(path)
    if not path.is_file():
        raise InputFileError(path, "no such manifest file", "check the path")
    name = corpus_token(name or path.stem)
    clips: list[Clip] = []
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path, "manifest"):
        clip = parse_manifest_row(path, line, obj, name)
        if clip.id in seen:
            raise InputFileError(
                path,
                f"duplicate clip id {clip.id!r} (first on line {seen[clip.id]})",
                "keep one line per clip, or give each a distinct 'id'",
                line,
            )
        seen[clip.id] = line
        clips.append(clip)
    if not clips:
        raise InputFileError(path, "manifest has no clips", "write one JSON object per clip")
    return Corpus(name=name, split=split, source=str(path), clips=tuple(clips))


def manifest_field(source: str | Path, field: str) -> dict[str, str]:
    """``{clip id: value}`` of the extra ``field`` of a JSONL manifest (a clip's id is its ``id``, else
    its ``audio_filepath``); empty when ``source`` is not a manifest file (a folder corpus, a
    dataset) or no row has the field. The manifest was read as a corpus first, so a line that is
    not a JSON object is passed over here (the corpus loader has judged it)."""
    path = Path(source)
    out: dict[str, str] = {}
    if not path.is_file() or path.suffix not in MANIFEST_SUFFIXES:
        return out
    for line in path.read_text(encoding="utf-8-sig", errors="replace").splitlines():  # a BOM is not JSON
        try:
            obj = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and field in obj:
            out[str(obj.get("id") or obj.get("audio_filepath"))] = str(obj[field])
    return out


def write_manifest(clips: Iterable[Clip], path: str | Path) -> Path:
    """Write clips with file audio as a JSONL manifest (paths as stored in the clips)."""
    path = Path(path)
    with open(path, "w", encoding="utf-8") as fh:
        for c in clips:
            if c.audio_path is None:
                raise ValueError(f"clip {c.id!r} has in-memory audio; save it to a file first")
            row: dict[str, Any] = {"audio_filepath": c.audio_path, "text": c.reference}
            if c.duration is not None:
                row["duration"] = c.duration
            if c.id != c.audio_path:
                row["id"] = c.id
            for key in ("speaker", "language"):
                if getattr(c, key) is not None:
                    row[key] = getattr(c, key)
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
