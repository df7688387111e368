"""The Python front door, for notebooks and scripts: the library functions the CLI verbs call.

Every function here is what the verb of the same name does, without the printing: it builds the
probe's options record from keyword arguments (a bad value is a one-line
:class:`~asr_audit.options.OptionError` naming the keyword), reads the prediction files and calls
the probe's library function. Results are the library's frozen records; each has ``to_dict()``
(the JSON the CLI writes), and :func:`to_rows` / :func:`to_dataframe` give one row per model.
``import asr_audit`` re-exports these names lazily (``asr_audit.refdis`` is :func:`refdis`; its
``__all__`` lists them).

>>> from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL
>>> preds = load_predictions(VOXPOPULI_EXAMPLES)
>>> preds.models
['distil-small.en', 'wav2vec2-base-960h', 'whisper-base.en', 'whisper-small.en', 'whisper-tiny.en']
>>> result = refdis(preds, VOXPOPULI_PANEL)
>>> len(result.edits), result.score("distil-small.en").accept_ref.n
(31, 26)
>>> [(r["model"], r["n_ref"], r["n_eligible"]) for r in to_rows(result)][:2]
[('distil-small.en', 0, 26), ('wav2vec2-base-960h', 1, 29)]
>>> refdis(preds, VOXPOPULI_PANEL, majority=2.0)
Traceback (most recent call last):
...
asr_audit.options.OptionError: refdis(majority=2.0) must be in (0, 1]...
>>> rates = switch_rate(preds, families=["honorific"])
>>> sorted({r["family"] for r in to_rows(rates)})
['dr', 'honorific', 'mr', 'mrs', 'st']
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from asr_audit.calib.probe import MINER_CALIBRATION
from asr_audit.calib.score import CalibScore, truth_verify
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.corpus.predfiles import load_predictions as _load_predictions
from asr_audit.corpus.reading import ReadOptions
from asr_audit.corpus.spec import load_corpus
from asr_audit.errors import ConfigError, require
from asr_audit.mechrun.probe import MECH, MechRun
from asr_audit.models.base import load_backend
from asr_audit.options import Surface
from asr_audit.probes.audio.lift import LiftResult
from asr_audit.probes.audio.masked import MaskedResult
from asr_audit.probes.audio.probes import audio_inputs, evaluate_on
from asr_audit.probes.audio.refdis_probe import REFDIS
from asr_audit.probes.battery.battery import BatteryOptions, BatteryResult
from asr_audit.probes.battery.probe import BATTERY
from asr_audit.probes.core.models import LocalPool
from asr_audit.probes.core.probe import ModelPool, ProbeInputs, get_probe
from asr_audit.probes.predfiles.ortho import DEFAULT_MIN_PER_ARM, SWITCH_RATE, OrthoResult
from asr_audit.probes.predfiles.refdis_result import RefdisResult
from asr_audit.probes.predfiles.refdis_run import isolated_panel_members, run_normalizer
from asr_audit.runner.run import LocalExecutor, RunOutcome, local_pool, run_spec_file
from asr_audit.runner.spec import ModelSpec
from asr_audit.store.sqlite import open_store

Predictions = PredictionSet | str | Path


def load_predictions(
    path: str | Path,
    dataset: str | None = None,
    *,
    read: ReadOptions | None = None,
    normalizer: str = "whisper",
    preset: str | None = None,
) -> PredictionSet:
    """Every prediction file under ``path`` (a folder or one file), as ``asr-audit refdis --preds`` reads it.

    ``dataset`` picks one dataset of a bucketed folder; ``read`` says how files exported by other
    tools are read (columns, ids from paths, reference policies; ``docs/prediction-files.md``).
    Under ``ReadOptions(references="normalized")`` references are compared by ``normalizer``
    (with ``preset``'s steps). What the reading repaired is the set's ``repairs``.
    """
    read = read or ReadOptions()
    normalize = run_normalizer(normalizer, preset) if read.references == "normalized" else None
    return _load_predictions(path, dataset, read=read, normalize=normalize)


def _as_set(preds: Predictions) -> PredictionSet:
    return preds if isinstance(preds, PredictionSet) else load_predictions(preds)


def refdis(
    preds: Predictions,
    panel: Sequence[str],
    *,
    models: Sequence[str] | None = None,
    preset: str = "anchor",
    loo: bool = True,
    normalizer: str = "whisper",
    language: str = "en",
    seed: int = 0,
    resamples: int = 1000,
    workers: int = 1,
    **params: Any,
) -> RefdisResult:
    """Reference disagreement: mine reference errors with the consensus ``panel``, score how often
    each model (``models``, default every file) reproduces them; ``asr-audit refdis`` without its
    text cache (the numbers are the same with it).

    ``preds`` is a :class:`PredictionSet` or a path for :func:`load_predictions` (whose ``dataset``
    and ``read`` pick a bucket and say how exported files are read). ``params`` takes
    the verb's other settings by their spec names: ``majority``, ``include_middle``,
    ``min_run_len``, ``min_ref_match``, ``min_consensus_cer``, ``min_panel``, ``min_confidence``,
    ``merge_compounds`` (``docs/refdis.md``), and the verification of the mined edits, one at most:
    ``truth`` (a calibration folder, ``asr-audit refdis --truth``) or ``labels`` (a labels file of
    ``asr-audit annotate``, ``--labels``); each model's ``verified`` figures then carry the verdict.
    A panel model that shares no clip id with the others is reported as a :class:`UserWarning`, as
    the verb prints it.
    """
    if isinstance(panel, str):
        raise ConfigError(f"refdis(panel={panel!r}) is one string; fix: pass a list of model names")
    cli_only = sorted(set(params) & {"published", "verify_with", "audio_root", "verify_margin"})
    if cli_only:
        raise ConfigError(
            f"refdis({cli_only[0]}=...) is not in the Python API yet; fix: use asr-audit refdis or a spec"
        )
    options = REFDIS.options_from(
        {
            "preset": preset,
            "loo": loo,
            "resamples": resamples,
            "language": language,
            "models": None if models is None else list(models),
            "normalize_workers": workers,
            **params,
        },
        Surface.python("refdis"),
    )
    inputs = ProbeInputs(
        corpus="refdis", predictions=_as_set(preds), panel=tuple(panel), seed=seed, normalizer=normalizer,
        verify_truth=truth_verify,
    )  # fmt: skip
    REFDIS.verification(inputs, options)  # read before the work: a bad folder or file fails now
    pset = inputs.predictions
    for m in isolated_panel_members(pset, [p for p in panel if p in pset.models]):
        warnings.warn(f"panel model {m} shares no answered clip id with the other panel models", stacklevel=2)
    REFDIS.check(options, inputs, Surface.python("refdis"))
    return REFDIS.run(inputs, options).result


def switch_rate(
    preds: Predictions,
    *,
    families: Sequence[str] | None = None,
    min_per_arm: int = DEFAULT_MIN_PER_ARM,
    models: Sequence[str] | None = None,
    denominator: str = "eligible",
    language: str = "en",
) -> OrthoResult:
    """Orthographic switch rate per model and convention family (``asr-audit switch-rate``)."""
    options = SWITCH_RATE.options_from(
        {
            "families": None if families is None else list(families),
            "min_per_arm": min_per_arm,
            "denominator": denominator,
            "language": language,
            "models": None if models is None else list(models),
        },
        Surface.python("switch_rate"),
    )
    result = SWITCH_RATE.run(ProbeInputs(corpus="switch_rate", predictions=_as_set(preds)), options)
    assert result is not None  # the probe applies to every prediction set
    return result


def calib_score(
    corpus: str | Path,
    preds: Predictions,
    panel: Sequence[str],
    *,
    seed: int = 0,
    **params: Any,
) -> CalibScore:
    """The consensus miner's precision and recall on a calibration set (``asr-audit calib score``, the
    ``miner_calibration`` probe of a spec): ``corpus`` is the folder ``asr-audit calib build`` wrote,
    ``preds`` its clips' predictions (a :class:`PredictionSet` or a path), ``panel`` the miners.
    ``params`` takes the probe's other options by their spec names: ``split``, ``preset``,
    ``min_confidence`` (the operating point), the mining parameters of :func:`refdis`. The set is
    mined in its own language with its own normalizer.

    >>> calib_score("calib", "preds", ["a", "b", "c"], preset="best")
    Traceback (most recent call last):
    ...
    asr_audit.options.OptionError: calib_score(preset='best') is unknown (valid: ...
    """
    values = {"truth": str(corpus), **params}
    return calib_score_from(preds, panel, values, Surface.python("calib_score"), seed=seed)


def calib_score_from(
    preds: Predictions, panel: Sequence[str], values: Mapping[str, Any], surface: Surface, *, seed: int = 0
) -> CalibScore:
    """The ``miner_calibration`` probe on prediction files, its options read from ``values`` as
    written on ``surface``: the one path of :func:`calib_score` and ``asr-audit calib score``
    (leave-one-out off and one bootstrap resample unless ``values`` say otherwise: neither changes
    the score, which reads the full panel's edits only)."""
    if isinstance(panel, str):
        raise ConfigError(f"calib_score(panel={panel!r}) is one string; fix: pass a list of model names")
    options = MINER_CALIBRATION.options_from({"loo": False, "resamples": 1, **values}, surface)
    pset = _as_set(preds)
    inputs = ProbeInputs(corpus=str(pset.source), predictions=pset, panel=tuple(panel), seed=seed)
    MINER_CALIBRATION.check(options, inputs, surface)
    score = MINER_CALIBRATION.run(inputs, options)
    if score is None:  # only without a calibration folder, and one is always named here
        raise ConfigError("calib_score needs the calibration folder; fix: pass it as corpus")
    return score


def mech_steer(
    corpus: str | Path | Corpus,
    model: str,
    direction: str | Sequence[str],
    *,
    seed: int = 0,
    store: str | Path | None = None,
    **params: Any,
) -> MechRun:
    """Steering under saved direction(s) with random and shuffled controls (``asr-audit mech steer``,
    the ``mech`` probe of a spec): ``model`` (a spec string of a PyTorch model with hook sites) decodes
    ``corpus`` (a manifest path or a :class:`Corpus`) clean and under each arm, through ``store``
    (default: the default store). ``params`` takes the probe's other options by their spec names:
    ``directions``, ``site``, ``mode``, ``alpha``, ``clamp_at``, ``trigger_at``, ``positions``,
    ``gate``, ``gate_at``, ``k``, ``n_random``, ``truth``, ``speakers``, ``limit``, ``wer_field``
    (``docs/mechanism.md``). Every option is checked before the corpus is read or the model loads:

    >>> mech_steer("set/calib-test.jsonl", "whisper-tiny.en-pt", "voice", positions="2:1")
    Traceback (most recent call last):
    ...
    asr_audit.options.OptionError: mech_steer(positions='2:1') is not P0:P1 with 0 <= P0 < P1; fix: ...

    The result's ``steer`` is the :class:`~asr_audit.mechrun.steer.SteerResult` (arms, flips,
    hypotheses); ``to_dict()`` is the probe's entry in ``results.json``.
    """
    values = {"model": model, "direction": direction, **params}
    return mech_steer_from(corpus, values, Surface.python("mech_steer"), seed=seed, store=store)


def mech_steer_from(
    corpus: str | Path | Corpus,
    values: Mapping[str, Any],
    surface: Surface,
    *,
    seed: int = 0,
    store: str | Path | None = None,
) -> MechRun:
    """The ``mech`` probe on one model, its options read from ``values`` as written on ``surface``:
    the one path of :func:`mech_steer` and ``asr-audit mech steer`` (the model is a one-model pool
    named by its spec string, as a spec's ``[[model]]`` would load it)."""
    options = MECH.options_from(values, surface)
    clips = corpus if isinstance(corpus, Corpus) else load_corpus(str(corpus))
    pool = LocalExecutor(False, models={options.model: ModelSpec(options.model, options.model)})
    st = open_store(store)
    try:
        inputs = ProbeInputs(
            corpus=clips.name,
            predictions=PredictionSet((), {}),
            clips=clips,
            pool=pool,
            models=(options.model,),
            store=st,
            seed=seed,
        )
        MECH.check(options, inputs, surface)
        run = MECH.run(inputs, options)
    finally:
        st.close()
    if run is None:  # only a corpus without clips has nothing to steer, and one with clips was given
        raise ConfigError(f"corpus {clips.name!r} has no audio to steer; fix: give a manifest of audio clips")
    return run


def battery(
    corpus: Corpus | str,
    models: Sequence[str],
    conditions: Sequence[str],
    *,
    store: str | Path | None = None,
    limit: int | None = None,
    seed: int = 0,
    normalizer: str = "whisper",
    **options: Any,
) -> BatteryResult:
    """The trigger battery (``asr-audit battery``): accept-ref of each model spec in ``models`` on
    ``corpus`` (a :class:`~asr_audit.corpus.clips.Corpus`, or a corpus spec as ``--corpus`` takes
    it, cut to its first ``limit`` clips) under each audio condition, paired against the original
    audio; transcripts are cached in the result store at ``store`` (the default store when ``None``).

    ``options`` takes the verb's other settings by their spec names: ``measure`` (refdis |
    courtesy | ortho | masked), ``panel`` (model specs), ``spoken`` (a JSONL file), ``donor_conv``,
    ``resamples``, ``study``, ``preset``, ``min_ref_match``, ``families`` (``docs/battery.md``).
    """
    values = {"models": list(models), "conditions": list(conditions), **options}
    probe_options = BATTERY.options_from(values, Surface.python("battery"))
    clips = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    return battery_run(clips.limit(limit), probe_options, Surface.python("battery"), store, seed, normalizer)


def battery_run(
    clips: Corpus,
    options: BatteryOptions,
    surface: Surface,
    store: str | Path | None = None,
    seed: int = 0,
    normalizer: str = "whisper",
    progress: Callable[[str], None] | None = None,
) -> BatteryResult:
    """The battery with parsed ``options`` (read on ``surface``) on ``clips``, its models and panel
    loaded here, through the store at ``store``: the one path of :func:`battery` and ``asr-audit
    battery`` (``progress`` is told each condition as it starts)."""
    pool = local_pool([*(options.models or ()), *(options.panel or ())])
    handle = open_store(store)
    try:
        inputs = audio_inputs(clips, pool, handle, seed=seed, normalizer=normalizer)
        BATTERY.check(options, inputs, surface)
        return BATTERY.run(inputs, options, progress=progress)
    finally:
        handle.close()


def run_spec(
    spec_path: str | Path,
    *,
    out: str | Path | None = None,
    store: str | Path | None = None,
    executor: str | None = None,
    force: bool = False,
    log: Callable[[str], None] = print,
) -> RunOutcome:
    """An experiment spec end to end, as ``asr-audit run SPEC.toml`` runs it (no progress display).

    The outcome's ``results`` are the run's result dictionaries; ``report`` the HTML report's path;
    ``config_errors`` the probes that failed on a configuration error (the verb exits 2 on them).
    """
    return run_spec_file(
        Path(spec_path),
        out=None if out is None else Path(out),
        store=None if store is None else str(store),
        executor=executor,
        show_progress=False,
        force=force,
        log=log,
    )


def masked(
    corpus: str | Path | Corpus,
    models: Sequence[str] | ModelPool,
    *,
    store: str | Path | None = None,
    seed: int = 0,
    limit: int | None = None,
    **options: Any,
) -> MaskedResult:
    """Masked-entity recovery (``asr-audit masked``): ``options`` are the verb's settings by their spec
    names (``kind``, ``method``, ``pad``, ``gate_max_wer``, ``min_duration``, ``max_per_clip``,
    ``aligner``, ``recipes_in``, ``items``)."""
    result: MaskedResult = _audio("masked", corpus, models, store, seed, limit, options)
    return result


def lift(
    corpus: str | Path | Corpus,
    models: Sequence[str] | ModelPool,
    *,
    store: str | Path | None = None,
    seed: int = 0,
    limit: int | None = None,
    **options: Any,
) -> LiftResult:
    """Teacher-forced audio lift (``asr-audit lift``): ``options`` are ``spans``, ``refdis``, ``method``,
    ``aligner``, ``recipes_in``, ``gate_max_wer``, ``decoys``, ``resamples``, ``items``."""
    result: LiftResult = _audio("lift", corpus, models, store, seed, limit, options)
    return result


def continuation(
    corpus: str | Path | Corpus,
    models: Sequence[str] | ModelPool,
    *,
    store: str | Path | None = None,
    seed: int = 0,
    limit: int | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Forced continuation (``asr-audit continue``): ``options`` are ``hide_words``, ``extra_tokens``,
    ``aligner``, ``resamples``, ``items``."""
    result: dict[str, Any] = _audio("continuation", corpus, models, store, seed, limit, options)
    return result


def _audio(
    name: str,
    corpus: str | Path | Corpus,
    models: Sequence[str] | ModelPool,
    store: str | Path | None,
    seed: int,
    limit: int | None,
    values: Mapping[str, Any],
) -> Any:
    """An audio probe on ``corpus`` (a manifest, or a loaded corpus) with ``models`` (specs, each loaded
    here, or a pool), through the store at ``store`` (the default store when ``None``)."""
    if isinstance(models, str):
        raise ConfigError(f"{name}(models={models!r}) is one string; fix: pass a list of model specs")
    surface = Surface.python(name)
    options = get_probe(name).options_from(values, surface)
    clips = corpus if isinstance(corpus, Corpus) else load_corpus(str(corpus)).limit(limit)
    return audio_probe_run(name, clips, models, options, surface, store, seed)


def audio_probe_run(
    name: str,
    clips: Corpus,
    models: Sequence[str] | ModelPool,
    options: Any,
    surface: Surface,
    store: str | Path | None = None,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> Any:
    """The audio probe ``name`` with parsed ``options`` (read on ``surface``) on ``clips`` with
    ``models`` (specs, each loaded here, or a pool), through the store at ``store`` (the default
    store when ``None``): the one path of :func:`masked`, :func:`lift`, :func:`continuation` and
    their verbs (``log``: the probe's progress lines)."""
    pool = models if isinstance(models, ModelPool) else LocalPool.of([load_backend(s) for s in models])
    handle = open_store(None if store is None else str(store))
    try:
        return evaluate_on(name, options, clips, pool, handle, surface, seed=seed, log=log)
    finally:
        handle.close()


def to_rows(result: RefdisResult | OrthoResult | RunOutcome | Mapping[str, Any]) -> list[dict[str, Any]]:
    """One flat row per model (refdis), per model and family (switch rate; pooled groups too) or per
    probe, corpus and model (a run), with the scalar fields of the result's ``to_dict()``.

    >>> to_rows({"probe": "refdis", "models": [{"model": "m", "accept_ref": 0.5, "by_kind": {}}]})
    [{'model': 'm', 'accept_ref': 0.5}]
    """
    if isinstance(result, RunOutcome):
        return [
            {"probe": entry.get("probe"), "corpus": entry.get("corpus"), **row}
            for entry in result.results.get("probes", [])
            for row in to_rows(entry.get("result") or {})
        ]
    data: Mapping[str, Any] = result if isinstance(result, Mapping) else result.to_dict()
    rows = [*data.get("rows", []), *data.get("pooled", [])] if "rows" in data else data.get("models", [])
    return [
        {k: v for k, v in row.items() if not isinstance(v, (Mapping, list, tuple))}
        for row in rows
        if isinstance(row, Mapping)
    ]


def to_dataframe(result: RefdisResult | OrthoResult | RunOutcome | Mapping[str, Any]) -> Any:
    """:func:`to_rows` as a pandas ``DataFrame`` (needs pandas: ``pip install 'asr-audit[dataframe]'``)."""
    pandas = require("pandas", "dataframe")
    return pandas.DataFrame(to_rows(result))
