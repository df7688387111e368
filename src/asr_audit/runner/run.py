"""Run an experiment spec: plan, transcribe through the store, probe, report.

``run_experiment`` is what ``asr-audit run audit.toml`` calls:

1. **plan** — every (model, clip) of every audio corpus (optionally one shard of them);
2. **transcribe** — through the SQLite store, so cached results are never recomputed and a
   killed run resumes where it stopped; per-clip failures are collected, not fatal;
3. **probe** — every probe of the spec on every corpus (audio corpora via their transcripts,
   prediction-file corpora directly);
4. **report** — ``results.json``, CSV tables, plots and ``report.html`` in the output folder.

Executors are an interface (:class:`Executor`): :class:`LocalExecutor` runs jobs in this process
with one progress display; :class:`~asr_audit.runner.ray_exec.RayExecutor` runs them on a Ray
cluster (``make_executor`` picks one by name).
"""

from __future__ import annotations

import contextlib
import hashlib
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import asr_audit
from asr_audit.calib.score import truth_verify
from asr_audit.corpus.clips import Clip
from asr_audit.corpus.predfiles import PredictionSet, load_predictions
from asr_audit.corpus.records import PredictionFile, PredictionRow
from asr_audit.corpus.spec import load_corpus
from asr_audit.errors import AuditError, ConfigError
from asr_audit.models.base import DecodeOptions, RuntimeOptions
from asr_audit.options import Surface
from asr_audit.outputs import check_output_dir, mark_output_dir
from asr_audit.probes.core.models import LocalModel, LocalPool, Transcribed, Variant
from asr_audit.probes.core.probe import ModelPool, PredictionFiles, ProbeInputs, get_probe
from asr_audit.probes.predfiles.refdis_run import isolated_panel_members
from asr_audit.report.html import build_report
from asr_audit.report.tables import to_json, write_text
from asr_audit.runner.executor import Executor, Job, JobResult
from asr_audit.runner.probes import load_probes
from asr_audit.runner.progress import RunProgress
from asr_audit.runner.ray_exec import RayExecutor
from asr_audit.runner.spec import CorpusSpec, ExperimentSpec, ModelSpec, load_spec
from asr_audit.store.base import Store
from asr_audit.store.sqlite import open_store
from asr_audit.store.transcribe import corpus_wer, coverage, transcribe_corpus
from asr_audit.text.normalize import get_normalizer

__all__ = [
    "Executor",
    "Job",
    "JobResult",
    "LocalExecutor",
    "local_pool",
    "RunOutcome",
    "Shard",
    "make_executor",
    "run_experiment",
    "run_spec_file",
]


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based): clips whose id hashes to ``index`` modulo ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"i/n"`` with 0 <= i < n.

        >>> Shard.parse("1/4")
        Shard(index=1, count=4)
        """
        try:
            i, n = (int(x) for x in text.split("/"))
        except ValueError:
            raise ConfigError(f"--shard {text!r} is not i/n; fix: e.g. --shard 0/4") from None
        if n < 1 or not 0 <= i < n:
            raise ConfigError(f"--shard {text!r} needs 0 <= i < n; fix: e.g. --shard 0/4 .. 3/4")
        return cls(i, n)

    def owns(self, clip_id: str) -> bool:
        h = int.from_bytes(hashlib.sha256(clip_id.encode()).digest()[:8], "big")
        return h % self.count == self.index


def make_executor(
    kind: str, *, address: str | None = None, show_progress: bool = True, log: Callable[[str], None] = print
) -> Any:
    """The executor named ``kind`` (``local`` or ``ray``; ``address`` only with ``ray``)."""
    if kind == "local":
        if address is not None:
            raise ConfigError("--address names a Ray cluster; fix: add --executor ray, or drop --address")
        return LocalExecutor(show_progress)
    if kind == "ray":
        return RayExecutor(address, show_progress, log)
    raise ConfigError(f"--executor {kind!r} is not an executor; fix: use local or ray")


@dataclass
class LocalExecutor:
    """Runs jobs one after another in this process, with a rich progress display."""

    show_progress: bool = True
    backends: dict[str, Any] = field(default_factory=dict)
    models: dict[str, ModelSpec] = field(default_factory=dict)

    def _backend(self, m: ModelSpec) -> Any:
        # looked up when called: tests substitute models.base.load_backend (tests/runner/test_mech_run_e2e.py)
        from asr_audit.models.base import load_backend

        if m.name not in self.backends:
            runtime = RuntimeOptions(device=m.device, batch_size=m.batch_size)
            self.backends[m.name] = load_backend(m.spec, DecodeOptions.from_dict(dict(m.options)), runtime)
        return self.backends[m.name]

    @property
    def names(self) -> tuple[str, ...]:
        """The spec's models (:class:`~asr_audit.probes.core.probe.ModelPool`)."""
        return tuple(self.models)

    def model(self, name: str | Variant, store: Store | None = None) -> LocalModel:
        """The model's handle (:class:`~asr_audit.probes.core.probe.ModelPool`): its backend, in this process."""
        return self._pool.model(name, store)

    def transcribe(self, jobs: Mapping[Any, Iterable[Clip]], store: Store | None) -> dict[Any, Transcribed]:
        """Each model's clips transcribed through the store (:class:`~asr_audit.probes.core.probe.ModelPool`)."""
        return self._pool.transcribe(jobs, store)

    @property
    def _pool(self) -> LocalPool:
        return LocalPool(self._load, self.names)

    def _load(self, key: str | Variant) -> Any:
        """The backend of a model name, or of a :class:`~asr_audit.probes.core.models.Variant` (the model
        with other decode options, loaded as a model of its own)."""
        if not isinstance(key, Variant):
            return self.get(key)
        m = self.models.get(key.model)
        if m is None:
            raise ConfigError(f"no model named {key.model!r} in the spec; available: {', '.join(self.models)}")
        return self._backend(replace(m, name=key.name, options={**dict(m.options), **dict(key.options)}))

    def get(self, name: str) -> Any:
        """The loaded backend of the spec's model ``name``, loaded on first use
        (:class:`~asr_audit.probes.core.probe.ModelPool`)."""
        m = self.models.get(name)
        if m is None:
            raise ConfigError(f"no model named {name!r} in the spec; available: {', '.join(self.models)}")
        return self._backend(m)

    def identity(self, name: str) -> dict[str, Any] | None:
        """The identity of the model ``name``'s loaded backend (``None`` if it was never loaded)."""
        return self.backends[name].identity().to_dict() if name in self.backends else None

    def run(self, jobs: Sequence[Job], store: Store) -> list[JobResult]:
        results = []
        with RunProgress([(j.model.name, len(j.corpus)) for j in jobs], enabled=self.show_progress) as progress:
            for j in jobs:
                backend = self._backend(j.model)
                outcome = transcribe_corpus(
                    backend, j.corpus, store, batch_size=j.model.batch_size, progress=progress.callback(j.model.name)
                )
                results.append(JobResult(j.model.name, j.corpus.name, outcome))
        return results


def local_pool(specs: Sequence[str] = (), loaded: Mapping[str, Any] | None = None) -> LocalExecutor:
    """A :class:`~asr_audit.probes.core.probe.ModelPool` of the model specs a verb names (each its own
    name, loaded here on first use): the pool a CLI verb or the API gives a probe, as a spec run
    gives its executor. ``loaded`` adds backends loaded already, by name (a trained organism, a
    test's doubles)."""
    models = {s: ModelSpec(s, s) for s in [*specs, *(loaded or {})]}
    return LocalExecutor(show_progress=False, backends=dict(loaded or {}), models=models)


def _prediction_set(corpus: Any, results: Sequence[JobResult]) -> Any:
    """An in-memory prediction set from one corpus's transcripts (failed clips = missing)."""

    files = []
    by_model = {}
    for r in results:
        rows = {
            rec.clip_id: PredictionRow(rec.clip_id, rec.reference.strip(), rec.hypothesis, rec.duration, rec.time)
            for rec in r.outcome.records
        }
        for c in corpus.clips:
            rows.setdefault(c.id, PredictionRow(c.id, c.reference.strip(), None))
        pf = PredictionFile(r.model, Path(f"store:{r.outcome.backend_key}"), corpus.name, corpus.split, rows)
        files.append(pf)
        by_model[r.model] = pf
    refs = {c.id: c.reference.strip() for c in sorted(corpus.clips, key=lambda c: c.id)}
    return PredictionSet(tuple(files), refs, corpus.name, corpus.source, by_model)


def _files_of(c: CorpusSpec, preds: PredictionSet, plain: bool) -> PredictionFiles:
    """A prediction-file corpus's files (read already: ``preds``), for probes that read them
    themselves (refdis's columns and text cache, where ``plain``)."""
    return PredictionFiles(Path(c.predictions or preds.source), c.dataset, lambda: preds, plain=plain)


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"asr-audit": asr_audit.__version__, "python": platform.python_version()}
    for pkg in ("numpy", "whisper-normalizer", "kaldialign", "ctranslate2", "torch", "transformers", "pocketsphinx"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


@dataclass(frozen=True, slots=True)
class RunOutcome:
    results: dict[str, Any]
    report: Path | None
    n_computed: int
    n_cached: int
    sharded: bool
    config_errors: tuple[str, ...] = ()  # probes that failed on a configuration error (the run exits 2)
    decodes: dict[str, Any] = field(default_factory=dict)  # the store's counts (store/counts.py), in run.json


def plan(spec: ExperimentSpec, shard: Shard | None = None) -> tuple[list[Job], dict[str, Any]]:
    """The transcription jobs of ``spec`` and its audio corpora (limited and sharded)."""

    corpora = {}
    jobs: list[Job] = []
    for c in spec.corpora:
        if c.spec is None:
            continue
        corpus = replace(load_corpus(c.spec).limit(c.limit), name=c.name)
        if shard is not None:
            corpus = replace(corpus, clips=tuple(x for x in corpus.clips if shard.owns(x.id)))
        corpora[c.name] = corpus
        jobs.extend(Job(m, corpus) for m in spec.models)
    return jobs, corpora


def _panel_for(spec: ExperimentSpec, c: CorpusSpec, available: Sequence[str]) -> tuple[str, ...]:
    panel = c.panel if c.panel is not None else spec.panel
    missing = [p for p in panel if p not in available]
    if missing:
        raise ConfigError(
            f"{spec.path}: panel model {missing[0]!r} has no predictions for corpus {c.name!r}; "
            f"fix: use names from {', '.join(available)} (set corpus.panel for prediction-file corpora)"
        )
    return tuple(panel)


def run_experiment(
    spec: ExperimentSpec,
    shard: Shard | None = None,
    executor: Executor | None = None,
    store_path: str | None = None,
    log: Callable[[str], None] = print,
) -> RunOutcome:
    """Run ``spec`` end to end (see the module docstring)."""

    store_handle = open_store(store_path or spec.store)
    try:
        if executor is None:
            executor = make_executor(spec.executor, address=spec.ray_address, log=log)
        session = getattr(executor, "session", None)  # an executor that keeps its cluster up for the whole run
        with session() if session is not None else contextlib.nullcontext():
            return _run(spec, shard, executor, store_handle, log)
    finally:
        store_handle.close()


def run_spec_file(
    spec_path: Path,
    *,
    out: Path | None = None,
    shard: str | None = None,
    store: str | None = None,
    executor: str | None = None,
    address: str | None = None,
    show_progress: bool = True,
    force: bool = False,
    log: Callable[[str], None] = print,
    out_name: str = "out",
) -> RunOutcome:
    """The spec file at ``spec_path`` end to end: what ``asr-audit run`` and :func:`asr_audit.api.run_spec` do.

    ``out`` replaces the spec's output folder (named ``out_name`` in an error), which is checked
    before any work unless a ``shard`` (``i/n``) runs; ``executor`` and ``address`` replace the
    spec's (``address`` is used only with ``ray``).
    """
    spec = load_spec(spec_path)
    if out is not None:
        spec = replace(spec, output=str(out))
    kind = executor or spec.executor
    ray_address = address if address is not None else (spec.ray_address if kind == "ray" else None)
    runner = make_executor(kind, address=ray_address, show_progress=show_progress, log=log)
    if not shard:
        check_output_dir(Path(spec.output), f"{spec_path}: output" if out is None else out_name, force)
    return run_experiment(spec, Shard.parse(shard) if shard else None, runner, store, log=log)


def _run(
    spec: ExperimentSpec, shard: Shard | None, executor: Executor, store_handle: Store, log: Callable[[str], None]
) -> RunOutcome:
    if isinstance(getattr(executor, "models", None), dict):  # executors that load backends by model name
        executor.models.update({m.name: m for m in spec.models})  # type: ignore[attr-defined]
    jobs, corpora = plan(spec, shard)
    failures: list[dict[str, str]] = []
    config_errors: list[str] = []
    entries: list[dict[str, Any]] = []
    corpora_meta: list[dict[str, Any]] = []
    models_meta: dict[str, dict[str, Any]] = {}
    n_computed = n_cached = 0
    job_results = executor.run(jobs, store_handle) if jobs else []
    for r in job_results:
        o = r.outcome
        n_computed += o.n_computed
        n_cached += o.n_cached
        identity = getattr(executor, "identity", None)  # an executor that knows its backends can name them
        ident = identity(r.model) if identity is not None else None
        m = next(x for x in spec.models if x.name == r.model)
        models_meta[r.model] = {"name": r.model, "spec": m.spec, "options": dict(m.options), "identity": ident}
        failures.extend(
            {"model": r.model, "corpus": r.corpus, "clip_id": f.clip_id, "reason": f.reason} for f in o.failures
        )
    if shard is not None:
        log(
            f"shard {shard.index}/{shard.count}: {n_computed} transcriptions computed, {n_cached} cached; "
            "merge the shard stores (asr-audit merge) and rerun without --shard for the report"
        )
        return RunOutcome({}, None, n_computed, n_cached, True, decodes=store_handle.decodes.to_dict())

    timings: list[dict[str, Any]] = []  # run-dependent numbers go to run.json, not results.json
    for c in spec.corpora:
        files = None  # an audio corpus's predictions are its transcripts
        if c.spec is not None:
            corpus = corpora[c.name]
            preds = _prediction_set(corpus, [r for r in job_results if r.corpus == c.name])
            src = corpus.source
            transcribe_rows = []
            for r in job_results:
                if r.corpus != c.name:
                    continue

                refs = {x.id: x.reference for x in corpus.clips}
                missing = [refs[f.clip_id] for f in r.outcome.failures if f.clip_id in refs]
                transcribe_rows.append(
                    {
                        "model": r.model,
                        "n_clips": len(r.outcome.records),
                        "n_failed": len(r.outcome.failures),
                        "wer": corpus_wer(r.outcome.records, missing=missing),
                        "coverage": coverage(r.outcome),
                    }
                )
                timings.append(
                    {
                        "model": r.model,
                        "corpus": c.name,
                        "computed": r.outcome.n_computed,
                        "cached": r.outcome.n_cached,
                        "audio_seconds": r.outcome.audio_seconds,
                        "compute_seconds": r.outcome.compute_seconds,
                        "rtfx": r.outcome.rtfx,
                    }
                )
            entries.append({"probe": "transcribe", "corpus": c.name, "result": {"models": transcribe_rows}})
        else:
            read = c.read_options(spec.path, spec.corpora.index(c))
            preds = load_predictions(
                c.predictions,  # type: ignore[arg-type]
                c.dataset,
                read=read,
                normalize=get_normalizer(spec.normalizer) if read.references == "normalized" else None,
            )
            files = _files_of(c, preds, read.is_default)
            for repair in preds.repairs:
                log(f"corpus {c.name!r}: repaired: {repair.describe()}")
            src = preds.source
            for model_name in preds.models:
                models_meta.setdefault(
                    model_name, {"name": model_name, "spec": f"preds:{preds.file(model_name).path}", "identity": None}
                )
        corpora_meta.append(
            {
                "name": c.name,
                "source": src,
                "n_clips": len(preds.references),
                "kind": "audio" if c.spec else "predictions",
            }
        )
        panel = _panel_for(spec, c, preds.models) if preds.models else ()

        for member in isolated_panel_members(preds, panel):
            log(
                f"warning: corpus {c.name!r}: panel model {member} shares no answered clip id with the other panel "
                "models; it never votes beside them (is its file from another corpus?)"
            )
        spec_file = Path(spec.path)
        inputs = ProbeInputs(
            corpus=c.name,
            predictions=preds,
            panel=panel,
            seed=spec.seed,
            normalizer=spec.normalizer,
            clips=corpora.get(c.name),
            pool=executor if isinstance(executor, ModelPool) else None,
            models=tuple(m.name for m in spec.models) if c.spec is not None else (),
            store=store_handle,
            base=spec_file.resolve().parent if spec_file.is_file() else None,
            files=files,
            verify_truth=truth_verify,
        )
        load_probes()
        for name, base_params in spec.probes.items():
            params = {**base_params, **c.probes.get(name, {})}
            if params.pop("skip", False):
                continue
            log(f"probe {name} on {c.name}")
            try:
                result = get_probe(name)(inputs, params, Surface.toml(spec.path, f"probes.{name}"))
            except AuditError as exc:
                if isinstance(exc, ConfigError):
                    config_errors.append(f"probe {name} on corpus {c.name!r}: {exc}")
                failures.append({"model": "*", "corpus": c.name, "clip_id": "*", "reason": f"probe {name}: {exc}"})
                continue
            if result is None:  # the probe does not apply to this corpus
                continue
            entries.append(
                {
                    "probe": name,
                    "corpus": c.name,
                    "published": params.get("published", "vox_en_newwl4"),
                    "result": result,
                }
            )
    results = {
        "title": spec.title,
        "asr_audit_version": _versions()["asr-audit"],
        "seed": spec.seed,
        "normalizer": get_normalizer(spec.normalizer).describe(),
        "spec": spec.to_dict(),
        "versions": _versions(),
        "models": [models_meta[k] for k in sorted(models_meta)],
        "corpora": corpora_meta,
        "failures": sorted(failures, key=lambda f: (f["corpus"], f["model"], f["clip_id"])),
        "probes": entries,
    }

    mark_output_dir(Path(spec.output))  # a rerun into this folder is allowed without --force
    report = build_report(results, spec.output)

    decodes = store_handle.decodes.to_dict()  # what the store saved: run.json only (results.json stays identical)
    run_meta = {"computed": n_computed, "cached": n_cached, "decodes": decodes, "jobs": timings}
    write_text(Path(spec.output) / "run.json", to_json(run_meta))
    return RunOutcome(results, report, n_computed, n_cached, False, tuple(config_errors), decodes)
