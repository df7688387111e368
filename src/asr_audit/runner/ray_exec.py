"""The Ray executor: a spec's transcription jobs on a Ray cluster, results committed by the driver.

``asr-audit run spec.toml --executor ray [--address auto|ray://host:10001]`` (or ``executor =
"ray"`` in the spec) swaps :class:`~asr_audit.runner.run.LocalExecutor` for :class:`RayExecutor`.
Everything after transcription — probes, report, ``results.json`` — is the same code, and
``results.json`` is byte-identical to a local run's.

How the work flows (the reasons are in ``docs/scale.md``):

* **one actor pool per model**: ``replicas`` Ray actors (:class:`~asr_audit.runner.ray_worker.
  ModelWorker`), each with the model's ``num_gpus`` / ``num_cpus``, load the backend once. Inside
  :meth:`RayExecutor.session` (a whole ``asr-audit run``) a pool outlives the call that started it:
  the plan, the battery's original audio and its conditions reuse the same actors (one pool per
  model spec, decode options and runtime options), and the session's end kills them. A pool whose
  model has no work left in a call is released at once when the live pools ask for more than the
  cluster has, so a model that waits for GPUs gets them; outside a session every pool is released
  when its call ends;
* **the driver plans, the workers compute**: per batch of ``batch_size`` clips the driver looks
  the clips up in the store (fingerprint index + cached transcripts) and sends only what is
  missing; each actor holds at most ``in_flight`` batches, so the driver never floods the cluster
  (Ray queues them, the object store carries the arguments and spills if it must);
* **audio is read where it is needed**: paths and fsspec URLs travel as strings and the worker
  reads them; a file the worker cannot see comes back *unreachable* and the driver ships its
  bytes through the object store; in-memory audio travels inside the clip, and audio behind any
  other source (an ``hf-dataset:`` row) is decoded on the driver and travels as samples;
* **derived audio travels as recipes**: the battery's realized clips (noise, reverb, voices,
  truncation, donor splices) reach the workers as :class:`~asr_audit.probes.battery.recipe.
  RecipeSource` s (the original clip as above, the transforms, the seed, how to rebuild the
  donors) and are built there (:meth:`RayExecutor.transcribe`), and so do the probes' derived
  clips (:class:`~asr_audit.audio.transforms.DerivedSource`: a masked span, a cut); a recipe a worker cannot
  build comes back *unbuilt*, and the driver builds it, ships the samples and says so in the log;
* **the driver is the only writer of the store**: each batch's answers are committed as they
  stream in (one short transaction, as locally), so killing the run loses at most the batches in
  flight and a rerun resumes from the store; the per-job records are assembled in plan order;
* **faults cost a retry**: actors restart (``max_restarts=-1``) and a task that died with its
  actor is retried by Ray (``max_task_retries``); rows are write-once, so a retried batch never
  duplicates anything. A batch whose worker dies on every attempt fails its clips (recorded, the
  run goes on), and a rerun tries them again;
* **one progress display**: the driver feeds the same :class:`~asr_audit.runner.progress.
  RunProgress` as a local run (clips/s, RTFx, per model, ETA) for the whole cluster.

The executor is a :class:`~asr_audit.probes.core.probe.ModelPool`: the probes transcribe through
:meth:`RayExecutor.transcribe` (on the workers, derived audio as recipes), and what needs the model
itself rather than a transcription — lift's teacher-forced scoring, continuation's forced
decoding, the courtesy study's attn-isolated arm of a white-box model — goes through
:meth:`RayExecutor.model`: a :class:`RemoteModel` handle on the same pool, whose rows name their
audio (a clip, a recipe, a silence's length) and are computed on the workers by the functions a
local handle calls (``models.ops.compute_scores``, ``models.ops.forced_rows``,
``mech.isolate.isolated_rows``). Only the steering probe still gets a backend loaded on the driver
(:meth:`RayExecutor.get`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_audit.audio.transforms import DerivedSource
from asr_audit.corpus.clips import ArraySource, Clip, EncodedSource
from asr_audit.errors import AuditError, ConfigError, require
from asr_audit.probes.battery.recipe import RecipeSource, built, derived_recipe
from asr_audit.probes.core.models import Transcribed, Variant, row_audio
from asr_audit.runner.executor import Job, JobResult
from asr_audit.runner.ray_worker import ModelWorker, WorkerBatch, WorkerInfo
from asr_audit.runner.spec import ModelSpec
from asr_audit.store.base import Store

Seconds = float


@dataclass
class _JobState:
    """One (model, corpus) job: its batches, the answers so far, in plan order."""

    job: Job
    batches: list[tuple[Clip, ...]]
    hook: Callable[[int, Seconds, Seconds], None]
    next: int = 0
    entries: dict[int, list[Any]] = field(default_factory=dict)  # batch index -> records and failures
    n_cached: int = 0
    n_computed: int = 0
    audio_s: Seconds = 0.0
    compute_s: Seconds = 0.0


@dataclass
class _Batch:
    """A batch on its way: what the driver resolved from the store and what the workers answered."""

    state: _JobState
    index: int
    clips: tuple[Clip, ...]
    fps: dict[str, str | None] = field(default_factory=dict)
    hits: dict[str, tuple[str, Seconds]] = field(default_factory=dict)  # indexed clips: (hash, duration)
    cached: dict[str, Any] = field(default_factory=dict)  # audio hash -> StoredResult
    bad: dict[str, str] = field(default_factory=dict)
    unbuilt: dict[str, str] = field(default_factory=dict)  # recipes built nowhere: clip id -> the driver's error
    parts: list[WorkerBatch] = field(default_factory=list)
    pending: int = 0


@dataclass
class _Pool:
    """The actors of one model and the jobs waiting for them."""

    model: ModelSpec
    actors: list[Any]
    jobs: deque[_JobState]
    info: WorkerInfo | None = None
    free: list[Any] = field(default_factory=list)  # actor slots that may take a batch now
    busy: int = 0
    asked: bool = False  # the actors' info was requested

    @property
    def demand(self) -> tuple[float, float]:
        """(GPUs, CPUs) its actors hold."""
        m = self.model
        return m.replicas * m.num_gpus, m.replicas * m.num_cpus

    @property
    def key(self) -> str:
        assert self.info is not None
        return str(self.info.identity.key)


@dataclass
class RayExecutor:
    """Runs transcription jobs on a Ray cluster (see the module docstring)."""

    address: str | None = None  # None: start Ray on this machine; "auto" / "ray://host:port": join that cluster
    show_progress: bool = True
    log: Callable[[str], None] = print
    max_task_retries: int = 3  # Ray's retries of a batch whose actor died
    in_flight: int = 2  # batches queued per actor
    models: dict[str, ModelSpec] = field(default_factory=dict)
    identities: dict[str, dict[str, Any]] = field(default_factory=dict)
    backends: dict[str, Any] = field(default_factory=dict)  # loaded on the driver, for the audio probes
    nodes: dict[str, set[str]] = field(default_factory=dict)  # model -> the workers its actors ran on
    n_sent: int = 0  # clips sent to the workers (those the store did not answer on the driver)
    n_shipped: int = 0  # clips whose audio the driver shipped (no worker could read it)
    n_built_on_driver: int = 0  # recipe clips a worker could not build: built on the driver and shipped
    n_model_rows: int = 0  # rows of scoring / forced decoding sent to the workers (RemoteModel)
    n_rows_shipped: int = 0  # such rows whose audio no worker could rebuild: rebuilt here, samples shipped
    actors_started: dict[str, int] = field(default_factory=dict)  # model -> actors created (a model load each)
    _held: bool = False  # inside session(): Ray and the pools this executor starts stay up until its end
    _owns_ray: bool = False
    _pools: dict[tuple[Any, ...], _Pool] = field(default_factory=dict)  # live pools of the session, by _pool_key
    _total: dict[str, float] = field(default_factory=dict)  # the cluster's resources, read at each call's start

    # ------------------------------------------------------------------ the executor interface
    @property
    def names(self) -> tuple[str, ...]:
        """The spec's models (:class:`~asr_audit.probes.core.probe.ModelPool`)."""
        return tuple(self.models)

    def get(self, name: str) -> Any:
        """The model's backend loaded on the driver, as the local executor does
        (:class:`~asr_audit.probes.core.probe.ModelPool`): for what hooks the model in this process (the
        steering probe), or a model whose workers reported no traits."""
        from asr_audit.models.base import DecodeOptions, RuntimeOptions, load_backend

        m = self.models.get(name)
        if m is None:
            raise ConfigError(f"no model named {name!r} in the spec; available: {', '.join(self.models)}")
        if name not in self.backends:
            runtime = RuntimeOptions(device=m.device, batch_size=m.batch_size)
            self.backends[name] = load_backend(m.spec, DecodeOptions.from_dict(dict(m.options)), runtime)
        return self.backends[name]

    def identity(self, name: str) -> dict[str, Any] | None:
        """The identity (spec, weights, options, code, key) the model's actors (or the driver) loaded."""
        if name in self.identities:
            return self.identities[name]
        return self.backends[name].identity().to_dict() if name in self.backends else None

    def run(self, jobs: Sequence[Job], store: Store) -> list[JobResult]:
        return self._run(jobs, store, self.show_progress, announce=True)

    @property
    def n_pools(self) -> int:
        """Actor pools alive now (kept by a :meth:`session` between calls; 0 once it has ended)."""
        return sum(1 for p in self._pools.values() if p.actors)

    def transcribe(self, jobs: Mapping[Any, Iterable[Clip]], store: Store) -> dict[Any, Transcribed]:
        """The pool's transcription (:class:`~asr_audit.probes.core.probe.ModelPool`): each
        model's clips (recipes, and derived clips as recipes) on its actors, through the store, the
        models side by side; per model the outcome and
        the recipes built nowhere (clip id -> the driver's error, which the battery records as a
        local run records a realization that failed). A model given no clips answers too (no records,
        its backend key), as a local backend names its key without transcribing. A key may be a
        :class:`~asr_audit.probes.core.models.Variant`: the model with other decode options, on
        actors of its own."""
        from asr_audit.corpus.clips import Corpus

        missing = [k.model if isinstance(k, Variant) else k for k in jobs]
        missing = [name for name in missing if name not in self.models]
        if missing:
            raise ConfigError(f"no model named {missing[0]!r} in the spec; available: {', '.join(self.models)}")
        models = {key: _model_of(self.models, key) for key in jobs}
        work = [
            Job(models[key], Corpus("battery", "test", "battery", tuple(map(_travel, c)))) for key, c in jobs.items()
        ]
        results = self._run(work, store, self.show_progress, announce=False) if work else []
        keys = {m.name: key for key, m in models.items()}
        return {keys[r.model]: Transcribed(r.outcome, dict(r.unbuilt), dict(r.traits)) for r in results}

    def model(self, name: str, store: Store) -> RemoteModel:
        """The spec's model ``name`` as a :class:`~asr_audit.probes.core.models.Model` handle on its actor
        pool (the pool that transcribes, kept for the session): what the workers loaded (spec,
        identity, capabilities), teacher-forced scoring, forced and attn-isolated decoding there, and
        transcription through the store. The probes use it instead of a backend loaded on the driver."""
        if name not in self.models:
            raise ConfigError(f"no model named {name!r} in the spec; available: {', '.join(self.models)}")
        _, info = self._call(self.models[name], "info", [], store)
        return RemoteModel(self, name, info, store)

    def _call(
        self, model: ModelSpec, method: str, payloads: Sequence[Any], store: Store
    ) -> tuple[list[Any], WorkerInfo]:
        """``actor.<method>(*payload)`` for every payload (a tuple of arguments) on ``model``'s pool (the
        session's, started if needed), the free actors taking the next payload as the transcription
        batches do; the answers in payload order (a payload whose worker died on every retry is
        answered by :class:`_Died`), and what the actors loaded."""
        from asr_audit.corpus.clips import Corpus

        ray = require("ray", "ray")
        started = self._connect(ray) or self._owns_ray
        pools: dict[tuple[Any, ...], _Pool] = {}
        ok = False
        try:
            state = _JobState(Job(model, Corpus(model.name, "test", "call", ())), [], _no_progress)
            pools = self._start_pools(ray, [state], started, announce=False)
            pool = pools[_pool_key(model)]
            pool.jobs.clear()
            inflight: dict[Any, tuple[Any, int]] = {}
            if not pool.asked:
                pool.asked = True
                for actor in pool.actors:
                    inflight[actor.info.remote()] = (actor, -1)
            elif pool.info is not None and not pool.info.lookup:
                store.register_backend(pool.info.identity)
            todo, answers = deque(range(len(payloads))), list[Any]([None] * len(payloads))
            while True:
                while pool.info is not None and pool.free and todo:
                    i, actor = todo.popleft(), pool.free.pop()
                    inflight[getattr(actor, method).remote(*payloads[i])] = (actor, i)
                    pool.busy += 1
                if not inflight:
                    break
                ready, _ = ray.wait(list(inflight), num_returns=1)
                for ref in ready:
                    actor, i = inflight.pop(ref)
                    if i < 0:
                        self._on_info(pool, actor, _get(ray, ref, pool, None), store)
                        continue
                    pool.busy -= 1
                    pool.free.append(actor)
                    try:
                        answers[i] = ray.get(ref)
                    except ray.exceptions.RayActorError as exc:
                        answers[i] = _Died(f"the Ray worker died on this request ({' '.join(str(exc).split())[:120]})")
            assert pool.info is not None
            ok = True
            return answers, pool.info
        finally:
            for key, pool in pools.items():
                if not (ok and self._held and self._fits()):
                    self._drop(ray, key, pool)
            if started and self._held:
                self._owns_ray = True
            elif started:
                ray.shutdown()

    @contextmanager
    def session(self) -> Iterator[RayExecutor]:
        """Keep a Ray this executor starts, and the models' actor pools, up across :meth:`run` and
        :meth:`transcribe` calls (a whole ``asr-audit run``: the plan, then the battery's
        original audio and conditions), so each model loads once; kill the pools and shut a Ray it
        started down at the end, however the session ends (an error, Ctrl-C)."""
        self._held = True
        try:
            yield self
        finally:
            self._held = False
            pools, self._pools = list(self._pools.values()), {}
            if pools or self._owns_ray:
                ray = require("ray", "ray")
                if ray.is_initialized():
                    for pool in pools:
                        _release(ray, pool)
                if self._owns_ray:
                    self._owns_ray = False
                    ray.shutdown()

    def _run(self, jobs: Sequence[Job], store: Store, show: bool, announce: bool) -> list[JobResult]:
        from asr_audit.runner.progress import RunProgress

        ray = require("ray", "ray")
        started = self._connect(ray) or self._owns_ray
        pools: dict[tuple[Any, ...], _Pool] = {}
        ok = False
        try:
            with RunProgress([(j.model.name, len(j.corpus)) for j in jobs], enabled=show) as progress:
                states = [
                    _JobState(j, _batches(j.corpus.clips, j.model.batch_size), progress.callback(j.model.name))
                    for j in jobs
                ]
                pools = self._start_pools(ray, states, started, announce)
                self._drive(ray, pools, store)
            results = [self._result(s, pools[_pool_key(s.job.model)]) for s in states]
            ok = True
            return results
        finally:
            for key, pool in pools.items():  # a failed call's pools may hold answers nobody collects: killed
                if not (ok and self._held):
                    self._drop(ray, key, pool)
            if started and self._held:
                self._owns_ray = True
            elif started:
                ray.shutdown()

    # ------------------------------------------------------------------ cluster and pools
    def _connect(self, ray: Any) -> bool:
        """Join the cluster at ``address`` or start Ray here; True when this call started it."""
        if ray.is_initialized():
            return False
        try:
            if self.address:
                ray.init(address=self.address, logging_level=logging.WARNING)
            else:  # a new one-machine Ray (not a `ray start` cluster found here), its node address loopback
                ray.init(
                    address="local",
                    include_dashboard=False,
                    logging_level=logging.WARNING,
                    _node_ip_address="127.0.0.1",
                )
        except ConnectionError as exc:
            raise ConfigError(
                f"cannot join the Ray cluster at {self.address!r} ({' '.join(str(exc).split())[:200]}); fix: "
                "start it with `ray start --head` (docs/scale.md), or pass --address ray://<head>:10001"
            ) from None
        return True

    def _start_pools(
        self, ray: Any, states: Sequence[_JobState], started: bool, announce: bool = True
    ) -> dict[tuple[Any, ...], _Pool]:
        """This call's pools: the session's live ones where they serve a model of the call, new ones
        for the rest (idle live pools the call does not use are killed first where the new ones
        would not fit beside them)."""
        pools: dict[tuple[Any, ...], _Pool] = {}
        total = self._total = ray.cluster_resources()
        models = list({s.job.model.name: s.job.model for s in states}.values())
        if announce:
            self.log(
                f"Ray cluster: {len([n for n in ray.nodes() if n.get('Alive')])} node(s), "
                f"{total.get('CPU', 0):g} CPU, {total.get('GPU', 0):g} GPU; "
                + ", ".join(f"{m.name}: {m.replicas} actor(s) x {m.num_gpus:g} GPU, {m.num_cpus:g} CPU" for m in models)
            )
        wanted = {_pool_key(m): m for m in models}
        new = [m for k, m in wanted.items() if k not in self._pools]
        if new and not self._fits([_Pool(m, [], deque()) for m in new]):
            for key, pool in list(self._pools.items()):
                if key not in wanted:
                    self._drop(ray, key, pool)
        for s in states:
            m, key = s.job.model, _pool_key(s.job.model)
            if key not in pools:
                if key in self._pools:  # the session's pool: loaded, its slots free again
                    pools[key] = self._pools[key]
                else:
                    _check_resources(m, total, strict=started, log=self.log if announce else _quiet)
                    actor_cls = ray.remote(ModelWorker).options(
                        num_cpus=m.num_cpus,
                        num_gpus=m.num_gpus,
                        max_restarts=-1,
                        max_task_retries=self.max_task_retries,
                    )
                    actors = [
                        actor_cls.remote(m.spec, dict(m.options), m.device, m.batch_size) for _ in range(m.replicas)
                    ]
                    self.actors_started[m.name] = self.actors_started.get(m.name, 0) + len(actors)
                    pools[key] = self._pools[key] = _Pool(m, actors, deque())
            pools[key].jobs.append(s)
        return pools

    def _fits(self, extra: Sequence[_Pool] = ()) -> bool:
        """Whether the session's live pools (and ``extra``) together ask for no more than the cluster has."""
        live = [p for p in self._pools.values() if p.actors] + list(extra)
        gpus, cpus = sum(p.demand[0] for p in live), sum(p.demand[1] for p in live)
        return gpus <= self._total.get("GPU", 0.0) + 1e-9 and cpus <= self._total.get("CPU", 0.0) + 1e-9

    def _drop(self, ray: Any, key: tuple[Any, ...], pool: _Pool) -> None:
        """Kill ``pool``'s actors and forget it (its model loads anew when it is needed again)."""
        _release(ray, pool)
        if self._pools.get(key) is pool:
            del self._pools[key]

    # ------------------------------------------------------------------ the loop
    def _drive(self, ray: Any, pools: dict[tuple[Any, ...], _Pool], store: Store) -> None:
        inflight: dict[Any, tuple[str, _Pool, Any, Any]] = {}
        for pool in pools.values():
            if not pool.asked:
                pool.asked = True
                for actor in pool.actors:
                    inflight[actor.info.remote()] = ("info", pool, actor, None)
            elif pool.info is not None and not pool.info.lookup:  # kept from an earlier call of the session
                store.register_backend(pool.info.identity)
        while True:
            for key, pool in pools.items():
                self._fill(pool, store, inflight)
                done = pool.info is not None and not pool.jobs and pool.busy == 0 and pool.actors
                if done and not (self._held and self._fits()):
                    self._drop(ray, key, pool)  # its model is done: free the GPUs for the next pool
            if not inflight:
                return
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                what, pool, actor, payload = inflight.pop(ref)
                if what == "info":
                    if pool.actors:  # (a released pool's late actors are gone)
                        self._on_info(pool, actor, _get(ray, ref, pool, None), store)
                    continue
                pool.busy -= 1
                if what == "batch":  # a shipped follow-up took no slot of its own
                    pool.free.append(actor)
                batch, sent = payload
                answer = _get(ray, ref, pool, batch, sent)
                if pool.info is not None and pool.info.lookup:
                    _finish_lookup(batch, answer, pool.info.spec)
                    continue
                if answer.fatal:
                    raise AuditError(answer.fatal)
                batch.parts.append(answer)
                self._ship(batch, answer, pool, actor, inflight)
                batch.pending -= 1
                if batch.pending == 0:
                    _finish(batch, pool, store)

    def _on_info(self, pool: _Pool, actor: Any, info: WorkerInfo, store: Store) -> None:
        if info.fatal:
            raise AuditError(info.fatal)
        self.nodes.setdefault(pool.model.name, set()).add(info.node)
        if pool.info is None:
            pool.info = info
            self.identities[pool.model.name] = info.identity.to_dict()
            if not info.lookup:
                store.register_backend(info.identity)
        elif info.identity.key != pool.info.identity.key:
            raise ConfigError(
                f"model {pool.model.name!r}: its Ray actors resolved different identities ({pool.info.node}: "
                f"{pool.info.identity.to_dict()['code']}, {info.node}: {info.identity.to_dict()['code']}), e.g. on "
                "different GPU types; fix: pin the options that resolve at load time, or give the model "
                "resources only one kind of node has"
            )
        pool.free.extend([actor] * self.in_flight)

    def _fill(self, pool: _Pool, store: Store, inflight: dict[Any, tuple[str, _Pool, Any, Any]]) -> None:
        """Give the pool's free actors the next batches (resolving cached clips on the driver)."""
        while pool.info is not None and pool.free and pool.jobs:
            state = pool.jobs[0]
            if state.next >= len(state.batches):
                pool.jobs.popleft()
                continue
            batch = _Batch(state, state.next, state.batches[state.next])
            state.next += 1
            actor = pool.free.pop()
            if pool.info.lookup:
                ref = actor.lookup.remote([c.id for c in batch.clips])
            else:
                send = _resolve(batch, pool, store)
                if not send:  # everything cached (or unusable): no worker needed
                    pool.free.append(actor)
                    _finish(batch, pool, store)
                    continue
                ref = actor.transcribe.remote(send)
                self.n_sent += len(send)
            batch.pending = 1
            pool.busy += 1
            inflight[ref] = ("batch", pool, actor, (batch, [c.id for c in batch.clips]))

    def _ship(self, batch: _Batch, answer: WorkerBatch, pool: _Pool, actor: Any, inflight: dict[Any, Any]) -> None:
        """Clips the worker could not see or build: the driver reads their bytes, or builds their
        recipes, and ships them (object store)."""
        if not answer.unreachable and not answer.unbuilt:
            return
        by_id = {c.id: c for c in batch.clips}
        shipped = []
        for cid, why in answer.unbuilt.items():
            try:  # the code a local run realizes with, raising what it raises
                shipped.append(built(by_id[cid]))
            except ConfigError:
                raise
            except AuditError as exc:
                batch.unbuilt[cid] = str(exc)
                continue
            self.n_built_on_driver += 1
            self.log(
                f"{pool.model.name}: clip {cid}: its recipe was built on the driver and shipped "
                f"(the worker could not build it: {' '.join(why.split())[:200]})"
            )
        for cid in answer.unreachable:
            c = by_id[cid]
            path = Path(str(c.audio_path))
            if not path.is_file():
                batch.bad[cid] = "audio file not found"  # the driver cannot read it either (as a local run says)
                continue
            source = EncodedSource(path.read_bytes(), label=str(c.audio_path))
            shipped.append(dataclasses.replace(c, audio_path=None, source=source))
        if shipped:
            self.n_shipped += len(shipped)
            batch.pending += 1
            pool.busy += 1
            inflight[actor.transcribe.remote(shipped)] = ("shipped", pool, actor, (batch, [c.id for c in shipped]))

    def _result(self, state: _JobState, pool: _Pool) -> JobResult:
        from asr_audit.store.transcribe import ClipFailure, TranscribeOutcome

        assert pool.info is not None
        name = state.job.model.name  # (a pool serves every model name with its spec and options)
        self.identities[name] = pool.info.identity.to_dict()
        self.nodes.setdefault(name, set()).update(self.nodes.get(pool.model.name, ()))
        every = [e for i in range(len(state.batches)) for e in state.entries[i]]
        unbuilt = {e.clip_id: e.reason for e in every if isinstance(e, _Unbuilt)}
        entries = [e for e in every if not isinstance(e, _Unbuilt)]
        records = tuple(e for e in entries if not isinstance(e, ClipFailure))
        failures = tuple(e for e in entries if isinstance(e, ClipFailure))
        corpus = state.job.corpus
        outcome = TranscribeOutcome(
            pool.info.spec,
            pool.key,
            corpus.name,
            corpus.split,
            records,
            failures,
            len(records) if pool.info.lookup else state.n_cached,
            state.n_computed,
            state.audio_s,
            state.compute_s,
        )
        return JobResult(state.job.model.name, corpus.name, outcome, unbuilt, dict(pool.info.traits))


@dataclass(frozen=True)
class RemoteModel:
    """A spec's model served by its Ray actor pool, shaped as the audio probes use a backend: ``spec``,
    ``identity()``, ``capabilities`` and ``max_duration`` as the workers loaded them; teacher-forced
    scoring on the workers (:meth:`score`, the lift probe's
    :class:`~asr_audit.probes.audio.lift.Scorer` chunks, each scored there by the same
    :func:`~asr_audit.models.ops.compute_scores`); transcription through the store
    (:meth:`transcribe`, the intelligibility gate): a :class:`~asr_audit.probes.core.models.Model`."""

    executor: RayExecutor
    name: str
    info: WorkerInfo
    store: Store  # the driver's store (the pool registers its backend there if it must start again)

    @property
    def spec(self) -> str:
        return self.info.spec

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(self.info.capabilities)

    @property
    def max_duration(self) -> Seconds | None:
        return self.info.max_duration

    def identity(self) -> Any:
        return self.info.identity

    def transcribe(self, clips: Iterable[Clip], store: Store) -> Transcribed:
        """The clips' transcripts by this model, on its actors and through the store."""
        return self.executor.transcribe({self.name: tuple(clips)}, store)[self.name]

    @property
    def forced_refusal(self) -> str | None:
        """Why the workers' backend cannot decode with end-of-text banned (``None``: it can)."""
        return self.info.forced

    def score(self, chunks: Sequence[Sequence[tuple[Any, str, str, str]]]) -> list[tuple[list[Any], Seconds]]:
        """Each chunk of ``(audio, hash, prefix, target)`` rows scored on a worker
        (:meth:`~asr_audit.runner.ray_worker.ModelWorker.score`): per chunk the scores (or failure
        texts) in row order and the compute seconds."""
        return self._rows("score", chunks)

    def forced(self, rows: Sequence[tuple[Any, str]], extra_tokens: int) -> list[Any]:
        """Forced continuation of ``(audio, hash)`` rows on the workers
        (:meth:`~asr_audit.runner.ray_worker.ModelWorker.forced`), ``batch_size`` rows a request:
        per row ``(plain, forced)`` or a failure text, in order."""
        size = self.executor.models[self.name].batch_size
        chunks = [rows[i : i + size] for i in range(0, len(rows), size)]
        return [r for got, _ in self._rows("forced", chunks, extra_tokens) for r in got]

    def isolated(self, rows: Sequence[tuple[Any, tuple[float, float]]]) -> list[tuple[str | None, str | None]]:
        """The courtesy study's attn-isolated arm (:data:`~asr_audit.probes.battery.courtesy.Isolate`) on
        the workers (:meth:`~asr_audit.runner.ray_worker.ModelWorker.isolated`), ``batch_size`` clips a
        request: per ``(clip, window)`` the text or the error. The driver reads each clip once for the
        hash the worker checks its audio against (it aligned the clip for the window already)."""
        from asr_audit.audio.io import audio_hash, load_audio

        out: list[tuple[str | None, str | None]] = [(None, None)] * len(rows)
        hashed, where = [], []
        for i, (clip, w) in enumerate(rows):
            try:
                hashed.append((clip, audio_hash(load_audio(clip)), w))
            except AuditError as exc:  # a clip a local run cannot read either: its error, as locally
                out[i] = (None, str(exc))
                continue
            where.append(i)
        size = self.executor.models[self.name].batch_size
        chunks = [hashed[i : i + size] for i in range(0, len(hashed), size)]
        got = [r for answers, _ in self._rows("isolated", chunks) for r in answers]
        for i, r in zip(where, got):
            out[i] = r if isinstance(r, tuple) else (None, r)  # a chunk whose worker died: its reason
        return out

    def _rows(
        self, method: str, chunks: Sequence[Sequence[tuple[Any, ...]]], *args: Any
    ) -> list[tuple[list[Any], Seconds]]:
        """Each chunk of rows ``(audio, hash, ...)`` answered by ``actor.<method>(rows, *args)``: a row's
        audio travels as its clip (a path, a URL, a recipe) or a
        :class:`~asr_audit.probes.audio.lift.Silence`; rows a worker cannot rebuild are rebuilt here
        and their samples shipped (logged), and the chunk is sent again whole, so each chunk is
        computed as the local run computes it. A chunk whose worker died on every retry fails its rows."""
        ex, model = self.executor, self.executor.models[self.name]
        sent = [[(_portable_ref(r[0]), *r[1:]) for r in chunk] for chunk in chunks]
        ex.n_model_rows += sum(len(c) for c in sent)
        answers, _ = ex._call(model, method, [(c, *args) for c in sent], self.store)
        out: list[tuple[list[Any], Seconds]] = [([], 0.0)] * len(chunks)
        again: dict[int, list[tuple[Any, ...]]] = {}
        for n, (chunk, answer) in enumerate(zip(sent, answers)):
            if isinstance(answer, _Died):
                out[n] = ([answer.reason] * len(chunk), 0.0)
            elif answer.fatal:
                raise AuditError(answer.fatal)
            elif answer.unresolved:
                rows = list(chunk)
                for i, why in answer.unresolved.items():
                    ref = rows[i][0]
                    rows[i] = (row_audio(built(ref) if isinstance(ref, Clip) else ref), *rows[i][1:])
                    ex.n_rows_shipped += 1
                    ex.log(
                        f"{self.name}: {method} row audio {getattr(ref, 'id', ref)}: rebuilt on the driver and "
                        f"shipped (the worker could not: {' '.join(why.split())[:200]})"
                    )
                again[n] = rows
            else:
                out[n] = (list(answer.results), answer.seconds)
        if again:
            shipped, _ = ex._call(model, method, [(c, *args) for c in again.values()], self.store)
            for n, answer in zip(again, shipped):
                if isinstance(answer, _Died):
                    out[n] = ([answer.reason] * len(again[n]), 0.0)
                elif answer.fatal or answer.unresolved:
                    raise AuditError(answer.fatal or f"model {self.name!r}: a worker refused audio shipped to it")
                else:
                    out[n] = (list(answer.results), answer.seconds)
        return out


@dataclass(frozen=True, slots=True)
class _Died:
    """A request whose Ray worker died on every retry: its reason."""

    reason: str


def _no_progress(_n: int, _audio: Seconds, _compute: Seconds) -> None:
    """The progress hook of a pool started for a call that transcribes nothing."""


def _portable_ref(audio: Any) -> Any:
    """A row's audio as it travels: a clip made portable (:func:`_travel`, :func:`_portable`), anything
    else (samples, a :class:`~asr_audit.probes.core.models.Silence`) as it is."""
    return _portable(_travel(audio), None) if isinstance(audio, Clip) else audio


def _travel(clip: Clip) -> Clip:
    """``clip`` with audio derived on the driver (:class:`~asr_audit.audio.transforms.DerivedSource`) as
    the recipe of that derivation (its original clip, the transforms, the seed: what a worker builds
    the same samples from), the clip's id and metadata kept; a derivation without transforms is
    the original clip's audio. Any other clip as it is."""
    src = clip.source
    if not isinstance(src, DerivedSource):
        return clip
    if not src.steps:
        return dataclasses.replace(clip, audio_path=src.origin.audio_path, source=src.origin.source)
    recipe = derived_recipe(src.origin, src.steps, src.seed)
    return dataclasses.replace(clip, source=recipe.source)


# ---------------------------------------------------------------------- helpers (driver side)


@dataclass(frozen=True, slots=True)
class _Unbuilt:
    """A recipe clip built nowhere: the driver's error (kept out of the job's records and failures)."""

    clip_id: str
    reason: str


def _quiet(_: str) -> None:
    """A log that drops its lines (repeated pools of one run say nothing new)."""


def _model_of(models: Mapping[str, ModelSpec], key: str | Variant) -> ModelSpec:
    """The spec's model ``key``, or a :class:`~asr_audit.probes.battery.recipe.Variant` of one (its
    decode options replaced; named ``<model> [option=value, ...]``)."""
    if not isinstance(key, Variant):
        return models[key]
    m = models[key.model]
    return dataclasses.replace(m, name=key.name, options={**dict(m.options), **dict(key.options)})


def _pool_key(m: ModelSpec) -> tuple[Any, ...]:
    """What an actor pool is for: the model's spec and decode options, and its runtime options (device,
    batch size, resources, replicas); model names with the same key share one pool."""
    import json

    options = json.dumps(dict(m.options), sort_keys=True, default=str)
    return (m.spec, options, m.device, m.batch_size, m.num_gpus, m.num_cpus, m.replicas)


def _batches(clips: Sequence[Clip], size: int) -> list[tuple[Clip, ...]]:
    if size < 1:
        raise ConfigError(f"--batch-size must be >= 1, got {size}")
    return [tuple(clips[i : i + size]) for i in range(0, len(clips), size)]


def _check_resources(m: ModelSpec, total: dict[str, float], *, strict: bool, log: Callable[[str], None]) -> None:
    """A model asking for more than the cluster has: an error on a Ray started here, a warning on a
    cluster that may still grow (an autoscaler adds nodes when actors wait)."""
    for what, key, want in (("num_gpus", "GPU", m.num_gpus), ("num_cpus", "CPU", m.num_cpus)):
        have = float(total.get(key, 0.0))
        if want > have:
            msg = f"model {m.name!r} asks for {what} = {want:g} per actor but the Ray cluster has {have:g} {key}(s)"
            if strict:
                raise ConfigError(
                    f"{msg}; fix: lower {what} in its [[model]] table, or join a cluster that has them (--address)"
                )
            log(f"warning: {msg}; its actors wait until the cluster provides them")


def _get(ray: Any, ref: Any, pool: _Pool, batch: _Batch | None, sent: Sequence[str] = ()) -> Any:
    """``ray.get`` one answer; a task whose worker died on every retry fails the clips it carried (``sent``)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayActorError as exc:
        if batch is None:
            raise AuditError(
                f"model {pool.model.name!r}: its Ray actor could not start ({' '.join(str(exc).split())[:200]}); "
                "fix: check the worker logs (`ray logs`) and that asr-audit with the model's extra is installed there"
            ) from None
        reason = f"the Ray worker died on this batch ({' '.join(str(exc).split())[:120]})"
        if pool.info is not None and pool.info.lookup:
            return [None] * len(batch.clips), reason
        return WorkerBatch(bad=dict.fromkeys(sent, reason))


def _resolve(batch: _Batch, pool: _Pool, store: Store) -> list[Clip]:
    """Look the batch up in the store; returns the clips a worker must read (as a local run decodes)."""
    from asr_audit.audio.io import ClipAudioError, check_duration
    from asr_audit.store.transcribe import file_fingerprint

    assert pool.info is not None
    batch.fps = {c.id: file_fingerprint(c) for c in batch.clips}
    index = store.lookup_audio([f for f in batch.fps.values() if f])
    for c in batch.clips:
        entry = index.get(batch.fps[c.id] or "")
        if entry is not None:
            batch.hits[c.id] = (entry.audio_hash, entry.duration)
    batch.cached = store.get_transcripts(pool.key, [h for h, _ in batch.hits.values()])
    send = []
    for c in batch.clips:
        try:
            if c.id in batch.hits and batch.hits[c.id][0] in batch.cached:
                check_duration(c, batch.hits[c.id][1], pool.info.max_duration)
                continue
            send.append(_portable(c, pool.info.max_duration))
        except ClipAudioError as exc:
            batch.bad[c.id] = exc.reason
    return send


def _portable(clip: Clip, max_duration: Seconds | None) -> Clip:
    """``clip`` as it can travel to a worker: paths, URLs and plain in-memory audio as they are; audio
    behind any other source (an ``hf-dataset:`` row holds a handle on the driver's Arrow cache) is
    decoded here, as a local run decodes it, and travels as 16 kHz samples."""
    from asr_audit.audio.io import SAMPLE_RATE, load_clip_audio

    if clip.source is None or isinstance(clip.source, (ArraySource, EncodedSource)):
        return clip
    if isinstance(clip.source, RecipeSource):  # a recipe travels; what it reads travels as any clip does
        return dataclasses.replace(clip, source=clip.source.map_clips(_portable_part))
    audio = load_clip_audio(clip, max_duration)  # a ClipAudioError is the clip's failure, as locally
    return dataclasses.replace(clip, source=ArraySource(audio.samples, SAMPLE_RATE, clip.audio_label))


def _portable_part(clip: Clip) -> Clip:
    """A clip a recipe reads, made portable; one the driver cannot decode stays as it is (the worker
    then cannot build the recipe either, and the driver's build raises what a local run raises)."""
    from asr_audit.audio.io import ClipAudioError

    try:
        return _portable(clip, None)
    except ClipAudioError:
        return clip


def _finish(batch: _Batch, pool: _Pool, store: Store) -> None:
    """Commit a batch's new transcripts and record its clips in order (as ``transcribe_corpus`` does)."""
    from asr_audit.store.export import PredictionRecord
    from asr_audit.store.transcribe import ClipFailure

    state, key = batch.state, pool.key
    hashes = {cid: hit for cid, hit in batch.hits.items() if hit[0] in batch.cached}
    bad = dict(batch.bad)
    done: dict[str, tuple[str, Seconds]] = {}
    failed: dict[str, str] = {}
    remember = []
    for part in batch.parts:
        bad.update(part.bad)
        done.update(part.done)
        failed.update(part.failed)
        for cid, (h, dur) in part.hashes.items():
            hashes[cid] = (h, dur)
            fp = batch.fps.get(cid) or part.fingerprints.get(cid)
            if fp:
                remember.append((fp, h, dur))
    store.remember_audio(remember)
    loaded = sorted({h for part in batch.parts for h, _ in part.hashes.values()})
    cached = {**batch.cached, **store.get_transcripts(key, loaded)}
    durations = dict(hashes.values())
    fresh = {h: v for h, v in done.items() if h not in cached}
    failed = {h: r for h, r in failed.items() if h not in cached}
    batch_audio = sum(durations[h] for h in fresh)
    batch_compute = sum(sec for _, sec in fresh.values())
    added = store.put_transcripts(key, [(h, text, sec) for h, (text, sec) in fresh.items()])
    # another process may have stored some keys first: then serve what the store holds
    stored = store.get_transcripts(key, list(fresh)) if added < len(fresh) else {}
    served = {h: (stored[h].value, stored[h].seconds) if h in stored else v for h, v in fresh.items()}
    entries: list[Any] = []
    for c in batch.clips:
        if c.id in batch.unbuilt:
            entries.append(_Unbuilt(c.id, batch.unbuilt[c.id]))
            continue
        if c.id in bad:
            entries.append(ClipFailure(c.id, bad[c.id]))
            continue
        h, dur = hashes[c.id]
        if h in failed:
            entries.append(ClipFailure(c.id, failed[h]))
            continue
        if h in cached:
            text, sec = cached[h].value, cached[h].seconds
            state.n_cached += 1
        else:
            (text, sec), state.n_computed = served[h], state.n_computed + 1
        entries.append(PredictionRecord(c.id, c.reference, text, c.duration if c.duration is not None else dur, sec))
    state.entries[batch.index] = entries
    state.audio_s += batch_audio
    state.compute_s += batch_compute
    state.hook(len(batch.clips), batch_audio, batch_compute)


def _finish_lookup(batch: _Batch, answer: list[str | None] | tuple[list[None], str], spec: str) -> None:
    """A lookup backend's batch (``preds:``), recorded as ``transcribe_corpus`` records it."""
    from asr_audit.store.export import PredictionRecord
    from asr_audit.store.transcribe import ClipFailure

    texts, died = (answer, None) if isinstance(answer, list) else answer
    entries: list[Any] = []
    for clip, text in zip(batch.clips, texts):
        if text is None:
            entries.append(ClipFailure(clip.id, died or f"no prediction for this clip in {spec}"))
        else:
            entries.append(PredictionRecord(clip.id, clip.reference, text, clip.duration, None))
    batch.state.entries[batch.index] = entries
    batch.state.hook(len(batch.clips), 0.0, 0.0)


def _release(ray: Any, pool: _Pool) -> None:
    """Kill the pool's actors (their resources return to the cluster)."""
    for actor in pool.actors:
        ray.kill(actor, no_restart=True)
    pool.actors = []
    pool.free = []
