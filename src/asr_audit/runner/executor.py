"""The executor interface: where a spec's transcription jobs run.

A :class:`Job` is one model over one audio corpus; an :class:`Executor` turns jobs into
:class:`JobResult` s through the store. :class:`~asr_audit.runner.run.LocalExecutor` runs them in
this process, :class:`~asr_audit.runner.ray_exec.RayExecutor` on a Ray cluster. Both are also the
probes' :class:`~asr_audit.probes.core.probe.ModelPool` (``get``, ``model``, ``transcribe``) and
name a model's backend identity (``identity``), which ``run_experiment`` records when present.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from asr_audit.runner.spec import ModelSpec
from asr_audit.store.base import Store


@dataclass(frozen=True, slots=True)
class Job:
    """Transcribe one audio corpus with one model."""

    model: ModelSpec
    corpus: Any  # asr_audit.corpus.clips.Corpus


@dataclass
class JobResult:
    model: str
    corpus: str
    outcome: Any  # TranscribeOutcome
    unbuilt: dict[str, str] = field(default_factory=dict)  # recipe clips built nowhere: clip id -> why
    traits: dict[str, bool] = field(default_factory=dict)  # which extra arms apply (courtesy.backend_traits)


class Executor(Protocol):
    def run(self, jobs: Sequence[Job], store: Store) -> list[JobResult]: ...
