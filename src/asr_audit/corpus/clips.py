"""Clips and corpora: the records every loader returns and every runner consumes.

A :class:`Clip` points at its audio either by file path or through an in-memory
:class:`AudioSource` (a row of a Hugging Face dataset, a waveform made by a transform). A clip
made from another one records the step in ``provenance`` and gets a derived id, so results on
perturbed audio never mix with results on the original.

>>> c = Clip(id="a", reference="hello", audio_path="a.wav", corpus="demo")
>>> import numpy as np
>>> d = c.derive("gain0.5", np.zeros(16000, dtype=np.float32), 16000)
>>> d.id, d.provenance, d.audio_path is None
('a_gain0.5', ('gain0.5',), True)
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from asr_audit.errors import require

Seconds = float


@runtime_checkable
class AudioSource(Protocol):
    """Audio held somewhere other than a plain file path.

    ``load`` returns ``(samples, sample_rate)`` with samples shaped ``(n,)`` or
    ``(n, channels)``; ``label`` names it in error messages; ``fingerprint`` is a cheap stable
    identity of the content (or ``None``) that lets the store skip decoding cached clips.
    """

    @property
    def label(self) -> str: ...

    @property
    def fingerprint(self) -> str | None: ...

    def load(self) -> tuple[np.ndarray, int]: ...


@dataclass(frozen=True, slots=True, eq=False)
class ArraySource:
    """A waveform already in memory (for example the output of an audio transform)."""

    samples: np.ndarray
    sample_rate: int
    label: str = "<in-memory waveform>"

    @property
    def fingerprint(self) -> str | None:
        return None  # hashing the samples is the fingerprint; nothing cheaper exists

    def load(self) -> tuple[np.ndarray, int]:
        return self.samples, self.sample_rate


@dataclass(frozen=True, slots=True, eq=False)
class EncodedSource:
    """Encoded audio bytes in any format soundfile reads (WAV, FLAC, OGG, MP3 ...)."""

    data: bytes
    label: str = "<encoded audio bytes>"

    @property
    def fingerprint(self) -> str | None:
        return "bytes:" + hashlib.sha256(self.data).hexdigest()

    def load(self) -> tuple[np.ndarray, int]:
        import io

        sf = require("soundfile", "audio")
        samples, sr = sf.read(io.BytesIO(self.data), dtype="float32", always_2d=True)
        return samples, int(sr)


@dataclass(frozen=True, slots=True)
class Clip:
    """One utterance: its audio, its reference transcript and where it came from."""

    id: str
    reference: str
    audio_path: str | None = None
    source: AudioSource | None = field(default=None, compare=False, repr=False)
    language: str | None = None
    speaker: str | None = None
    corpus: str = ""
    duration: Seconds | None = None  # as declared by the corpus; None = measure from the audio
    provenance: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a Clip needs a non-empty id")
        if (self.audio_path is None) == (self.source is None):
            raise ValueError(f"clip {self.id!r} needs exactly one of audio_path or source")

    @property
    def audio_label(self) -> str:
        """The audio's location, for messages."""
        if self.source is not None:  # exactly one of audio_path and source is set (__post_init__)
            return self.source.label
        return str(self.audio_path)

    def derive(self, step: str, samples: np.ndarray, sample_rate: int) -> Clip:
        """A new clip holding ``samples``, recording ``step`` in its provenance and id."""
        if not step or any(ch.isspace() for ch in step):
            raise ValueError(f"derivation step {step!r} must be a non-empty token without spaces")
        return dataclasses.replace(
            self,
            id=f"{self.id}_{step}",
            audio_path=None,
            source=ArraySource(
                samples, sample_rate, label=f"{self.audio_label} [{'+'.join((*self.provenance, step))}]"
            ),
            duration=len(samples) / sample_rate,
            provenance=(*self.provenance, step),
        )


@dataclass(frozen=True, slots=True)
class Corpus:
    """A named, ordered set of clips.

    ``name`` and ``split`` name output files (``MODEL_<m>_DATASET_<name>_<split>.jsonl``);
    ``source`` is the resolved spec the clips came from.
    """

    name: str
    split: str
    source: str
    clips: tuple[Clip, ...]

    def __iter__(self) -> Iterator[Clip]:
        return iter(self.clips)

    def __len__(self) -> int:
        return len(self.clips)

    def limit(self, n: int | None) -> Corpus:
        """The first ``n`` clips (all when ``n`` is None)."""
        if n is None:
            return self
        if n < 1:
            raise ValueError(f"limit must be >= 1, got {n}")
        return dataclasses.replace(self, clips=self.clips[:n])
