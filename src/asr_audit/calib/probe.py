"""The probe ``miner_calibration``: the consensus miner scored against a calibration set's planted truth.

One object for ``asr-audit calib score``, ``[probes.miner_calibration]`` and ``asr_audit.calib_score``.
It mines the corpus's predictions with the panel (every edit: the precision-recall curve spans them
all; ``min_confidence`` is the operating point the rates are reported at) and matches the edits to
the planted items (:func:`asr_audit.calib.score.score_miner`). The set is mined in its own
language with its own normalizer (``calib.json``, :func:`asr_audit.calib.languages.calib_normalizer`),
whatever the run's normalizer: its conventions normalize to what was said only under that one
(``docs/calibration.md``). Only the full panel's edits are scored, so leave-one-out, the bootstrap
size and the models outside the panel change nothing in the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from asr_audit.calib.languages import calib_normalizer
from asr_audit.calib.score import CalibScore, check_references, score_miner
from asr_audit.calib.truth import load_truth, set_language
from asr_audit.errors import ConfigError
from asr_audit.options import REQUIRED, CliFlag, Reader, Surface, flag_table
from asr_audit.probes.core.probe import FunctionProbe, ProbeInputs, probe
from asr_audit.probes.predfiles.refdis_options import FIELDS, VERIFY_FIELDS, RefdisOptions
from asr_audit.probes.predfiles.refdis_options import FLAGS as REFDIS_FLAGS
from asr_audit.probes.predfiles.refdis_run import run_refdis

# the refdis probe's fields; ``truth`` is this probe's own (the folder it scores the miner against);
# planted truth is the calibration's own verification (no labels file), and the set names its language
PARAMS = ("truth", "split", *(p for p in (*FIELDS, *VERIFY_FIELDS) if p not in ("truth", "labels", "language")))


#: ``asr-audit calib score``'s flag of every option (the calibration folder is ``--corpus``)
FLAGS = flag_table(
    CliFlag("truth", Path, REQUIRED, "Folder written by `asr-audit calib build`.", ("--corpus",)),
    REFDIS_FLAGS["preset"],
    REFDIS_FLAGS["min_confidence"],
)
#: ``asr-audit calib score --help``'s worked examples: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit calib score --corpus calib/ --preds preds/ --panel m1,m2,m3",
        "the miner's precision and recall against the planted truth, and its precision-recall curve",
    ),
    (
        "asr-audit calib score --corpus calib/ --preds preds/ --panel m1,m2,m3 --preset paper --min-confidence 0.4 "
        "--json score.json",
        "the calibrated operating point (docs/calibration.md)",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MinerCalibrationOptions:
    """The calibration folder (``truth``), its split, and the refdis options the miner runs with
    (200 bootstrap resamples unless ``resamples`` is set)."""

    truth: str | None = None
    split: str | None = None
    refdis: RefdisOptions

    def check_panel(self, n_panel: int, surface: Surface, corpus: str | None = None) -> None:
        """The refdis options' leave-one-out quorum check (only where a calibration folder is named)."""
        if self.truth is not None:
            self.refdis.check_panel(n_panel, surface, corpus)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface) -> MinerCalibrationOptions:
        r = Reader(values, surface, PARAMS, "miner_calibration")
        refdis = RefdisOptions.from_mapping(
            {"resamples": 200, **values}, surface, "miner_calibration", extra=("truth", "split")
        )
        return cls(truth=r.text("truth", None), split=r.text("split", None), refdis=refdis)


def _check(options: MinerCalibrationOptions, inputs: ProbeInputs, surface: Surface) -> None:
    """The panel against ``min_panel`` and leave-one-out's quorum (where a calibration folder is named)."""
    if options.truth is None:
        return
    mining = options.refdis.mining
    if len(inputs.panel) < mining.min_panel:
        raise ConfigError(
            f"corpus {inputs.corpus!r}: the panel has {len(inputs.panel)} model(s) "
            f"({', '.join(inputs.panel) or 'none'}) but min_panel is {mining.min_panel}; "
            f"fix: name more panel models or set {surface.name('min_panel')} lower"
        )
    options.check_panel(len(inputs.panel), surface, inputs.corpus)


def _run(inputs: ProbeInputs, options: MinerCalibrationOptions) -> CalibScore | None:
    """The miner's score; runs only where a calibration folder is named (``truth = "<calib build dir>"``)."""
    if options.truth is None:
        return None
    truth = load_truth(options.truth, options.split)
    bad = check_references(truth, inputs.predictions.references)
    if bad:
        raise ConfigError(
            f"corpus {inputs.corpus!r}: {len(bad)} clip(s) carry another reference than the calibration "
            f"manifest (first: {bad[0]!r}); fix: transcribe the manifest itself "
            f"(asr-audit transcribe -c {options.truth}/calib-test.jsonl)"
        )
    language = set_language(options.truth)  # the set's own: its normalizer reads its numbers and abbreviations
    refdis = options.refdis
    result = run_refdis(
        inputs.predictions,
        list(inputs.panel),
        replace(refdis.mining, min_confidence=None),  # every edit: the curve spans them all
        models=list(inputs.panel),  # only the full panel's edits are scored
        seed=inputs.seed,
        normalizer=calib_normalizer(language),
        n_resamples=refdis.resamples,
        text2num=language == "en",  # basic-es/fr/de read numbers themselves
        merge_compounds=refdis.merge_compounds,
        language=language,
    )
    clip_ids = inputs.predictions.clip_ids
    return score_miner(truth, result, clip_ids=clip_ids, min_confidence=refdis.mining.min_confidence)


#: the probe (see the module docstring)
MINER_CALIBRATION: FunctionProbe[MinerCalibrationOptions, CalibScore] = probe(
    "miner_calibration",
    PARAMS,
    "precision and recall of the reference-error miner against planted ground truth",
    MinerCalibrationOptions.from_mapping,
    _run,
    _check,
    flags=FLAGS,
    examples=EXAMPLES,
)

__all__ = ["MINER_CALIBRATION", "PARAMS", "MinerCalibrationOptions"]
