"""Runner registration: the consensus miner scored against a calibration set's planted truth."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.runner.probes import REFDIS_PARAMS, ProbeContext, register_probe, run_refdis_from_params


@register_probe("miner_calibration", ("truth", "split", *REFDIS_PARAMS),
                "precision and recall of the reference-error miner against planted ground truth")
def miner_calibration_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any] | None:
    """Runs only on corpora that name a calibration folder (``truth = "<calib build dir>"``)."""
    if "truth" not in params:
        return None
    from asr_audit.calib.score import score_miner
    from asr_audit.calib.truth import load_truth

    truth = load_truth(params["truth"], params.get("split"))
    result = run_refdis_from_params(ctx, {"resamples": 200, **params}, "miner_calibration")
    return score_miner(truth, result, clip_ids=ctx.predictions.clip_ids).to_dict()
