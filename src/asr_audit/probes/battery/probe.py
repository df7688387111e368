"""The trigger battery (``battery``) and the courtesy case study (``courtesy``) as probe objects.

One object per probe, called the same way by ``asr-audit battery``, by a spec's table and by the
Python API (:mod:`asr_audit.probes.core.probe`). In an experiment spec::

    [probes.battery]
    measure = "refdis"                      # refdis | courtesy | ortho | masked
    conditions = ["noise:10db", "reverb:0.6", "truncate:1w0.25s", "donor:conv8s", "donor:bench8s", "voice:flite-slt"]
    donor_conv = ["talk.wav"]               # optional conversational donor recordings
    spoken = "spoken.jsonl"                 # optional {"id": ..., "spoken": ...} lines: what the audio says
    panel = ["m1", "m2", "m3"]              # optional; default: the spec's [panel] (needed without spoken)

    [probes.courtesy]                       # the same battery with measure = "courtesy" and the case study
    conditions = ["truncate:1w0.25s", "donor:conv8s"]

A relative ``spoken`` or ``donor_conv`` path is read from the spec's folder (the working directory
for the verb and the API).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from asr_audit.audio.assets import AudioAsset
from asr_audit.corpus.jsonl import iter_jsonl
from asr_audit.errors import InputFileError
from asr_audit.models.base import model_specs
from asr_audit.options import REQUIRED, CliFlag, Surface, flag_table, split_names
from asr_audit.probes.battery.battery import BATTERY_FIELDS, BatteryOptions, BatteryResult, run_battery
from asr_audit.probes.core.flags import MODEL, RESAMPLES
from asr_audit.probes.core.probe import Probe, ProbeInputs, register_probe

#: ``asr-audit battery``'s flag of every option (the measure is ``--probe``, the tested models ``--model``)
FLAGS = flag_table(
    CliFlag("measure", str, "refdis", "Measure: refdis | courtesy | ortho | masked.", ("--probe",)),
    CliFlag(
        "conditions",
        str,
        REQUIRED,
        "Comma-separated: noise:10db,reverb:0.6,truncate:1w0.25s,donor:conv8s,donor:bench8s,voice:flite-slt",
        parse=split_names,
    ),
    replace(MODEL, field="models", parse=model_specs),
    CliFlag("donor_conv", str, None, "Conversational donor audio file(s), comma-separated.", parse=split_names),
    CliFlag("spoken", Path, None, "JSONL {id, spoken}: what the audio says, when it differs from the reference."),
    CliFlag(
        "panel",
        str,
        None,
        "Panel model spec(s), comma-separated: their outputs on the original audio say what it says when --spoken "
        "does not (refdis, courtesy); a tested member is left out of its own items.",
        parse=model_specs,
    ),
    replace(RESAMPLES, minimum=1),
    CliFlag(
        "study",
        bool,
        True,
        "The courtesy measure's case study (attn-isolated, translate arms).",
        ("--study/--no-study",),
    ),
)
#: ``asr-audit battery --help``'s worked example: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit battery -m whisper-tiny.en -c calib/calib-test.jsonl --spoken calib/calib-test.jsonl "
        "--conditions voice:flite-rms,noise:10db",
        "accept-ref in another voice and in noise, paired against the original audio",
    ),
)


def load_spoken(path: str | Path) -> dict[str, str]:
    """``{"id": ..., "spoken": ...}`` JSONL lines (``audio_filepath`` may stand in for ``id``)."""

    out = {}
    for line, obj in iter_jsonl(Path(path), "spoken-text file"):
        cid = obj.get("id") or obj.get("audio_filepath")
        text = obj.get("spoken")
        if not isinstance(cid, str) or not isinstance(text, str):
            raise InputFileError(
                str(path), "a line lacks a string 'id' and 'spoken'", 'write {"id": ..., "spoken": ...}', line
            )
        out[cid] = text
    return out


@dataclass(frozen=True, slots=True)
class BatteryProbe(Probe[BatteryOptions, BatteryResult]):
    """The battery with the measure its options name, or with ``measure`` fixed (``courtesy``).

    ``run`` takes the tested models from the options (``models``), else the corpus's
    (``inputs.models``), and the panel from the options, else ``inputs.panel``; every model comes
    from ``inputs.pool``, wherever it runs.
    """

    name: str
    params: tuple[str, ...]
    description: str
    measure: str | None = None
    flags: Mapping[str, CliFlag] = field(default_factory=dict)
    examples: tuple[tuple[str, str], ...] = ()

    def options_from(self, values: Mapping[str, Any], surface: Surface) -> BatteryOptions:
        return BatteryOptions.from_mapping(values, surface, measure=self.measure)

    def resolved(self, options: BatteryOptions, inputs: ProbeInputs) -> BatteryOptions:
        """``options`` with the tested models and the panel filled in from ``inputs`` where unset."""
        return replace(
            options,
            models=options.models or inputs.models,
            panel=options.panel if options.panel is not None else inputs.panel,
        )

    def check(self, options: BatteryOptions, inputs: ProbeInputs, surface: Surface) -> None:
        inputs.need_pool(self.name)

    def run(
        self, inputs: ProbeInputs, options: BatteryOptions, progress: Callable[[str], None] | None = None
    ) -> BatteryResult:
        """The battery on ``inputs`` (``progress`` is told each condition as it starts)."""
        pool = inputs.need_pool(self.name)
        assert inputs.clips is not None  # need_pool refuses a corpus without audio
        return run_battery(
            pool,
            inputs.clips,
            inputs.store,
            self.resolved(options, inputs),
            seed=inputs.seed,
            normalizer=inputs.normalizer,
            spoken=load_spoken(inputs.resolve(options.spoken)) if options.spoken else {},
            conv_donors=[AudioAsset.from_file(inputs.resolve(f)) for f in options.donor_conv],
            progress=progress,
        )


BATTERY = register_probe(
    BatteryProbe(
        "battery",
        BATTERY_FIELDS,
        "trigger battery: accept-ref under audio conditions, paired differences, DiD",
        flags=FLAGS,
        examples=EXAMPLES,
    )
)
COURTESY = register_probe(
    BatteryProbe(
        "courtesy",
        tuple(p for p in BATTERY_FIELDS if p != "measure"),
        "opening-courtesy case study: presence under full / truncated / attn-isolated / translate",
        measure="courtesy",
    )
)
