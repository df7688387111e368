"""Records of forced alignment: word timings, the aligner's identity, one clip's result.

All are frozen dataclasses with ``to_dict`` / ``from_dict`` so they travel as JSON (the CLI's
JSONL output, the store's ``timings`` results).

>>> w = WordTiming("2011", 0.9, 1.6, -7.25)
>>> WordTiming.from_dict(w.to_dict()) == w
True
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from asr_audit.errors import BackendError, InputFileError

Seconds = float
TIMINGS = "timings"  # the store's result kind for alignments


class AlignmentError(BackendError):
    """An aligner could not align one clip (the batch goes on; the clip's result carries it)."""


@dataclass(frozen=True, slots=True)
class WordTiming:
    """Where one transcript token is spoken: ``[start, end)`` in seconds from the clip start.

    ``word`` is the token as written in the transcript (``"2011"``, ``"euros."``); ``score`` is
    the aligner's confidence for it (its meaning depends on the aligner, higher is better;
    ``None`` when it has none). A token with nothing speakable (``"--"``) has ``start == end``.
    """

    word: str
    start: Seconds
    end: Seconds
    score: float | None = None

    def __post_init__(self) -> None:
        if not (0.0 <= self.start <= self.end):
            raise ValueError(f"word timing for {self.word!r} needs 0 <= start <= end, got {self.start}, {self.end}")

    @property
    def duration(self) -> Seconds:
        return self.end - self.start

    def to_dict(self) -> dict[str, Any]:
        return {"word": self.word, "start": self.start, "end": self.end, "score": self.score}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WordTiming:
        score = data.get("score")
        return cls(str(data["word"]), float(data["start"]), float(data["end"]), None if score is None else float(score))


@dataclass(frozen=True, slots=True)
class AlignerIdentity:
    """What makes two alignments comparable: aligner name, model and version.

    ``version`` folds in the library version and weights hash of the model plus the aligner's own
    revision, so a change to any of them gives a new :attr:`key` (and a fresh store entry).
    """

    name: str
    model: str
    version: str

    @property
    def spec(self) -> str:
        return f"align:{self.name}:{self.model}"

    @property
    def key(self) -> str:
        payload = json.dumps({"name": self.name, "model": self.model, "version": self.version}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:24]

    def to_dict(self) -> dict[str, Any]:
        """Also the form :meth:`asr_audit.store.sqlite.Store.register_backend` records (``key``, ``spec``)."""
        return {"name": self.name, "model": self.model, "version": self.version, "spec": self.spec, "key": self.key}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AlignerIdentity:
        return cls(str(data["name"]), str(data["model"]), str(data["version"]))


def transcript_key(transcript: str) -> str:
    """The store item of an alignment: a hash of the exact transcript that was aligned."""
    return hashlib.sha256(transcript.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class ClipAlignment:
    """One clip's alignment: one :class:`WordTiming` per whitespace token of ``transcript``,
    or an ``error`` (and no words) when the clip could not be aligned."""

    clip_id: str
    transcript: str
    aligner: AlignerIdentity
    words: tuple[WordTiming, ...] = ()
    duration: Seconds | None = None
    error: str | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def span(self, index: int) -> tuple[Seconds, Seconds]:
        """``(start, end)`` of token ``index``."""
        w = self.words[index]
        return w.start, w.end

    def to_dict(self) -> dict[str, Any]:
        return {
            "clip_id": self.clip_id,
            "transcript": self.transcript,
            "aligner": self.aligner.to_dict(),
            "duration": self.duration,
            "words": [w.to_dict() for w in self.words],
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: object = "<dict>", line: int | None = None) -> ClipAlignment:
        """Parse what :meth:`to_dict` wrote; a malformed record raises :class:`InputFileError`."""
        try:
            duration = data.get("duration")
            return cls(
                clip_id=str(data["clip_id"]),
                transcript=str(data["transcript"]),
                aligner=AlignerIdentity.from_dict(data["aligner"]),
                words=tuple(WordTiming.from_dict(w) for w in data.get("words") or ()),
                duration=None if duration is None else float(duration),
                error=data.get("error"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputFileError(
                source,
                f"not an alignment record ({type(exc).__name__}: {exc})",
                "pass a file written by `asr-audit align`",
                line,
            ) from None


def check_timings(words: tuple[WordTiming, ...], n_tokens: int, duration: Seconds, tol: Seconds = 0.02) -> None:
    """Raise :class:`AlignmentError` unless ``words`` are one per token, monotonic and inside the clip."""
    if len(words) != n_tokens:
        raise AlignmentError(f"aligner returned {len(words)} timings for {n_tokens} tokens")
    prev = 0.0
    for w in words:
        if w.start + 1e-9 < prev or w.end > duration + tol:
            raise AlignmentError(
                f"timing of {w.word!r} ({w.start:.3f}-{w.end:.3f} s) is not monotonic or "
                f"leaves the {duration:.3f} s clip"
            )
        prev = w.end
