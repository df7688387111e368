"""Runner registration: the consensus miner scored against a calibration set's planted truth."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from asr_audit.calib.score import score_miner
from asr_audit.calib.truth import load_truth
from asr_audit.options import Reader, Surface
from asr_audit.probes.predfiles.refdis_options import RefdisOptions
from asr_audit.runner.probes import REFDIS_PARAMS, ProbeContext, register_probe, run_refdis_with

# the refdis probe's fields; ``truth`` is this probe's own (the folder it scores the miner against)
# planted truth is the calibration's own verification: no labels file here
_PARAMS = ("truth", "split", *(p for p in REFDIS_PARAMS if p not in ("truth", "labels")))


@dataclass(frozen=True, slots=True, kw_only=True)
class MinerCalibrationOptions:
    """``[probes.miner_calibration]``: the calibration folder (``truth``), its split, and the refdis
    options the miner runs with (200 bootstrap resamples unless ``resamples`` is set)."""

    truth: str | None = None
    split: str | None = None
    refdis: RefdisOptions

    def check_panel(self, n_panel: int, surface: Surface, corpus: str | None = None) -> None:
        """The refdis options' leave-one-out quorum check (only where a calibration folder is named)."""
        if self.truth is not None:
            self.refdis.check_panel(n_panel, surface, corpus)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface) -> MinerCalibrationOptions:
        r = Reader(values, surface, _PARAMS, "miner_calibration")
        refdis = RefdisOptions.from_mapping(
            {"resamples": 200, **values}, surface, "miner_calibration", extra=("truth", "split")
        )
        return cls(truth=r.text("truth", None), split=r.text("split", None), refdis=refdis)


@register_probe(
    "miner_calibration",
    _PARAMS,
    "precision and recall of the reference-error miner against planted ground truth",
    options=MinerCalibrationOptions.from_mapping,
)
def miner_calibration_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any] | None:
    """Runs only on corpora that name a calibration folder (``truth = "<calib build dir>"``)."""
    surface = ctx.surface("miner_calibration")
    options = MinerCalibrationOptions.from_mapping(params, surface)
    if options.truth is None:
        return None

    truth = load_truth(options.truth, options.split)
    # mine every edit, so the precision-recall curve spans them all; the operating point
    # (min_confidence) selects the edits the rates are reported on
    point = options.refdis.mining.min_confidence
    every = replace(options.refdis, mining=replace(options.refdis.mining, min_confidence=None))
    result = run_refdis_with(ctx, every, surface)
    return score_miner(truth, result, clip_ids=ctx.predictions.clip_ids, min_confidence=point).to_dict()
