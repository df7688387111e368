"""The experiment spec: one TOML file naming corpora, models, panel, probes, seed and outputs.

Example (``asr-audit run audit.toml``)::

    title = "Whisper tiny vs base on LibriVox"
    seed = 0
    output = "audit-out"
    normalizer = "whisper"
    store = "audit-store.sqlite"        # optional; default: the user cache store
    executor = "local"                  # or "ray" (a Ray cluster; see docs/scale.md)
    ray_address = "auto"                # optional, with executor = "ray": the cluster to join

    [[corpus]]
    name = "librivox"
    spec = "data/librivox"              # manifest / LibriSpeech dir / Kaldi dir / hf-dataset:...
    limit = 50                          # optional

    [[corpus]]
    name = "voxpopuli-examples"
    predictions = "preds/voxpopuli"     # existing prediction files instead of audio

    [[model]]
    name = "tiny"
    spec = "whisper-tiny.en"
    options = { language = "en" }       # decode options (see DecodeOptions)
    # with executor = "ray": resources of each actor and how many actors serve this model
    num_gpus = 1
    num_cpus = 2
    replicas = 4

    [panel]
    models = ["tiny", "base", "sphinx"]

    [probes.refdis]
    preset = "paper"
    min_panel = 2

    [probes.switch_rate]

Validation errors name the file and the field, and say what to write instead. Where the work
runs (``executor``, ``ray_address``, a model's ``num_gpus`` / ``num_cpus`` / ``replicas``) does
not change a number, so it stays out of :meth:`ExperimentSpec.to_dict` and ``results.json``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_audit.corpus.reading import ReadOptions
from asr_audit.errors import ConfigError
from asr_audit.models.base import DecodeOptions, RuntimeOptions
from asr_audit.models.base import parse_spec as parse_model_spec
from asr_audit.options import Surface
from asr_audit.runner.probes import available_probes, validate_probe_options, validate_probe_params

EXECUTORS = ("local", "ray")
# a prediction corpus's reading fields (corpus.reading.ReadOptions; the CLI's --id-col etc. are columns.id, ...)
READING_FIELDS = ("columns", "id_from", "references", "fix_encoding", "min_id_overlap")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True, slots=True, kw_only=True)
class CorpusSpec:
    name: str
    spec: str | None = None  # audio corpus spec
    predictions: str | None = None  # prediction-file folder
    limit: int | None = None
    dataset: str | None = None  # pick one dataset of a bucketed prediction folder
    panel: tuple[str, ...] | None = None  # this corpus's panel (default: the spec's [panel])
    probes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # per-corpus parameter overrides
    # how its prediction files are read (corpus.reading.ReadOptions' fields as written: columns =
    # {id = ..., ref = ..., hyp = ...}, id_from, references, fix_encoding, min_id_overlap)
    reading: Mapping[str, Any] = field(default_factory=dict)

    def read_options(self, path: str, index: int) -> Any:
        """The corpus's :class:`~asr_audit.corpus.reading.ReadOptions` (errors name the spec field)."""

        return ReadOptions.from_mapping(self.reading, Surface.toml(path, f"corpus[{index}]"), "a prediction corpus")


@dataclass(frozen=True, slots=True)
class ModelSpec:
    name: str
    spec: str
    options: Mapping[str, Any] = field(default_factory=dict)
    batch_size: int = 8  # clips per store commit and per forward pass
    # cpu | cuda | cuda:N | auto (None: $ASR_AUDIT_DEVICE, else auto). Not in to_dict: the
    # backend identity in results.json records the resolved device kind where it changes outputs.
    device: str | None = None
    num_gpus: float = 0.0  # per Ray actor (executor = "ray")
    num_cpus: float = 1.0  # per Ray actor
    replicas: int = 1  # Ray actors serving this model


@dataclass(frozen=True, slots=True, kw_only=True)
class ExperimentSpec:
    path: str
    title: str
    seed: int
    output: str
    normalizer: str
    store: str | None
    corpora: tuple[CorpusSpec, ...]
    models: tuple[ModelSpec, ...]
    panel: tuple[str, ...]
    probes: Mapping[str, Mapping[str, Any]]
    executor: str = "local"  # "local" or "ray"; where the work runs, not what it computes
    ray_address: str | None = None  # the Ray cluster to join (None: start one on this machine)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "seed": self.seed,
            "output": self.output,
            "normalizer": self.normalizer,
            "store": self.store,
            "corpora": [
                {
                    k: (dict(v) if isinstance(v, Mapping) else list(v) if isinstance(v, tuple) else v)
                    for k in c.__dataclass_fields__
                    for v in [getattr(c, k)]
                    if k != "reading" or v  # recorded only when set
                }
                for c in self.corpora
            ],
            "models": [
                {"name": m.name, "spec": m.spec, "options": dict(m.options), "batch_size": m.batch_size}
                for m in self.models
            ],
            "panel": list(self.panel),
            "probes": {k: dict(v) for k, v in self.probes.items()},
        }


class _Fields:
    """Typed access to one TOML table, with errors naming the file and the dotted field."""

    def __init__(self, path: str, where: str, table: Any) -> None:
        self.path, self.where = path, where
        if not isinstance(table, dict):
            self.fail(where, f"must be a table, got {type(table).__name__}", "write it as a TOML table")
        self.table: dict[str, Any] = table
        self.used: set[str] = set()

    def fail(self, name: str, problem: str, fix: str) -> None:
        raise ConfigError(f"{self.path}: field '{name}' {problem}; fix: {fix}")

    def get(self, key: str, typ: type | tuple[type, ...], default: Any = ..., fix: str = "") -> Any:
        self.used.add(key)
        name = f"{self.where}.{key}" if self.where else key
        if key not in self.table:
            if default is ...:
                self.fail(name, "is missing", fix or f"add {key} = ...")
            return default
        value = self.table[key]
        if isinstance(value, bool) and (typ in (int, float) or typ == (int, float)):
            want = typ.__name__ if isinstance(typ, type) else "number"
            self.fail(name, f"is {value!r}, expected a {want}", fix or f"write {key} as a number")
        if not isinstance(value, typ):
            want = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
            self.fail(
                name, f"is {value!r} ({type(value).__name__}), expected {want}", fix or f"write {key} as a {want}"
            )
        return value

    def done(self, allowed_extra: tuple[str, ...] = ()) -> None:
        unknown = sorted(set(self.table) - self.used - set(allowed_extra))
        if unknown:
            name = f"{self.where}.{unknown[0]}" if self.where else unknown[0]
            self.fail(name, "is not a known field", f"remove it (known: {', '.join(sorted(self.used))})")


def parse_spec(data: Mapping[str, Any], path: str = "<spec>") -> ExperimentSpec:
    """Validate a parsed TOML document into an :class:`ExperimentSpec`."""

    top = _Fields(path, "", dict(data))
    title = top.get("title", str, "")
    seed = top.get("seed", int, 0)
    output = top.get("output", str, "asr-audit-out")
    normalizer = top.get("normalizer", str, "whisper")
    store = top.get("store", str, None)
    executor = top.get("executor", str, "local")
    if executor not in EXECUTORS:
        top.fail("executor", f"is {executor!r}", f"use one of {', '.join(EXECUTORS)}")
    ray_address = top.get("ray_address", str, None)
    if ray_address is not None and executor != "ray":
        top.fail("ray_address", f"is set but executor is {executor!r}", 'add executor = "ray" or remove ray_address')
    corpora = []
    raw_corpora = top.get("corpus", list, fix="add at least one [[corpus]] table with name and spec (or predictions)")
    for i, raw in enumerate(raw_corpora):
        f = _Fields(path, f"corpus[{i}]", raw)
        c = CorpusSpec(
            name=f.get("name", str),
            spec=f.get("spec", str, None),
            predictions=f.get("predictions", str, None),
            limit=f.get("limit", int, None),
            dataset=f.get("dataset", str, None),
            panel=tuple(f.get("panel", list)) if "panel" in f.table else None,
            probes={k: dict(v) for k, v in f.get("probes", dict, {}).items()},
            reading={k: f.get(k, object) for k in READING_FIELDS if k in f.table},
        )
        f.done()
        if c.reading:
            if c.predictions is None:
                f.fail(
                    f"corpus[{i}].{next(iter(c.reading))}", "reads prediction files", "set predictions = or remove it"
                )
            c.read_options(path, i)  # a bad value fails when the spec loads
        if (c.spec is None) == (c.predictions is None):
            f.fail(
                f"corpus[{i}]",
                "needs exactly one of 'spec' (audio) or 'predictions' (prediction files)",
                'set spec = "<manifest or folder>" or predictions = "<folder>"',
            )
        if c.limit is not None and c.limit < 1:
            f.fail(f"corpus[{i}].limit", f"is {c.limit}", "use a positive number or remove it")
        corpora.append(c)
    if not corpora:
        top.fail("corpus", "is empty", "add at least one [[corpus]] table")
    names = [c.name for c in corpora]
    if len(set(names)) != len(names):
        top.fail("corpus", f"names repeat ({', '.join(names)})", "give every corpus its own name")
    models = []
    for i, raw in enumerate(top.get("model", list, [])):
        f = _Fields(path, f"model[{i}]", raw)
        m = ModelSpec(
            f.get("name", str),
            f.get("spec", str),
            dict(f.get("options", dict, {})),
            f.get("batch_size", int, 8),
            num_gpus=float(f.get("num_gpus", (int, float), 0.0)),
            num_cpus=float(f.get("num_cpus", (int, float), 1.0)),
            replicas=f.get("replicas", int, 1),
            device=f.get("device", str, None),
        )
        f.done()
        if m.batch_size < 1:
            f.fail(f"model[{i}].batch_size", f"is {m.batch_size}", "use a positive number")
        for what, value in (("num_gpus", m.num_gpus), ("num_cpus", m.num_cpus)):
            if not value >= 0 or value == float("inf"):
                f.fail(f"model[{i}].{what}", f"is {value}", "use a finite number >= 0 (a fraction shares a device)")
        if m.replicas < 1:
            f.fail(f"model[{i}].replicas", f"is {m.replicas}", "use a positive number of Ray actors")

        try:
            RuntimeOptions(device=m.device)
        except ConfigError:
            f.fail(f"model[{i}].device", f"is {m.device!r}", 'use "cpu", "cuda", "cuda:N" or "auto"')

        try:  # every [[model]], also one no corpus transcribes, fails here rather than never or late
            parse_model_spec(m.spec)
        except ConfigError as exc:
            f.fail(f"model[{i}].spec", f"is invalid ({exc})", "use a spec `asr-audit models` lists")
        try:
            DecodeOptions.from_dict(dict(m.options))
        except (ConfigError, TypeError) as exc:
            f.fail(f"model[{i}].options", f"is invalid ({exc})", "use the DecodeOptions fields")
        models.append(m)
    mnames = [m.name for m in models]
    if len(set(mnames)) != len(mnames):
        top.fail("model", f"names repeat ({', '.join(mnames)})", "give every model its own name")
    audio = [c.name for c in corpora if c.spec is not None]
    if audio and not models:
        top.fail("model", f"is empty but corpus {audio[0]!r} is audio", "add [[model]] tables (name, spec)")
    panel_t = _Fields(path, "panel", top.get("panel", dict, {}))
    panel = tuple(panel_t.get("models", list, []))
    panel_t.done()
    probes_t = _Fields(path, "probes", top.get("probes", dict, {"refdis": {}}))
    probes: dict[str, dict[str, Any]] = {}
    valid = available_probes()
    for name, params in probes_t.table.items():
        if name not in valid:
            probes_t.fail(f"probes.{name}", "is not a known probe", f"use one of {', '.join(valid)}")
        if not isinstance(params, dict):
            probes_t.fail(f"probes.{name}", "must be a table", f"write [probes.{name}]")
        probes[name] = dict(params)
    top.done()
    spec = ExperimentSpec(
        path=path,
        title=title,
        seed=seed,
        output=output,
        normalizer=normalizer,
        store=store,
        corpora=tuple(corpora),
        models=tuple(models),
        panel=panel,
        probes=probes,
        executor=executor,
        ray_address=ray_address,
    )

    for name, params in probes.items():
        validate_probe_params(spec.path, name, params)
    for i, c in enumerate(corpora):
        for name, params in c.probes.items():
            if name not in probes:
                top.fail(
                    f"corpus[{i}].probes.{name}",
                    "overrides a probe the spec does not run",
                    f"add [probes.{name}] or remove the override",
                )
            if not isinstance(params, dict):
                top.fail(f"corpus[{i}].probes.{name}", "must be a table", "write it as a TOML table")
            validate_probe_params(spec.path, name, params)
    # every corpus's values (the probe's table with the corpus's overrides) build the probe's options
    for i, c in enumerate(corpora):
        for name, params in probes.items():
            override = c.probes.get(name, {})
            surface = Surface.toml(path, f"probes.{name}", dict.fromkeys(override, f"corpus[{i}].probes.{name}"))
            validate_probe_options(
                name, {**params, **override}, surface, panel=c.panel if c.panel is not None else panel, corpus=c.name
            )
    return spec


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate a TOML experiment spec; relative paths resolve against its folder."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such spec file; fix: pass the path of a TOML experiment spec")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: not valid TOML ({exc}); fix: check the syntax at that line") from None
    except RecursionError:
        raise ConfigError(f"{p}: TOML nested too deeply to read; fix: write a flat experiment spec") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read ({exc.strerror or exc}); fix: check the file's permissions") from None
    spec = parse_spec(data, str(p))
    base = p.resolve().parent

    def rel(x: str | None) -> str | None:
        if x is None or x.startswith("hf-dataset:") or Path(x).is_absolute():
            return x
        return str(base / x)

    from dataclasses import replace

    return replace(
        spec,
        output=rel(spec.output) or spec.output,
        store=rel(spec.store),
        corpora=tuple(replace(c, spec=rel(c.spec), predictions=rel(c.predictions)) for c in spec.corpora),
    )
