"""Runner registrations of the audio probes ``masked``, ``lift`` and ``continuation`` (``asr-audit run``).

In an experiment spec::

    [probes.masked]
    kind = "number"        # number | name | word
    method = "silence"     # silence | noise | cut
    gate_max_wer = 0.3

    [probes.lift]
    spans = "masked"       # masked | ortho | full  (refdis needs a refdis result: use the CLI)
    gate_max_wer = 0.3     # intelligibility gate: sentences with a higher unmasked WER are not scored
    decoys = 4             # masked spans: decoy numbers per item, for the masked-decoys contrast (0: none)

    [probes.continuation]  # asr-audit continue: the last words hidden, end-of-text banned
    hide_words = 3
    extra_tokens = 16

They run on audio corpora only, with every model of the spec (or ``models = [...]``); ``lift``
skips models without the ``score`` capability, ``continuation`` models that cannot decode with
end-of-text banned, and both list them under ``skipped``. Results carry
the spec's model names; lift's ``items_per_s`` (wall-clock speed, which the CLI's JSON shows) is
left out, so ``results.json`` is the same for every run of a spec, on any executor. Under an
executor that runs models elsewhere (the Ray executor: ``ProbeContext.transcribe`` and
``ProbeContext.remote``), the masked probe transcribes there, lift scores there and continuation
decodes there; the driver plans (alignment, masks, cuts) and sends clips and recipes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.align import get_aligner
from asr_audit.audio.spans import Truncate
from asr_audit.errors import BackendError, ConfigError
from asr_audit.models.base import SCORE
from asr_audit.options import Surface
from asr_audit.probes.audio.continuation import (
    CONTINUATION_FIELDS,
    SAMPLE_RATE,
    ContinuationOptions,
    forced_decoder,
    run_continuation,
)
from asr_audit.probes.audio.lift import LIFT_FIELDS, LiftOptions, clustered_mean, run_lift
from asr_audit.probes.audio.masked import MASKED_FIELDS, MaskedOptions, MaskPlan, run_masked
from asr_audit.probes.audio.targets import sentence_key
from asr_audit.probes.battery.recipe import derived_recipe, masked_recipes
from asr_audit.runner.probes import ProbeContext, register_probe

MASKED_PARAMS = MASKED_FIELDS
LIFT_PARAMS = LIFT_FIELDS


def _backends(ctx: ProbeContext, models: tuple[str, ...] | None, probe: str) -> list[tuple[str, Any]]:
    names = _names(ctx, models, probe)
    assert ctx.backend is not None  # (_names refuses a corpus without one)
    return [(n, ctx.backend(n)) for n in names]


def _names(ctx: ProbeContext, models: tuple[str, ...] | None, probe: str) -> list[str]:
    """The probe's model names (``models``, default every model of the spec), checked."""
    if ctx.clips is None or ctx.backend is None:
        raise ConfigError(
            f"corpus {ctx.corpus!r} has no audio; fix: run probes.{probe} on an audio corpus "
            "(a [[corpus]] entry with spec = ...)"
        )
    names = list(models or ctx.models)
    unknown = sorted(set(names) - set(ctx.models))
    if unknown:
        raise ConfigError(
            f"probes.{probe}.models names {', '.join(unknown)}, not models of this spec; "
            f"fix: use {', '.join(ctx.models)}"
        )
    return names


def _relabel(rows: list[dict[str, Any]], names: Mapping[str, str]) -> None:
    for row in rows:
        if row.get("model") in names:
            row["model"] = names[row["model"]]


def _aligner(name: str) -> Any:
    return get_aligner(name)


def _masked_options(values: Mapping[str, Any], surface: Surface) -> MaskedOptions:
    return MaskedOptions.from_mapping(values, surface)


def _lift_options(values: Mapping[str, Any], surface: Surface) -> LiftOptions:
    options = LiftOptions.from_mapping(values, surface)
    if options.spans == "refdis":
        raise surface.error(
            "spans",
            "refdis",
            "needs a refdis result file, which a spec cannot name",
            "use `asr-audit lift --spans refdis --refdis PATH`, or spans = masked | ortho | full",
        )
    return options


@register_probe(
    "masked", MASKED_PARAMS, "masked-entity recovery (numbers silenced in the audio)", options=_masked_options
)
def masked_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any] | None:
    if ctx.clips is None:
        return None  # a prediction-file corpus: no audio to mask
    options = _masked_options(params, ctx.surface("masked"))
    if ctx.transcribe is not None:  # on the executor's workers: the masked clips travel as recipes
        from asr_audit.probes.battery.recipe import remote_hearing

        models = _names(ctx, options.models, "masked")
        result = run_masked(
            [],
            ctx.clips,
            ctx.store,
            options.mask_params(ctx.seed),
            aligner=_aligner(options.aligner),
            hear=remote_hearing(ctx.transcribe, models, ctx.need_store("masked")),
        ).to_dict()  # labelled with the model names already
    else:
        pairs = _backends(ctx, options.models, "masked")
        result = run_masked(
            [b for _, b in pairs],
            ctx.clips,
            ctx.store,
            options.mask_params(ctx.seed),
            aligner=_aligner(options.aligner),
        ).to_dict()
        names = {b.spec: n for n, b in pairs}
        _relabel(result["models"], names)
        _relabel(result["items"], names)
    if not options.items:
        result["items"] = []
    return result


def lift_by_voice(items: list[dict[str, Any]], clips: Any, seed: int, n_resamples: int) -> list[dict[str, Any]]:
    """Mean lift per (model, condition, voice) — the clip's speaker — with sentence-clustered intervals
    (clusters: :func:`~asr_audit.probes.audio.targets.sentence_key` of the clip's reference).

    On a corpus rendered in several voices (a calibration set, a battery's voice conditions) this
    is the paper's "lift per voice" view: does the audio of one voice raise the reference's
    rendering more than another's?
    """
    import numpy as np

    speaker = {c.id: c.speaker or "unknown" for c in clips}
    sentence = {c.id: sentence_key(c.reference) for c in clips}
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for it in items:
        if it.get("error") is None and it.get("lift") is not None:
            key = (it["model"], it["condition"], speaker.get(it["clip_id"], "unknown"))
            groups.setdefault(key, []).append(it)
    rows = []
    rng = np.random.default_rng(seed)
    for (model, cond, voice), its in sorted(groups.items()):
        est = clustered_mean(
            [i["lift"] for i in its], [sentence.get(i["clip_id"], i["clip_id"]) for i in its], rng, n_resamples
        )
        rows.append({"model": model, "condition": cond, "voice": voice, **est.to_dict()})
    return rows


def _span_sources(clips: Any, masks: Any) -> dict[str, Any]:
    """What the lift spans' audio ids name, as it travels to the workers: each clip of the corpus, and
    each masked clip as the recipe of its original and its mask (the masked probe's recipes)."""

    out = {c.id: c for c in clips}
    out.update((c.id, c) for c in masked_recipes(list(clips), MaskPlan(tuple(masks), {}, (), ())))
    return out


@register_probe("lift", LIFT_PARAMS, "teacher-forced audio lift (nats per character)", options=_lift_options)
def lift_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    options = _lift_options(params, ctx.surface("lift"))
    if ctx.remote is not None:  # on the executor's workers: the rows name their clips, recipes and silences
        remote = ctx.remote
        pairs = [(n, remote(n, ctx.store)) for n in _names(ctx, options.models, "lift")]
        span_options: dict[str, Any] = {"sources": lambda masks: _span_sources(ctx.clips, masks)}
    else:
        pairs, span_options = _backends(ctx, options.models, "lift"), {}
    scoring = [(n, b) for n, b in pairs if SCORE in b.capabilities]
    if options.spans == "masked":
        span_options |= {"mask_params": options.mask_params(ctx.seed), "aligner": _aligner(options.aligner)}
    result = run_lift(
        [b for _, b in scoring],
        ctx.clips,
        ctx.store,
        options.spans,
        seed=ctx.seed,
        n_resamples=options.resamples,
        gate_max_wer=options.gate_max_wer,
        decoys=options.decoys,
        **span_options,
    ).to_dict()
    names = {b.spec: n for n, b in scoring}
    _relabel(result["models"], names)
    _relabel(result["items"], names)
    _relabel(result["gate"], names)
    for row in result["models"]:  # wall-clock, not a result: results.json is the same for every run of a spec
        row.pop("items_per_s", None)
    result["by_voice"] = lift_by_voice(result["items"], ctx.clips, ctx.seed, options.resamples)
    result["skipped"] = [{"model": n, "reason": "no score capability"} for n, b in pairs if SCORE not in b.capabilities]
    if not options.items:
        result["items"] = []
    return result


def _continuation_options(values: Mapping[str, Any], surface: Surface) -> ContinuationOptions:
    return ContinuationOptions.from_mapping(values, surface)


def _cut_sources(clips: Any, plans: Any) -> dict[str, Any]:
    """The continuation probe's truncated clips as they travel to the workers: each the recipe of its
    original and the cut (:class:`~asr_audit.audio.spans.Truncate` to the plan's samples)."""

    by_id = {c.id: c for c in clips}
    return {
        p.clip_id: derived_recipe(by_id[p.clip_id], [Truncate(0.0, len(p.samples) / SAMPLE_RATE)], None) for p in plans
    }


@register_probe(
    "continuation",
    CONTINUATION_FIELDS,
    "forced continuation: hidden tail words a model writes with end-of-text banned",
    options=_continuation_options,
)
def continuation_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    """``asr-audit continue`` on the corpus with every model of the spec (or ``models``); models that
    cannot decode with end-of-text banned are listed under ``skipped`` with the reason."""

    options = _continuation_options(params, ctx.surface("continuation"))
    sources = None
    if ctx.remote is not None:  # on the executor's workers: each truncated clip travels as a recipe
        remote, clips = ctx.remote, ctx.clips
        pairs = [(n, remote(n, ctx.store)) for n in _names(ctx, options.models, "continuation")]
        sources = lambda plans: _cut_sources(clips, plans)  # noqa: E731
    else:
        pairs = _backends(ctx, options.models, "continuation")
    able, skipped = [], []
    for n, b in pairs:
        try:
            forced_decoder(b)
        except BackendError as exc:
            skipped.append({"model": n, "reason": " ".join(str(exc).split())})
            continue
        able.append((n, b))
    result = run_continuation(
        [b for _, b in able],
        ctx.clips,
        ctx.store,
        options.hide_words,
        extra_tokens=options.extra_tokens,
        aligner=_aligner(options.aligner),
        seed=ctx.seed,
        n_resamples=options.resamples,
        sources=sources,
    )
    names = {b.spec: n for n, b in able}
    _relabel(result["models"], names)
    _relabel(result["items"], names)
    result["skipped"] = skipped
    if not options.items:
        result["items"] = []
    return result
