"""Forced alignment: where each word of a transcript is spoken in its clip.

Aligners (registry: :func:`get_aligner`, :func:`available_aligners`):

* ``sphinx`` (default) — PocketSphinx with its bundled US-English model: offline, CPU, fast;
  numbers are spelled out and unknown words get a rule-based pronunciation
  (:mod:`asr_audit.align.sphinx`);
* ``whisper`` — Whisper cross-attention + DTW over a PyTorch Whisper
  (default model ``whisper-tiny.en-pt``, or any ``hf:`` Whisper) (:mod:`asr_audit.align.whisper`).

Every aligner returns one :class:`WordTiming` per whitespace token of the transcript;
:func:`asr_audit.align.run.align_corpus` aligns a whole corpus through the result store.

>>> available_aligners()
['sphinx', 'whisper']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from asr_audit.align.records import AlignerIdentity, AlignmentError, ClipAlignment, WordTiming
from asr_audit.registry import Registry

__all__ = [
    "ALIGNERS",
    "Aligner",
    "AlignerIdentity",
    "AlignmentError",
    "ClipAlignment",
    "WordTiming",
    "available_aligners",
    "get_aligner",
]


@runtime_checkable
class Aligner(Protocol):
    """Aligns a transcript to 16 kHz mono float32 audio."""

    name: str

    def identity(self) -> AlignerIdentity: ...

    def align(self, samples: np.ndarray, transcript: str) -> tuple[WordTiming, ...]:
        """One timing per whitespace token; raises :class:`AlignmentError` when the clip cannot be aligned."""
        ...


@dataclass(frozen=True, slots=True)
class AlignerKind:
    name: str
    description: str
    default_model: str
    factory: Callable[[str], Aligner]


def _sphinx(model: str) -> Aligner:
    # loaded when the aligner is chosen: the registry lists aligners without importing their engines
    from asr_audit.align.sphinx import SphinxAligner

    return SphinxAligner(model)


def _whisper(model: str) -> Aligner:
    # loaded when the aligner is chosen (as above)
    from asr_audit.align.whisper import WhisperAligner

    return WhisperAligner.load(model)


ALIGNERS: Registry[AlignerKind] = Registry("aligner", fix="use one of them (asr-audit align --aligner NAME)")
ALIGNERS.register(
    "sphinx", AlignerKind("sphinx", "PocketSphinx forced alignment (offline, CPU, en-us)", "en-us", _sphinx)
)
ALIGNERS.register(
    "whisper",
    AlignerKind("whisper", "Whisper cross-attention DTW (PyTorch Whisper model spec)", "whisper-tiny.en-pt", _whisper),
)


def available_aligners() -> list[str]:
    """Names accepted by :func:`get_aligner`."""
    return ALIGNERS.names()


def aligner_kinds() -> list[AlignerKind]:
    return [kind for _, kind in ALIGNERS.items()]


def get_aligner(name: str, model: str | None = None) -> Aligner:
    """The aligner ``name`` (see :func:`available_aligners`) with ``model`` or its default model.

    ``model`` is ``en-us`` for ``sphinx``; a PyTorch Whisper model spec for ``whisper``
    (``whisper-tiny.en-pt``, ``whisper-base-pt``, ``hf:<dir>``).
    """
    key = name.strip().lower()
    if key not in ALIGNERS:
        raise ALIGNERS.unknown(name)
    kind = ALIGNERS.get(key)
    return kind.factory(model or kind.default_model)
