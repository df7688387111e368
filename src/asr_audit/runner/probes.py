"""Probes the experiment runner can run, behind one small registry.

Adding a probe to ``asr-audit run`` is one registration::

    @register_probe("my_probe", params=("alpha", "beta"), options=MyOptions.from_mapping)
    def my_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
        options = MyOptions.from_mapping(params, ctx.surface("my_probe"))
        ...  # return a JSON-able result; the report renders it (report.sections)

``options`` (the probe's options record's ``from_mapping``, see :mod:`asr_audit.options`) lets
the spec check every corpus's values when it is loaded, naming the TOML field of a bad one.

Every probe also takes ``skip = true`` (typically as a per-corpus override) to leave a corpus out.
Each probe receives a :class:`ProbeContext` per corpus: the corpus's prediction set (from the
store's transcripts or from prediction files), the panel, the seed and the normalizer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.probes.core import probe as core
from asr_audit.registry import Registry
from asr_audit.store.base import Store, require_store

if TYPE_CHECKING:
    from asr_audit.corpus.predfiles import PredictionSet


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeContext:
    """What a probe gets for one corpus.

    Prediction-file probes read ``predictions``. Audio probes also get the corpus's clips
    (``clips``: an ``asr_audit.corpus.clips.Corpus``, ``None`` for prediction-file corpora), the
    loaded backends by model name (``backends``, loaded lazily by ``backend(name)``), and the
    store, so every derived transcription is cached like the plain ones. (Probe objects get a
    :class:`~asr_audit.probes.core.probe.ProbeInputs` instead, whose pool runs the models wherever
    they run.)
    """

    corpus: str
    predictions: PredictionSet
    panel: tuple[str, ...]
    seed: int
    normalizer: str
    clips: Any = None
    backend: Callable[[str], Any] | None = None
    models: tuple[str, ...] = ()
    store: Store | None = None
    spec_path: str = "<spec>"

    def surface(self, probe: str) -> Surface:
        """How to name ``probe``'s fields in errors: the spec's ``[probes.<probe>]`` table."""
        return Surface.toml(self.spec_path, f"probes.{probe}")

    def need_store(self, probe: str) -> Store:
        """The store, or a one-line error saying the probe caches its models' outputs in one."""
        return require_store(self.store, f"corpus {self.corpus!r}: probe {probe}")


ProbeFn = Callable[[ProbeContext, Mapping[str, Any]], dict[str, Any] | None]  # None: not for this corpus
OptionsFn = Callable[[Mapping[str, Any], Surface], Any]


@dataclass(frozen=True, slots=True)
class ProbeKind:
    name: str
    run: ProbeFn
    params: tuple[str, ...]
    description: str
    options: OptionsFn | None = None  # builds (and so checks) the probe's options record


# modules whose import registers more probes (audio probes, battery, ...)
PROBE_MODULES: tuple[str, ...] = (
    "asr_audit.probes.predfiles.ortho",
    "asr_audit.probes.predfiles.wer",
    "asr_audit.probes.predfiles.gate",
    "asr_audit.probes.audio.refdis_probe",
    "asr_audit.probes.audio.probes",
    "asr_audit.probes.battery.probe",
    "asr_audit.calib.probe",
    "asr_audit.mechrun.probe",
)
PROBES: Registry[ProbeKind] = Registry(
    "probe", fix="name one of them in a [probes.<name>] table", modules=PROBE_MODULES
)


def register_probe(
    name: str, params: Sequence[str], description: str = "", options: OptionsFn | None = None
) -> Callable[[ProbeFn], ProbeFn]:
    """Decorator registering ``fn(ctx, params) -> dict`` as the probe ``name`` with its parameter names
    (and ``options``, the builder of its options record). ``fn`` returns ``None`` when the probe
    does not apply to the corpus."""

    def deco(fn: ProbeFn) -> ProbeFn:
        PROBES.register(
            name, ProbeKind(name, fn, tuple(params), description or (fn.__doc__ or "").strip().split("\n")[0], options)
        )
        return fn

    return deco


def load_probes() -> None:
    """Import every module that registers a probe (:data:`PROBE_MODULES`, both kinds)."""
    import importlib

    for module in PROBE_MODULES:
        importlib.import_module(module)


def available_probes() -> list[str]:
    """Every probe name: the :class:`~asr_audit.probes.core.probe.Probe` objects and the
    adapters still registered here (issue 28 moves them into the probes)."""
    load_probes()
    return sorted({*PROBES.names(), *core.PROBES.names()})


def is_core_probe(name: str) -> bool:
    """Whether ``name`` is a :class:`~asr_audit.probes.core.probe.Probe` object (not an adapter)."""
    load_probes()
    return name in core.PROBES.names()


def get_probe(name: str) -> ProbeKind:
    return PROBES.get(name)


def validate_probe_params(spec_path: str, name: str, params: Mapping[str, Any]) -> None:
    """Unknown parameters are errors naming the spec file (``spec_path``) and field."""
    if is_core_probe(name):
        core.validate_params(spec_path, name, params)
        return
    kind = get_probe(name)
    unknown = sorted(set(params) - set(kind.params) - {"skip"})
    if unknown:
        raise ConfigError(
            f"{spec_path}: field 'probes.{name}.{unknown[0]}' is not a parameter of {name}; "
            f"fix: use {', '.join(kind.params) or 'no parameters'}"
        )


def validate_probe_options(
    name: str,
    params: Mapping[str, Any],
    surface: Surface,
    panel: Sequence[str] | None = None,
    corpus: str | None = None,
) -> None:
    """Build ``name``'s options record from ``params`` (one corpus's values), so a bad value fails
    when the spec is loaded, named as the TOML field it came from.

    A record that depends on the panel has ``check_panel(n_panel, surface, corpus)``: it is
    called with ``panel`` (the corpus's panel), unless the corpus skips the probe, so a panel too
    small for the options (refdis's leave-one-out quorum) is refused before any inference."""
    values = {k: v for k, v in params.items() if k != "skip"}
    if is_core_probe(name):
        options = core.get_probe(name).options_from(values, surface)
    elif (kind := get_probe(name)).options is not None:
        options = kind.options(values, surface)
    else:
        return
    check_panel = getattr(options, "check_panel", None)
    if check_panel is not None and panel is not None and not params.get("skip"):
        check_panel(len(panel), surface, corpus)
