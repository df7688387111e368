"""What the layers above ask of the result store: the :class:`Store` protocol and its records.

Probes, the runner, calibration, the organism, white-box runs, alignment and fresh corpora take a
``store: Store`` (or ``Store | None`` where caching is optional) and call only these methods, so
they read the same with the SQLite file (:class:`asr_audit.store.sqlite.Store`, which satisfies
the protocol structurally; ``tests/store/test_store_protocol.py`` checks it) or any other cache.
What only a command opens a store for (runs and their errors, counts, merging, closing) stays on
the SQLite class.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from asr_audit.errors import ConfigError


@dataclass(frozen=True, slots=True)
class StoredResult:
    """One cached result: the decoded JSON value and the seconds it took to compute."""

    value: Any
    seconds: float | None


@dataclass(frozen=True, slots=True)
class AudioIndexEntry:
    """A fingerprinted audio file's content hash and duration (seconds)."""

    audio_hash: str
    duration: float


class Identity(Protocol):
    """What the store records of a backend or aligner identity: its dictionary, with ``key`` and ``spec``."""

    def to_dict(self) -> dict[str, Any]: ...


@runtime_checkable
class Store(Protocol):
    """The result cache as the layers above use it: rows keyed by (backend key, audio hash, kind, item).

    A row is written once and never changed; ``get`` leaves out the hashes it has no row for.
    """

    def register_backend(self, identity: Identity) -> None:
        """Record the identity of a backend (or aligner) whose key rows are stored under."""
        ...

    def get(self, kind: str, backend_key: str, audio_hashes: Sequence[str], item: str = "") -> dict[str, StoredResult]:
        """Cached results of ``kind``/``item`` for the given audio hashes (missing ones absent)."""
        ...

    def put(self, kind: str, backend_key: str, rows: Iterable[tuple[str, Any, float | None]], item: str = "") -> int:
        """Insert ``(audio_hash, value, seconds)`` rows; returns the rows added (existing keys kept)."""
        ...

    def get_transcripts(self, backend_key: str, audio_hashes: Sequence[str]) -> dict[str, StoredResult]:
        """Cached transcripts (kind ``transcript``) for the given audio hashes."""
        ...

    def put_transcripts(self, backend_key: str, rows: Iterable[tuple[str, str, float | None]]) -> int:
        """Insert ``(audio_hash, text, seconds)`` transcript rows; returns the rows added."""
        ...

    def lookup_audio(self, fingerprints: Sequence[str]) -> dict[str, AudioIndexEntry]:
        """The audio hash and duration of each known file fingerprint (unknown ones absent)."""
        ...

    def remember_audio(self, rows: Iterable[tuple[str, str, float]]) -> None:
        """Record ``(fingerprint, audio_hash, duration)`` rows (last write wins)."""
        ...


def require_store(store: Store | None, who: str) -> Store:
    """``store``, or a one-line error saying ``who`` (a probe, a backend) caches its results in one."""
    if store is None:
        raise ConfigError(
            f"{who} caches what its models compute in a results store, and none was given; "
            "fix: pass a store (asr_audit.store.open_store(path))"
        )
    return store


__all__ = ["AudioIndexEntry", "Identity", "Store", "StoredResult", "require_store"]
