"""A probe's models, called one way wherever they run: the model handle and the local pool.

A probe reaches its models through a :class:`~asr_audit.probes.core.probe.ModelPool`
(``inputs.pool``): ``pool.model(name, store)`` is a :class:`Model` handle, and
``pool.transcribe(jobs, store)`` transcribes several models' clips in one call (a pool whose models
run on a cluster runs them side by side). A handle offers what the probes ask of a model:

* ``transcribe(clips, store)``: transcripts through the store (a :class:`Transcribed`);
* ``score(chunks)``: teacher-forced scores, chunk by chunk (the lift probe);
* ``forced(rows, extra_tokens)``: decoding with end-of-text banned (the continuation probe);
* ``isolated(rows)``: the decoder's cross-attention restricted to a window (the courtesy study);

and what the model is (``spec``, ``identity()``, ``capabilities``, ``max_duration``,
``forced_refusal``). A probe names the audio of a row or a clip, it never asks where the model
runs: a row's audio is samples, a :class:`Silence` or a clip, and derived audio is a clip whose
source holds the samples and their derivation
(:class:`~asr_audit.audio.transforms.DerivedSource`), which a pool whose models run elsewhere sends
as a recipe instead of the samples.

:class:`LocalModel` is the handle of a backend loaded in this process, :class:`LocalPool` the pool
of such backends (a CLI verb's ``--model`` list, the API's, the local executor's); the Ray
executor's :class:`~asr_audit.runner.ray_exec.RemoteModel` is the handle of a model on its actors.
Both compute with the same functions (:func:`~asr_audit.models.ops.compute_scores`,
:func:`~asr_audit.models.ops.forced_rows`, :func:`~asr_audit.mech.isolate.isolated_rows`,
:func:`~asr_audit.store.transcribe.transcribe_corpus`), so a probe's numbers do not depend on where
its models run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from asr_audit.audio.io import load_clip_audio
from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.errors import AuditError, BackendError
from asr_audit.mech.isolate import isolated_rows
from asr_audit.models.base import TokenScores
from asr_audit.models.ops import compute_scores, forced_decoder, forced_rows
from asr_audit.store.base import Store
from asr_audit.store.transcribe import TranscribeOutcome, transcribe_corpus

Seconds = float
Window = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Silence:
    """The zero waveform of ``n`` samples, as a row names it (built where the row is computed)."""

    n: int


def row_audio(audio: Any) -> np.ndarray:
    """The samples a row names: samples as they are, a :class:`Silence`, or a clip whose audio is
    loaded (a recipe clip is built first by the caller, which may import the battery). The one
    reading of a row, wherever it is computed."""
    if isinstance(audio, np.ndarray):
        return audio
    if isinstance(audio, Silence):
        return np.zeros(audio.n, dtype=np.float32)
    return load_clip_audio(audio).samples


@dataclass(frozen=True, slots=True)
class Variant:
    """A pool's model decoded with other options (the courtesy study's translate task): a key of
    :meth:`~asr_audit.probes.core.probe.ModelPool.transcribe`'s jobs beside plain model names; the
    pool runs it as a model of its own (its own backend or actors, its own store key)."""

    model: str
    options: tuple[tuple[str, Any], ...]  # decode options that replace the model's

    @property
    def name(self) -> str:
        return f"{self.model} [{', '.join(f'{k}={v}' for k, v in self.options)}]"


@dataclass(frozen=True, slots=True)
class Transcribed:
    """One model's transcription of some clips: the outcome (records and failures, in the order of the
    clips sent), the recipe clips that could be built nowhere (clip id -> the driver's error, as a
    local realization raises it; only where audio travels as recipes), and what the workers'
    backend is (:func:`~asr_audit.probes.battery.courtesy.backend_traits`, reported by a pool whose
    models run elsewhere; empty where the backend is in this process)."""

    outcome: TranscribeOutcome
    unbuilt: Mapping[str, str] = field(default_factory=dict)
    traits: Mapping[str, bool] = field(default_factory=dict)


# a row to score: (audio: samples, Silence or clip; its hash; prefix; target)
ScoreRow = tuple[Any, str, str, str]
Scores = list[TokenScores | str]  # per row its scores, or the failure text


class Model(Protocol):
    """One model of a pool, wherever it runs (see the module docstring). ``name`` is the pool's name
    for it, the label a probe's result carries."""

    @property
    def name(self) -> str: ...

    @property
    def spec(self) -> str: ...

    @property
    def capabilities(self) -> frozenset[str]: ...

    @property
    def max_duration(self) -> Seconds | None: ...

    @property
    def forced_refusal(self) -> str | None:
        """Why the model cannot decode with end-of-text banned (``None``: it can)."""
        ...

    def identity(self) -> Any: ...

    def transcribe(self, clips: Iterable[Clip], store: Store | None) -> Transcribed:
        """The clips' transcripts by this model, through the store."""
        ...

    def score(self, chunks: Sequence[Sequence[ScoreRow]]) -> list[tuple[Scores, Seconds]]:
        """Each chunk of rows scored together (:func:`~asr_audit.models.ops.compute_scores`): per chunk the
        scores in row order and the compute seconds."""
        ...

    def forced(self, rows: Sequence[tuple[Any, str]], extra_tokens: int) -> list[tuple[str, str] | str]:
        """Forced continuation of ``(audio, audio hash)`` rows: per row ``(plain, forced)`` or a failure text."""
        ...

    def isolated(self, rows: Sequence[tuple[Clip, Window]]) -> list[tuple[str | None, str | None]]:
        """The attn-isolated decode of each ``(clip, window)``: ``(text, None)`` or ``(None, error)``."""
        ...


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A :class:`Model` whose backend is loaded in this process. ``batch_size``: clips per
    transcription batch."""

    name: str
    backend: Any
    batch_size: int = 8

    @classmethod
    def of(cls, backend: Any, batch_size: int = 8) -> LocalModel:
        """The handle of ``backend``, named by its spec."""
        return cls(str(backend.spec), backend, batch_size)

    @property
    def spec(self) -> str:
        return str(self.backend.spec)

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(getattr(self.backend, "capabilities", ()))

    @property
    def max_duration(self) -> Seconds | None:
        return getattr(self.backend, "max_duration", None)

    @property
    def forced_refusal(self) -> str | None:
        try:
            forced_decoder(self.backend)
        except BackendError as exc:
            return str(exc)
        return None

    def identity(self) -> Any:
        return self.backend.identity()

    def transcribe(self, clips: Iterable[Clip], store: Store | None) -> Transcribed:
        corpus = clips if isinstance(clips, Corpus) else Corpus(self.name, "test", "probe", tuple(clips))
        return Transcribed(transcribe_corpus(self.backend, corpus, store, batch_size=self.batch_size))

    def score(self, chunks: Sequence[Sequence[ScoreRow]]) -> list[tuple[Scores, Seconds]]:
        return [
            compute_scores(self.backend, [row_audio(r[0]) for r in c], [r[2] for r in c], [r[3] for r in c])
            for c in chunks
        ]

    def forced(self, rows: Sequence[tuple[Any, str]], extra_tokens: int) -> list[tuple[str, str] | str]:
        return forced_rows(self.backend, [row_audio(r[0]) for r in rows], extra_tokens)

    def isolated(self, rows: Sequence[tuple[Clip, Window]]) -> list[tuple[str | None, str | None]]:
        out: list[tuple[str | None, str | None]] = []
        for clip, window in rows:
            try:
                audio = row_audio(clip)
            except AuditError as exc:
                out.append((None, str(exc)))
                continue
            out += isolated_rows(self.backend, [audio], [window])
        return out


@dataclass
class LocalPool:
    """A :class:`~asr_audit.probes.core.probe.ModelPool` of backends loaded in this process.

    ``load(key)`` gives the backend of a model name (or a :class:`Variant`), loaded on first use and
    kept; ``names`` are the models it hands out. :meth:`of` builds one over backends already loaded,
    named by their spec (a CLI verb's ``--model`` list).
    """

    load: Callable[[Any], Any]
    names: tuple[str, ...]
    batch_size: int = 8
    _loaded: dict[Any, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, backends: Sequence[Any] | Mapping[str, Any], batch_size: int = 8) -> LocalPool:
        """The pool of ``backends`` (a mapping name -> backend, or a sequence named by each backend's spec)."""
        by_name = dict(backends) if isinstance(backends, Mapping) else {str(b.spec): b for b in backends}
        return cls(by_name.__getitem__, tuple(by_name), batch_size)

    def get(self, name: Any) -> Any:
        """The backend of ``name`` (or a :class:`Variant`), in this process."""
        if name not in self._loaded:
            self._loaded[name] = self.load(name)
        return self._loaded[name]

    def model(self, name: Any, store: Store | None = None) -> LocalModel:
        """The :class:`Model` handle of ``name`` (``store`` is the caller's; a local backend needs none)."""
        label = name.name if isinstance(name, Variant) else name
        return LocalModel(label, self.get(name), self.batch_size)

    def transcribe(self, jobs: Mapping[Any, Iterable[Clip]], store: Store | None) -> dict[Any, Transcribed]:
        """Each model's clips (model name or :class:`Variant` -> clips) transcribed through the store, one
        model after another."""
        return {key: self.model(key).transcribe(clips, store) for key, clips in jobs.items()}
