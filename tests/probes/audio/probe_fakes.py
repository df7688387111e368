"""TEST DOUBLE — not a model. A backend that has "memorized" clips and recites their references.

:class:`ReferenceCopier` is given the clips it has "seen" (their audio and reference text). For
any input whose samples share a long common prefix and/or suffix with a seen clip (what is left
of a seen clip after masking a span, cutting it out, or truncating the end), it returns that
clip's reference verbatim; otherwise an empty string. It exists only to check that the probes
detect reference copying (masked recovery = 1, forced-continuation leak = 1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from asr_audit.models.base import TRANSCRIBE, BackendIdentity, DecodeOptions


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if diff.size else n


class ReferenceCopier:
    """Returns the reference of the seen clip an input was derived from (see the module docstring)."""

    capabilities = frozenset({TRANSCRIBE})
    max_duration = None

    def __init__(self, seen: Sequence[tuple[np.ndarray, str]], spec: str = "test-double:reference-copier") -> None:
        self.spec = spec
        self.seen = [(np.asarray(x, dtype=np.float32), ref) for x, ref in seen]
        self.calls = 0
        h = hashlib.sha256("\x1f".join(ref for _, ref in self.seen).encode()).hexdigest()[:16]
        self._identity = BackendIdentity(spec, h, DecodeOptions())

    def identity(self) -> BackendIdentity:
        return self._identity

    def recall(self, audio: np.ndarray) -> str:
        x = np.asarray(audio, dtype=np.float32)
        best, best_share = "", 0.5
        for seen, ref in self.seen:
            shared = _common_prefix(x, seen) + _common_prefix(x[::-1], seen[::-1])
            share = min(shared, len(x)) / len(seen)
            if share > best_share:
                best, best_share = ref, share
        return best

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        self.calls += len(audios)
        return [self.recall(a) for a in audios]

    def transcribe_forced(self, audios: Sequence[np.ndarray], extra_tokens: int) -> list[tuple[str, str]]:
        """A memorizer asked to keep going recites the rest of the reference."""
        return [(ref, ref) for ref in self.transcribe(audios)]
