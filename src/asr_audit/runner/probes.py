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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.probes.core import probe as core
from asr_audit.registry import Registry

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
    store: Any = None
    spec_path: str = "<spec>"

    def surface(self, probe: str) -> Surface:
        """How to name ``probe``'s fields in errors: the spec's ``[probes.<probe>]`` table."""
        return Surface.toml(self.spec_path, f"probes.{probe}")


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
    "asr_audit.runner.probes_calib",
    "asr_audit.probes.audio.probes",
    "asr_audit.probes.battery.probe",
    "asr_audit.runner.probes_gate",
    "asr_audit.runner.probes_mech",
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


def _refdis_options(values: Mapping[str, Any], surface: Surface) -> Any:
    from asr_audit.probes.predfiles.refdis_options import RefdisOptions

    return RefdisOptions.from_mapping(values, surface)


def _switch_rate_options(values: Mapping[str, Any], surface: Surface) -> Any:
    from asr_audit.probes.predfiles.ortho import SwitchRateOptions

    return SwitchRateOptions.from_mapping(values, surface)


REFDIS_PARAMS = (
    "preset",
    "majority",
    "include_middle",
    "min_run_len",
    "min_ref_match",
    "min_consensus_cer",
    "min_panel",
    "loo",
    "min_confidence",
    "resamples",
    "published",
    "merge_compounds",
    "language",
    "truth",
    "labels",
    "verify_with",
    "audio_root",
    "verify_margin",
)


def refdis_verify(options: Any, base: Path | None = None) -> Any:
    """The verification step a refdis run's options name (``truth``, ``labels``: see
    :func:`verification_step`; a relative ``labels`` path is read from ``base``, the spec's
    folder), or ``None``."""
    labels = getattr(options, "labels", None)
    if labels is not None and getattr(options, "truth", None) is not None:
        raise ConfigError("[probes.refdis] truth and labels each verify the edits; fix: set one of them")
    path = None if labels is None else Path(labels)
    if path is not None and not path.is_absolute() and base is not None:
        path = base / path
    return verification_step(getattr(options, "truth", None), path)


def verification_step(truth: str | Path | None, labels: str | Path | None) -> Any:
    """The verification step of a calibration folder's planted truth
    (:func:`asr_audit.calib.score.truth_verify`) or of a labels file of ``asr-audit annotate``
    (:func:`asr_audit.probes.predfiles.verified_labels.labels_verify`), or ``None``: the one place
    a source of verified edits is turned into a step for the probe (the probes layer cannot import
    ``calib``); the spec (:func:`refdis_verify`), the verbs and the API call it. ``labels`` wins
    when both are given: the callers refuse that first, in their own words."""
    if labels is not None:
        from asr_audit.probes.predfiles.verified_labels import labels_verify

        return labels_verify(labels)
    if truth is None:
        return None
    from asr_audit.calib.score import truth_verify

    return truth_verify(truth)


def run_refdis_with(ctx: ProbeContext, options: Any, surface: Surface, verify: Any = None) -> Any:
    """``run_refdis`` on the context with a :class:`~asr_audit.probes.predfiles.refdis_options.RefdisOptions`
    (``verify``: a verification step, :func:`refdis_verify`)."""
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    if len(ctx.panel) < options.mining.min_panel:
        raise ConfigError(
            f"corpus {ctx.corpus!r}: the panel has {len(ctx.panel)} model(s) "
            f"({', '.join(ctx.panel) or 'none'}) but min_panel is {options.mining.min_panel}; "
            f"fix: list more [panel] models or set {surface.name('min_panel')} lower"
        )
    options.check_panel(len(ctx.panel), surface, ctx.corpus)
    return run_refdis(
        ctx.predictions,
        ctx.panel,
        options.mining,
        seed=ctx.seed,
        verify=verify,
        **options.run_settings(ctx.normalizer),
    )


@register_probe(
    "refdis", REFDIS_PARAMS, "reference disagreement with a consensus panel, and WER inflation", options=_refdis_options
)
def refdis_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    surface = ctx.surface("refdis")
    options = _refdis_options(params, surface)
    base = Path(ctx.spec_path).resolve().parent if Path(ctx.spec_path).is_file() else None
    if options.verify_with:
        from asr_audit.probes.audio.verify_edits import with_audio_details

        # the audio verifiers need the run's edits and references: mine once, verify, then run with
        # the verification as the run's step (its verified WER inflation too)
        av = _audio_verification(ctx, options, run_refdis_with(ctx, options, surface), surface)
        return with_audio_details(run_refdis_with(ctx, options, surface, av.step()).to_dict(), av)
    result = run_refdis_with(ctx, options, surface, refdis_verify(options, base)).to_dict()
    if options.labels is None:
        return result
    from asr_audit.probes.predfiles.verified_labels import with_labels_summary

    labels = Path(options.labels)
    return with_labels_summary(result, labels if labels.is_absolute() or base is None else base / labels)


def _audio_verification(ctx: ProbeContext, options: Any, result: Any, surface: Surface) -> Any:
    """The edits of ``result`` verified on the audio (``probes/audio/verify_edits.py``): the
    corpus's own clips where it has audio, else ``audio_root``; the models under test are the
    scored models outside the panel."""
    from asr_audit.probes.audio.verify_edits import MARGIN, verify_run

    load = None
    if ctx.clips is not None and options.audio_root is None:
        from asr_audit.audio.io import load_audio

        by_id = {c.id: c for c in ctx.clips}

        def load(cid: str) -> Any:
            if cid not in by_id:
                raise ConfigError(f"corpus {ctx.corpus!r}: clip {cid!r} has no audio in the corpus")
            return load_audio(by_id[cid])

    if options.audio_root is None and load is None:
        raise ConfigError(
            f"corpus {ctx.corpus!r}: {surface.name('verify_with')} scores each edit on its audio, and the corpus has "
            f"none; fix: set {surface.name('audio_root')} to the folder of the clips' audio"
        )
    return verify_run(
        result,
        options.verify_with,
        options.audio_root,
        result.references,
        tested=[s.model for s in result.scores if s.model not in result.panel],
        margin=MARGIN if options.verify_margin is None else options.verify_margin,
        load=load,
    )


@register_probe(
    "switch_rate",
    ("families", "min_per_arm", "denominator", "language"),
    "orthographic switch rate on convention families",
    options=_switch_rate_options,
)
def switch_rate_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    from asr_audit.probes.predfiles.ortho import switch_rate

    options = _switch_rate_options(params, ctx.surface("switch_rate"))
    return switch_rate(
        ctx.predictions,
        options.families,
        options.min_per_arm,
        denominator=options.denominator,
        language=options.language,
    ).to_dict()


@register_probe("wer", ("language",), "plain corpus WER per model under the corpus language's normalizer")
def wer_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    """WER per model of a corpus (``language``: ISO 639-1 of the corpus; the spec's normalizer
    becomes that language's, as for refdis), with the panel the corpus has: where it holds fewer
    than two models, reference disagreement is undefined and the report says so."""
    from asr_audit.probes.predfiles.wer import wer_by_model
    from asr_audit.text.languages import scoring_normalizer

    language = params.get("language", "en")
    if not isinstance(language, str) or not language.strip():
        raise ConfigError(
            f'corpus {ctx.corpus!r}: probes.wer.language {language!r} must be a language code; fix: write e.g. "es"'
        )
    normalizer = scoring_normalizer(ctx.normalizer, language)
    return {
        "language": language,
        "normalizer": normalizer,
        "panel": list(ctx.panel),
        "models": wer_by_model(ctx.predictions, normalizer),
    }
