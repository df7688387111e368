"""Probes the experiment runner can run, behind one small registry.

Adding a probe to ``asr-audit run`` is one registration::

    @register_probe("my_probe", params=("alpha", "beta"))
    def my_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
        ...  # return a JSON-able result; the report renders it (report.sections)

Every probe also takes ``skip = true`` (typically as a per-corpus override) to leave a corpus out.
Each probe receives a :class:`ProbeContext` per corpus: the corpus's prediction set (from the
store's transcripts or from prediction files), the panel, the seed and the normalizer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asr_audit.errors import ConfigError

if TYPE_CHECKING:
    from asr_audit.corpus.predfiles import PredictionSet


@dataclass(frozen=True, slots=True)
class ProbeContext:
    """What a probe gets for one corpus.

    Prediction-file probes read ``predictions``. Audio probes also get the corpus's clips
    (``clips``: an ``asr_audit.corpus.clips.Corpus``, ``None`` for prediction-file corpora), the
    loaded backends by model name (``backends``, loaded lazily by ``backend(name)``), and the
    store, so every derived transcription is cached like the plain ones.
    """

    corpus: str
    predictions: PredictionSet
    panel: tuple[str, ...]
    seed: int
    normalizer: str
    clips: Any = None
    backend: Callable[[str], Any] | None = None
    models: tuple[str, ...] = ()
    store: Any = None


ProbeFn = Callable[[ProbeContext, Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ProbeKind:
    name: str
    run: ProbeFn
    params: tuple[str, ...]
    description: str


_PROBES: dict[str, ProbeKind] = {}
# modules whose import registers more probes (audio probes, battery, ...)
PROBE_MODULES: list[str] = ["asr_audit.runner.probes_calib", "asr_audit.runner.probes_audio",
                             "asr_audit.runner.probes_battery"]
_LOADED: list[bool] = [False]


def _load_modules() -> None:
    if not _LOADED[0]:
        _LOADED[0] = True
        import importlib

        for name in PROBE_MODULES:
            importlib.import_module(name)


def register_probe(name: str, params: Sequence[str], description: str = "") -> Callable[[ProbeFn], ProbeFn]:
    def deco(fn: ProbeFn) -> ProbeFn:
        _PROBES[name] = ProbeKind(name, fn, tuple(params), description or (fn.__doc__ or "").strip().split("\n")[0])
        return fn

    return deco


def available_probes() -> list[str]:
    _load_modules()
    return sorted(_PROBES)


def get_probe(name: str) -> ProbeKind:
    _load_modules()
    if name not in _PROBES:
        raise ConfigError(f"unknown probe {name!r}; valid: {', '.join(available_probes())}")
    return _PROBES[name]


def validate_probe_params(spec_path: str, name: str, params: Mapping[str, Any]) -> None:
    """Unknown parameters are errors naming the spec file (``spec_path``) and field."""
    kind = get_probe(name)
    unknown = sorted(set(params) - set(kind.params) - {"skip"})
    if unknown:
        raise ConfigError(f"{spec_path}: field 'probes.{name}.{unknown[0]}' is not a parameter of {name}; "
                          f"fix: use {', '.join(kind.params) or 'no parameters'}")


REFDIS_PARAMS = ("preset", "majority", "include_middle", "min_run_len", "min_ref_match", "min_consensus_cer",
                 "min_panel", "loo", "resamples", "published")


def run_refdis_from_params(ctx: ProbeContext, params: Mapping[str, Any], probe: str = "refdis") -> Any:
    """``run_refdis`` on the context with the refdis parameters found in ``params``."""
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    p = {k: v for k, v in params.items() if k in REFDIS_PARAMS}
    preset = p.pop("preset", "anchor")
    resamples = int(p.pop("resamples", 1000))
    p.pop("published", None)  # used by the report
    try:
        rp = preset_params(preset, **p)
    except TypeError as exc:
        raise ConfigError(f"probes.{probe}: {exc}; fix: check the parameter types") from None
    if len(ctx.panel) < rp.min_panel:
        raise ConfigError(f"corpus {ctx.corpus!r}: the panel has {len(ctx.panel)} model(s) "
                          f"({', '.join(ctx.panel) or 'none'}) but min_panel is {rp.min_panel}; "
                          f"fix: list more [panel] models or set probes.{probe}.min_panel lower")
    return run_refdis(ctx.predictions, ctx.panel, rp, ctx.normalizer, seed=ctx.seed, n_resamples=resamples)


@register_probe("refdis", REFDIS_PARAMS, "reference disagreement with a consensus panel, and WER inflation")
def refdis_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    return run_refdis_from_params(ctx, params).to_dict()


@register_probe("switch_rate", ("families", "min_per_arm"), "orthographic switch rate on convention families")
def switch_rate_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    from asr_audit.probes.predfiles.ortho import DEFAULT_MIN_PER_ARM, switch_rate

    return switch_rate(ctx.predictions, params.get("families"),
                       int(params.get("min_per_arm", DEFAULT_MIN_PER_ARM))).to_dict()
