"""Runner registration: the regression gate, for a run whose spec names a candidate and a baseline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.gate import GATE_KEYS, REFDIS_KEYS, GateRunOptions
from asr_audit.runner.probes import ProbeContext, register_probe


@register_probe(
    "gate",
    (*GATE_KEYS, *REFDIS_KEYS),
    "regression gate: candidate vs baseline on accept-ref, WER inflation and WER (one-sided, paired)",
    options=GateRunOptions.from_mapping,
)
def gate_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    """``[probes.gate] candidate = "...", baseline = "..."``: both must be models of the corpus."""
    from asr_audit.probes.predfiles.gate import run_gate

    surface = ctx.surface("gate")
    options = GateRunOptions.from_mapping(params, surface)
    for key in ("candidate", "baseline"):
        name = getattr(options, key)
        if name not in ctx.predictions.models:
            raise ConfigError(
                f"{ctx.spec_path}: {surface.name(key)} = {name!r} is not a model of corpus {ctx.corpus!r} "
                f"(models: {', '.join(ctx.predictions.models)}); fix: name one of them"
            )
    options.check_panel(len(ctx.panel), surface, ctx.corpus)
    return run_gate(
        ctx.predictions,
        options.candidate,
        options.baseline,
        options.refdis.mining,
        panel=ctx.panel,
        options=options.gate,
        normalizer=options.refdis.normalizer_for(ctx.normalizer),
        text2num=options.refdis.text2num,
        seed=ctx.seed,
        merge_compounds=options.refdis.merge_compounds,
        language=options.refdis.language,
    ).to_dict()
