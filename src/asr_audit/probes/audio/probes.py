"""The audio probes ``masked``, ``lift`` and ``continuation`` as registered probe objects.

Each is one :class:`~asr_audit.probes.core.probe.Probe`, called the same way by its CLI verb
(``asr-audit masked | lift | continue``), by a spec's ``[probes.<name>]`` table and by the Python
API (:mod:`asr_audit.api`). In an experiment spec::

    [probes.masked]
    kind = "number"        # number | name | word
    method = "silence"     # silence | noise | cut
    gate_max_wer = 0.3

    [probes.lift]
    spans = "masked"       # masked | refdis (with refdis = PATH) | ortho | full
    gate_max_wer = 0.3     # intelligibility gate: sentences with a higher unmasked WER are not scored
    decoys = 4             # masked spans: decoy numbers per item, for the masked-decoys contrast (0: none)

    [probes.continuation]  # asr-audit continue: the last words hidden, end-of-text banned
    hide_words = 3
    extra_tokens = 16

They run the models of the inputs' pool (``models``: the spec's, or the verb's ``--model`` list)
on the corpus's audio, wherever the pool runs them (:mod:`asr_audit.probes.core.models`). Models
named in ``models`` must be able to do the probe's work (a clear error otherwise); of the models
taken by default, ``lift`` skips those without the ``score`` capability and ``continuation``
those that cannot decode with end-of-text banned, and both list them under ``skipped``. Results
carry the pool's model names. Wall-clock speeds are not results: every run of the same inputs
gives the same numbers, on any executor.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from asr_audit.align import get_aligner
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.errors import InputFileError
from asr_audit.models.base import SCORE
from asr_audit.options import Surface
from asr_audit.probes.audio import continuation, lift, masked
from asr_audit.probes.audio.continuation import (
    CONTINUATION_FIELDS,
    ContinuationOptions,
    run_continuation,
)
from asr_audit.probes.audio.lift import LIFT_FIELDS, LiftOptions, LiftResult, lift_by_voice, run_lift
from asr_audit.probes.audio.masked import MASKED_FIELDS, MaskedOptions, MaskedResult, read_recipes, run_masked
from asr_audit.probes.core.models import Model
from asr_audit.probes.core.probe import ModelPool, ProbeInputs, get_probe, probe
from asr_audit.store.base import Store


def audio_inputs(
    clips: Corpus,
    pool: ModelPool,
    store: Store | None,
    *,
    seed: int = 0,
    normalizer: str = "whisper",
    log: Callable[[str], None] | None = None,
) -> ProbeInputs:
    """The inputs of an audio probe on ``clips`` with every model of ``pool`` (a CLI verb's, the API's):
    the references as the prediction set (no model's predictions yet)."""
    refs = {c.id: c.reference.strip() for c in sorted(clips.clips, key=lambda c: c.id)}
    preds = PredictionSet((), refs, clips.name, clips.source, {})
    return ProbeInputs(
        corpus=clips.name,
        predictions=preds,
        seed=seed,
        normalizer=normalizer,
        clips=clips,
        pool=pool,
        models=pool.names,
        store=store,
        log=log,
    )


def evaluate_on(
    name: str, options: Any, clips: Corpus, pool: ModelPool, store: Store | None, surface: Surface, **inputs: Any
) -> Any:
    """The audio probe ``name`` with parsed ``options`` on ``clips`` with every model of ``pool`` (a
    verb's ``--model`` list, the API's ``models``: each named to the probe, so one that cannot do its
    work is refused), checked and run: its typed result. ``inputs``: :func:`audio_inputs`' ``seed``
    and ``log``."""
    p = get_probe(name)
    options = replace(options, models=pool.names)
    ready = audio_inputs(clips, pool, store, **inputs)
    p.check(options, ready, surface)
    return p.run(ready, options)


def _check_models(options: Any, inputs: ProbeInputs, surface: Surface) -> None:
    """Refuse ``options.models`` naming a model the run does not have (each probe's check)."""
    names = options.models
    unknown = sorted(set(names or ()) - set(inputs.models))
    if unknown:
        raise surface.error(
            "models",
            list(names or ()),
            f"names {', '.join(unknown)}, not models of this spec",
            f"use {', '.join(inputs.models) or 'the models of the run'}",
        )


def _models(inputs: ProbeInputs, names: tuple[str, ...] | None, probe_name: str) -> list[Model]:
    """The probe's model handles: ``names``, by default every model of the inputs."""
    pool = inputs.need_pool(probe_name)
    return [pool.model(n, inputs.store) for n in (names or inputs.models)]


def _can(models: list[Model], named: bool, why_not: Callable[[Model], str | None]) -> tuple[list[Model], list[dict]]:
    """The models that can do the work and the others (``skipped`` rows); a model the user named that
    cannot is kept, so the probe refuses it with its own error."""
    able, skipped = [], []
    for m in models:
        reason = None if named else why_not(m)
        if reason is None:
            able.append(m)
        else:
            skipped.append({"model": m.name, "reason": " ".join(reason.split())})
    return able, skipped


def _recipes(inputs: ProbeInputs, path: str | None) -> Any:
    return None if path is None else read_recipes(inputs.resolve(path))


# --------------------------------------------------------------------------- masked


def _masked_run(inputs: ProbeInputs, options: MaskedOptions) -> MaskedResult | None:
    if inputs.clips is None:
        return None  # a prediction-file corpus: no audio to mask
    recipes = _recipes(inputs, options.recipes_in)
    pool = inputs.need_pool("masked")
    result = run_masked(
        pool,
        inputs.clips,
        inputs.store,
        options.mask_params(inputs.seed),
        names=options.models or inputs.models,
        aligner=None if recipes is not None else get_aligner(options.aligner),
        recipes=recipes,
        progress=inputs.log,
    )
    return result if options.items else replace(result, items=())


MASKED = probe(
    "masked",
    MASKED_FIELDS,
    "masked-entity recovery (numbers silenced in the audio)",
    MaskedOptions.from_mapping,
    _masked_run,
    _check_models,
    flags=masked.FLAGS,
    examples=masked.EXAMPLES,
)


# --------------------------------------------------------------------------- lift


def _refdis_result(inputs: ProbeInputs, path: str) -> Any:
    where = inputs.resolve(path)
    try:
        return json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputFileError(
            where, f"cannot read refdis JSON ({exc})", "pass the file `asr-audit refdis --json` wrote"
        ) from None


def _lift_run(inputs: ProbeInputs, options: LiftOptions) -> LiftResult:
    models = _models(inputs, options.models, "lift")
    able, skipped = _can(
        models, options.models is not None, lambda m: None if SCORE in m.capabilities else "no score capability"
    )
    spans: dict[str, Any] = {}
    if options.spans == "refdis":
        spans["refdis"] = _refdis_result(inputs, str(options.refdis))
    if options.spans == "masked":
        recipes = _recipes(inputs, options.recipes_in)
        spans |= {
            "mask_params": options.mask_params(inputs.seed),
            "recipes": recipes,
            "aligner": None if recipes is not None else get_aligner(options.aligner),
        }
    assert inputs.clips is not None  # (need_pool refuses a corpus without audio)
    result = run_lift(
        able,
        inputs.clips,
        inputs.store,
        options.spans,
        seed=inputs.seed,
        n_resamples=options.resamples,
        gate_max_wer=options.gate_max_wer,
        decoys=options.decoys,
        **spans,
    )
    by_voice = lift_by_voice([r.to_dict() for r in result.records], inputs.clips, inputs.seed, options.resamples)
    return replace(
        result,
        records=result.records if options.items else (),
        by_voice=tuple(by_voice),
        skipped=tuple(skipped),
    )


LIFT = probe(
    "lift",
    LIFT_FIELDS,
    "teacher-forced audio lift (nats per character)",
    LiftOptions.from_mapping,
    _lift_run,
    _check_models,
    flags=lift.FLAGS,
    examples=lift.EXAMPLES,
)


# --------------------------------------------------------------------------- continuation


def _continuation_run(inputs: ProbeInputs, options: ContinuationOptions) -> dict[str, Any]:
    models = _models(inputs, options.models, "continuation")
    able, skipped = _can(models, options.models is not None, lambda m: m.forced_refusal)
    assert inputs.clips is not None  # (need_pool refuses a corpus without audio)
    result = run_continuation(
        able,
        inputs.clips,
        inputs.store,
        options.hide_words,
        extra_tokens=options.extra_tokens,
        aligner=get_aligner(options.aligner),
        seed=inputs.seed,
        n_resamples=options.resamples,
    )
    result["skipped"] = skipped
    if not options.items:
        result["items"] = []
    return result


CONTINUATION = probe(
    "continuation",
    CONTINUATION_FIELDS,
    "forced continuation: hidden tail words a model writes with end-of-text banned",
    ContinuationOptions.from_mapping,
    _continuation_run,
    _check_models,
    flags=continuation.FLAGS,
    examples=continuation.EXAMPLES,
)
