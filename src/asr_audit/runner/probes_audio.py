"""Runner registrations of the audio probes ``masked`` and ``lift`` (``asr-audit run``).

In an experiment spec::

    [probes.masked]
    kind = "number"        # number | name | word
    method = "silence"     # silence | noise | cut
    gate_max_wer = 0.3

    [probes.lift]
    spans = "masked"       # masked | ortho | full  (refdis needs a refdis result: use the CLI)

Both run on audio corpora only, with every model of the spec (or ``models = [...]``); ``lift``
skips models without the ``score`` capability and lists them under ``skipped``. Results carry
the spec's model names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.errors import ConfigError
from asr_audit.runner.probes import ProbeContext, register_probe

MASKED_PARAMS = ("kind", "method", "pad", "gate_max_wer", "min_duration", "max_per_clip", "aligner", "models", "items")
LIFT_PARAMS = ("spans", "method", "aligner", "models", "resamples", "items")


def _backends(ctx: ProbeContext, params: Mapping[str, Any], probe: str) -> list[tuple[str, Any]]:
    if ctx.clips is None or ctx.backend is None:
        raise ConfigError(f"corpus {ctx.corpus!r} has no audio; fix: run probes.{probe} on an audio corpus "
                          "(a [[corpora]] entry with spec = ...)")
    names = list(params.get("models") or ctx.models)
    unknown = sorted(set(names) - set(ctx.models))
    if unknown:
        raise ConfigError(f"probes.{probe}.models names {', '.join(unknown)}, not models of this spec; "
                          f"fix: use {', '.join(ctx.models)}")
    return [(n, ctx.backend(n)) for n in names]


def _relabel(rows: list[dict[str, Any]], names: Mapping[str, str]) -> None:
    for row in rows:
        if row.get("model") in names:
            row["model"] = names[row["model"]]


def _aligner(params: Mapping[str, Any]) -> Any:
    from asr_audit.align import get_aligner

    return get_aligner(str(params.get("aligner", "sphinx")))


@register_probe("masked", MASKED_PARAMS, "masked-entity recovery (numbers silenced in the audio)")
def masked_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any] | None:
    from asr_audit.probes.audio.masked import MaskParams, run_masked
    from asr_audit.probes.audio.targets import TargetRule

    if ctx.clips is None:
        return None  # a prediction-file corpus: no audio to mask
    pairs = _backends(ctx, params, "masked")
    rule = TargetRule(str(params.get("kind", "number")), float(params.get("min_duration", 0.15)),
                      max_per_clip=params.get("max_per_clip"))
    mp = MaskParams(rule, str(params.get("method", "silence")), float(params.get("pad", 0.05)),
                    float(params.get("gate_max_wer", 0.3)), ctx.seed)
    result = run_masked([b for _, b in pairs], ctx.clips, ctx.store, mp, aligner=_aligner(params)).to_dict()
    names = {b.spec: n for n, b in pairs}
    _relabel(result["models"], names)
    _relabel(result["items"], names)
    if not params.get("items", True):
        result["items"] = []
    return result


def lift_by_voice(items: list[dict[str, Any]], clips: Any, seed: int, n_resamples: int) -> list[dict[str, Any]]:
    """Mean lift per (model, condition, voice) — the clip's speaker — with sentence-clustered intervals.

    On a corpus rendered in several voices (a calibration set, a battery's voice conditions) this
    is the paper's "lift per voice" view: does the audio of one voice raise the reference's
    rendering more than another's?
    """
    import numpy as np

    from asr_audit.probes.audio.lift import clustered_mean

    speaker = {c.id: c.speaker or "unknown" for c in clips}
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for it in items:
        if it.get("error") is None and it.get("lift") is not None:
            key = (it["model"], it["condition"], speaker.get(it["clip_id"], "unknown"))
            groups.setdefault(key, []).append(it)
    rows = []
    rng = np.random.default_rng(seed)
    for (model, cond, voice), its in sorted(groups.items()):
        est = clustered_mean([i["lift"] for i in its], [i["clip_id"] for i in its], rng, n_resamples)
        rows.append({"model": model, "condition": cond, "voice": voice, **est.to_dict()})
    return rows


@register_probe("lift", LIFT_PARAMS, "teacher-forced audio lift (nats per character)")
def lift_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    from asr_audit.models.base import SCORE
    from asr_audit.probes.audio.lift import run_lift
    from asr_audit.probes.audio.masked import MaskParams

    spans = str(params.get("spans", "masked"))
    if spans == "refdis":
        raise ConfigError("probes.lift.spans = 'refdis' needs a refdis result file; fix: use "
                          "`asr-audit lift --spans refdis --refdis PATH`, or spans = masked | ortho | full")
    pairs = _backends(ctx, params, "lift")
    scoring = [(n, b) for n, b in pairs if SCORE in b.capabilities]
    options: dict[str, Any] = {}
    if spans == "masked":
        options = {"mask_params": MaskParams(method=str(params.get("method", "silence")), seed=ctx.seed),
                   "aligner": _aligner(params)}
    result = run_lift([b for _, b in scoring], ctx.clips, ctx.store, spans, seed=ctx.seed,
                      n_resamples=int(params.get("resamples", 1000)), **options).to_dict()
    names = {b.spec: n for n, b in scoring}
    _relabel(result["models"], names)
    _relabel(result["items"], names)
    result["by_voice"] = lift_by_voice(result["items"], ctx.clips, ctx.seed, int(params.get("resamples", 1000)))
    result["skipped"] = [{"model": n, "reason": "no score capability"} for n, b in pairs if SCORE not in b.capabilities]
    if not params.get("items", True):
        result["items"] = []
    return result
