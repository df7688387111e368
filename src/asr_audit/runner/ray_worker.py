"""What runs on a Ray worker: one model's backend inside an actor, answering batches of clips.

A :class:`ModelWorker` loads its backend once (spec + decode options, on the device its actor's
resources give it) and then answers batches. For each clip it reads the audio where it runs — a
path it can reach, an fsspec URL (``s3://``, ``gs://``, ``hf://``), or audio that travelled inside
the clip (an in-memory source, or bytes the driver shipped through the object store) — hashes
it, and transcribes the unique audio with the same batch-then-clip-by-clip isolation as a local
run (:func:`asr_audit.store.transcribe._compute`). A clip whose file this worker cannot see is
answered as *unreachable*, so the driver can ship its bytes instead.

A clip whose audio is a recipe (:class:`~asr_audit.probes.battery.recipe.RecipeSource`: a battery
condition's noise, reverb, voice, truncation or donor splice of an original clip) is built here,
with the code a local run builds it with; a recipe this worker cannot build (no TTS engine for its
voice, an original it cannot read, a rebuilt asset whose hash differs) is answered as *unbuilt*
with the reason, and the driver builds it and ships the samples.

The worker never opens the store: it returns plain records (:class:`WorkerBatch`) and the driver,
the store's only writer, commits them. A problem that stops the run (a missing extra, a bad
option) comes back as ``fatal`` text rather than an exception, so the driver can raise it as the
one-line error a local run raises.

The class is plain Python; :mod:`asr_audit.runner.ray_exec` wraps it with ``ray.remote`` and its
resources, so this module imports nothing from Ray and every worker imports it by name.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_audit.corpus.clips import Clip
from asr_audit.probes.battery.recipe import built

Seconds = float


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What the driver needs of a loaded backend: its identity, limits and calling convention."""

    spec: str
    identity: Any  # asr_audit.models.base.BackendIdentity
    max_duration: Seconds | None
    lookup: bool  # answers by clip id (``preds:``): no audio is read
    node: str
    fatal: str | None = None
    traits: dict[str, bool] = field(default_factory=dict)  # the courtesy study's extra arms that apply (backend_traits)
    capabilities: tuple[str, ...] = ()  # the backend's (transcribe, score, ...): which probes it can serve
    forced: str | None = None  # why it cannot decode with end-of-text banned (models.ops.forced_decoder), if so


@dataclass(frozen=True, slots=True)
class RowsAnswer:
    """One chunk of rows that need the model itself (teacher-forced scoring, forced continuation):
    per row its answer or a failure text, in order, with the compute seconds; or the rows whose audio
    this worker cannot rebuild (row index -> why), which the driver then ships as samples; or a
    problem that stops the run."""

    results: tuple[Any, ...] = ()  # per row: TokenScores / (plain, forced), or a failure text
    seconds: Seconds = 0.0
    unresolved: dict[int, str] = field(default_factory=dict)
    fatal: str | None = None


@dataclass(frozen=True, slots=True)
class WorkerBatch:
    """One batch's answer: per clip an audio hash, a failure or *unreachable*; per hash a text or a failure."""

    hashes: dict[str, tuple[str, Seconds]] = field(default_factory=dict)  # clip id -> (audio hash, duration)
    fingerprints: dict[str, str] = field(default_factory=dict)  # clip id -> fingerprint seen by the worker
    bad: dict[str, str] = field(default_factory=dict)  # clip id -> why its audio cannot be used
    unreachable: tuple[str, ...] = ()  # clip ids whose file this worker cannot see
    unbuilt: dict[str, str] = field(default_factory=dict)  # recipe clip id -> why this worker cannot build it
    done: dict[str, tuple[str, Seconds]] = field(default_factory=dict)  # audio hash -> (text, compute s)
    failed: dict[str, str] = field(default_factory=dict)  # audio hash -> failure reason
    fatal: str | None = None  # a configuration problem that stops the run


def reachable(clip: Clip) -> bool:
    """Whether this process can read the clip's audio: in-clip audio and URLs always count (a URL's
    failure is the clip's failure, as in a local run); a path counts when the file is here."""
    from asr_audit.audio.io import is_url

    if clip.audio_path is None or is_url(clip.audio_path):
        return True
    return Path(clip.audio_path).is_file()


def _node() -> str:
    """This worker for messages: host, process and Ray node id."""
    import sys

    ray = sys.modules.get("ray")  # never import (let alone start) Ray here: outside a worker there is no node
    node = ray.get_runtime_context().get_node_id()[:12] if ray is not None and ray.is_initialized() else "-"
    return f"{socket.gethostname()}:{os.getpid()} (node {node})"


class ModelWorker:
    """One model's backend in one Ray actor (see the module docstring)."""

    def __init__(self, spec: str, options: dict[str, Any], device: str | None = None, batch_size: int = 8) -> None:
        from asr_audit.errors import AuditError
        from asr_audit.models.base import DecodeOptions, RuntimeOptions, load_backend

        self.backend: Any = None
        self.fatal: str | None = None
        self.spec = spec
        try:  # Ray sets CUDA_VISIBLE_DEVICES to the actor's GPUs: "auto" / "cuda" picks them
            runtime = RuntimeOptions(device=device, batch_size=batch_size)
            self.backend = load_backend(spec, DecodeOptions.from_dict(dict(options)), runtime)
        except AuditError as exc:
            self.fatal = f"{exc} (loading model {spec!r} on Ray worker {_node()})"

    def info(self) -> WorkerInfo:
        """The backend's identity and limits (or the reason it could not load)."""
        from asr_audit.errors import BackendError
        from asr_audit.models.ops import forced_decoder
        from asr_audit.models.preds import is_lookup_backend
        from asr_audit.probes.battery.courtesy import backend_traits

        if self.backend is None:
            return WorkerInfo(self.spec, None, None, False, _node(), self.fatal)
        b = self.backend
        try:
            forced_decoder(b)
            refusal = None
        except BackendError as exc:
            refusal = str(exc)
        return WorkerInfo(
            b.spec,
            b.identity(),
            b.max_duration,
            is_lookup_backend(b),
            _node(),
            None,
            backend_traits(b),
            tuple(sorted(b.capabilities)),
            refusal,
        )

    def lookup(self, clip_ids: Sequence[str]) -> list[str | None]:
        """A lookup backend's answers (``preds:``), one per clip id, ``None`` where it has none."""
        return list(self.backend.transcribe_ids(list(clip_ids)))

    def transcribe(self, clips: Sequence[Clip]) -> WorkerBatch:
        """Read, hash and transcribe ``clips`` (see the module docstring)."""
        from asr_audit.audio.io import ClipAudioError, LoadedAudio, load_clip_audio
        from asr_audit.errors import ConfigError, MissingExtraError
        from asr_audit.store.transcribe import _compute, _reason, file_fingerprint

        if self.backend is None:
            return WorkerBatch(fatal=self.fatal)
        out = WorkerBatch()
        unreachable: list[str] = []
        loaded: dict[str, LoadedAudio] = {}
        for c in clips:
            if not reachable(c):
                unreachable.append(c.id)
                continue
            fp = file_fingerprint(c)
            try:
                c = built(c)
            except Exception as exc:  # noqa: BLE001 - whatever stops the build here, the driver builds it
                out.unbuilt[c.id] = _reason(exc)
                continue
            try:
                a = load_clip_audio(c, self.backend.max_duration)
            except ClipAudioError as exc:
                out.bad[c.id] = exc.reason
                continue
            loaded[c.id] = a
            out.hashes[c.id] = (a.audio_hash, a.duration)
            if fp:
                out.fingerprints[c.id] = fp
        unique = {a.audio_hash: a for a in loaded.values()}
        try:
            done, failed = _compute(self.backend, list(unique.values()))
        except (MissingExtraError, ConfigError) as exc:
            return WorkerBatch(fatal=f"{exc} (model {self.spec!r} on Ray worker {_node()})")
        out.done.update(done)
        out.failed.update(failed)
        return WorkerBatch(out.hashes, out.fingerprints, out.bad, tuple(unreachable), out.unbuilt, out.done, out.failed)

    def _rows_audio(self, rows: Sequence[tuple[Any, ...]]) -> tuple[list[Any], dict[int, str]]:
        """The samples of rows ``(audio, audio hash, ...)``, each rebuilt here (a clip read, a recipe
        built, a :class:`~asr_audit.probes.core.models.Silence` made) and hashing as on the driver;
        and the rows that cannot be (row index -> why)."""
        from asr_audit.audio.io import audio_hash
        from asr_audit.probes.core.models import row_audio
        from asr_audit.store.transcribe import _reason

        audios, unresolved = [], {}
        for i, (ref, expected, *_) in enumerate(rows):
            if isinstance(ref, Clip) and not reachable(ref):
                unresolved[i] = f"its file {ref.audio_path} is not reachable from this worker"
                continue
            try:
                x = row_audio(built(ref) if isinstance(ref, Clip) else ref)
            except Exception as exc:  # noqa: BLE001 - whatever stops the read here, the driver ships the samples
                unresolved[i] = _reason(exc)
                continue
            got = audio_hash(x)
            if got != expected:
                unresolved[i] = f"the audio rebuilt here hashes to {got[:12]}, not the driver's {expected[:12]}"
                continue
            audios.append(x)
        return audios, unresolved

    def _answer(self, rows: Sequence[tuple[Any, ...]], compute: Callable[[list[Any]], tuple[Any, float]]) -> RowsAnswer:
        """Rebuild the rows' audio and run ``compute(audios) -> (answers, seconds)`` on it: a chunk with
        a row whose audio cannot be rebuilt here is not run (its rows come back *unresolved*), and a
        configuration error is the model's fatal answer."""
        from asr_audit.errors import ConfigError, MissingExtraError

        if self.backend is None:
            return RowsAnswer(fatal=self.fatal)
        audios, unresolved = self._rows_audio(rows)
        if unresolved:
            return RowsAnswer(unresolved=unresolved)
        try:
            got, seconds = compute(audios)
        except (MissingExtraError, ConfigError) as exc:
            return RowsAnswer(fatal=f"{exc} (model {self.spec!r} on Ray worker {_node()})")
        return RowsAnswer(tuple(got), seconds)

    def score(self, rows: Sequence[tuple[Any, str, str, str]]) -> RowsAnswer:
        """Teacher-forced scores of one chunk of ``(audio, audio hash, prefix, target)`` rows (the lift
        probe's :class:`~asr_audit.probes.audio.lift.Scorer` chunk), by
        :func:`~asr_audit.models.ops.compute_scores` as a local run scores it. If any row's audio
        cannot be rebuilt here the chunk is not scored (its batch must stay the local run's): those
        rows come back *unresolved*."""
        from asr_audit.models.ops import compute_scores

        backend = self.backend
        return self._answer(
            rows, lambda audios: compute_scores(backend, audios, [r[2] for r in rows], [r[3] for r in rows])
        )

    def forced(self, rows: Sequence[tuple[Any, str]], extra_tokens: int) -> RowsAnswer:
        """Forced continuation of ``(audio, audio hash)`` rows (the truncated clips of the continuation
        probe): per row ``(plain, forced)`` or a failure text, by
        :func:`~asr_audit.models.ops.forced_rows` as a local run decodes them; rows whose
        audio cannot be rebuilt here come back *unresolved*."""
        from asr_audit.models.ops import forced_rows

        backend = self.backend
        return self._answer(rows, lambda audios: _timed(forced_rows, backend, audios, extra_tokens))

    def isolated(self, rows: Sequence[tuple[Any, str, tuple[float, float]]]) -> RowsAnswer:
        """The courtesy study's attn-isolated decode of ``(audio, audio hash, (t0, t1))`` rows: per row
        ``(text, None)`` or ``(None, error)``, by :func:`~asr_audit.mech.isolate.isolated_rows`
        as a local run decodes them; rows whose audio cannot be rebuilt here come back *unresolved*."""
        from asr_audit.mech.isolate import isolated_rows

        backend = self.backend
        return self._answer(rows, lambda audios: _timed(isolated_rows, backend, audios, [r[2] for r in rows]))


def _timed(fn: Callable[..., list[Any]], *args: Any) -> tuple[list[Any], float]:
    """``fn(*args)`` and the seconds it took."""
    import time

    t0 = time.perf_counter()
    got = fn(*args)
    return got, time.perf_counter() - t0
