"""Runner registration of the trigger battery (``battery``) and the courtesy case study (``courtesy``).

In an experiment spec::

    [probes.battery]
    measure = "refdis"                      # refdis | courtesy | ortho
    conditions = ["noise:10db", "reverb:0.6", "truncate:1w0.25s", "donor:conv8s", "donor:bench8s", "voice:flite-slt"]
    donor_conv = ["talk.wav"]               # optional conversational donor recordings
    spoken = "spoken.jsonl"                 # optional {"id": ..., "spoken": ...} lines: what the audio says
    panel = ["m1", "m2", "m3"]              # optional; default: the spec's [panel] (needed without spoken)

    [probes.courtesy]                       # the same battery with measure = "courtesy" and the case study
    conditions = ["truncate:1w0.25s", "donor:conv8s"]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from asr_audit.audio.assets import AudioAsset
from asr_audit.corpus.jsonl import iter_jsonl
from asr_audit.errors import ConfigError, InputFileError
from asr_audit.options import Surface
from asr_audit.probes.battery.battery import BATTERY_FIELDS, BatteryOptions, run_battery
from asr_audit.runner.probes import ProbeContext, register_probe

BATTERY_PARAMS = BATTERY_FIELDS  # the spec reads the same fields as the options record


def load_spoken(path: str) -> dict[str, str]:
    """``{"id": ..., "spoken": ...}`` JSONL lines (``audio_filepath`` may stand in for ``id``)."""

    out = {}
    from pathlib import Path

    for line, obj in iter_jsonl(Path(path), "spoken-text file"):
        cid = obj.get("id") or obj.get("audio_filepath")
        text = obj.get("spoken")
        if not isinstance(cid, str) or not isinstance(text, str):
            raise InputFileError(
                path, "a line lacks a string 'id' and 'spoken'", 'write {"id": ..., "spoken": ...}', line
            )
        out[cid] = text
    return out


def _battery_options(values: Mapping[str, Any], surface: Surface) -> Any:
    return BatteryOptions.from_mapping(values, surface)


def _courtesy_options(values: Mapping[str, Any], surface: Surface) -> Any:
    return BatteryOptions.from_mapping(values, surface, measure="courtesy")


@dataclass(frozen=True, slots=True)
class _OnDemand:
    """A model's backend, loaded (by the executor, on the driver) on its first use. Where an executor
    runs the battery on its workers (transcription, and the courtesy study's attn-isolated arm), the
    driver needs a backend object only for a model whose workers reported no traits."""

    _load: Callable[[str], Any]
    _model: str

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(self._model), attr)

    @classmethod
    def loader(cls, load: Callable[[str], Any]) -> Callable[[str], Any]:
        return lambda model: cls(load, model)


def _isolate(ctx: ProbeContext) -> Any:
    """The courtesy study's attn-isolated arm on the executor's workers (its ``remote_model``), if it has them."""
    remote = ctx.remote
    if remote is None:
        return None
    return lambda model, rows: remote(model, ctx.store).isolated(rows)


def _run(ctx: ProbeContext, options: Any) -> dict[str, Any]:
    if ctx.clips is None or ctx.backend is None:
        raise ConfigError(f"corpus {ctx.corpus!r}: the battery needs audio (a corpus spec), not prediction files")
    load = ctx.backend if ctx.transcribe is None else _OnDemand.loader(ctx.backend)  # remotely: load only if used here
    backends = {m: load(m) for m in options.models or ctx.models}
    panel = {p: backends.get(p) or load(p) for p in (options.panel if options.panel is not None else ctx.panel)}
    spoken = load_spoken(options.spoken) if options.spoken else {}
    donors = [AudioAsset.from_file(f) for f in options.donor_conv]
    res = run_battery(
        ctx.clips,
        backends,
        options.measure,
        list(options.conditions),
        ctx.store,
        seed=ctx.seed,
        spoken=spoken,
        conv_donors=donors,
        normalizer=ctx.normalizer,
        n_resamples=options.resamples,
        panel=panel,
        mining=options.mining,
        families=options.families,
        study=options.study,
        remote=ctx.transcribe,
        isolate=_isolate(ctx),
    )
    return res.to_dict()


@register_probe(
    "battery",
    BATTERY_PARAMS,
    "trigger battery: accept-ref under audio conditions, paired differences, DiD",
    options=_battery_options,
)
def battery_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    return _run(ctx, _battery_options(params, ctx.surface("battery")))


@register_probe(
    "courtesy",
    tuple(p for p in BATTERY_PARAMS if p != "measure"),
    "opening-courtesy case study: presence under full / truncated / attn-isolated / translate",
    options=_courtesy_options,
)
def courtesy_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    return _run(ctx, _courtesy_options(params, ctx.surface("courtesy")))
