"""Runner registration of the steering probe ``mech`` (``asr-audit run``).

In an experiment spec::

    [probes.mech]
    model = "organism-benchmark"   # a model of the spec with hook sites
    direction = ["voice-L2", "voice-L3"]  # saved direction name(s); several: each at its own site
    directions = "dirs"            # folder of saved directions (default: <cache>/directions)
    site = ["decoder.layers.3.out"]  # one direction only: apply it at these sites (default: its own)
    mode = "mean-ablate"           # ablate | mean-ablate | induce | clamp
    alpha = 1.0                    # induction strength
    clamp_at = 0.0                 # clamp: cap above set B's mean, in multiples of |d|
    trigger_at = 0.5               # clamp: move only projections beyond this (default: clamp_at)
    positions = "1:2"              # decoder sites: edit only absolute token positions P0:P1 (default: all)
    gate = "voice-L0"              # a saved decoder-site direction: edit only the clips it opens for
    gate_at = 0.5                  # gate threshold above set B's mean, in multiples of |d| (0.5: midway)
    k = 1                          # ablation rank
    n_random = 3                   # random-direction controls (the shuffled control is always run)
    truth = "organism-set"         # folder with truth.jsonl: accept-ref is scored on its planted sites
    speakers = ["flite-slt"]       # only these speakers' clips (default: all)

It runs on audio corpora only: :func:`asr_audit.mechrun.steer.run_steer` over the corpus's clips
through the run's store (rows cached under keys that carry the intervention), and returns the
steering table — arms with accept-ref (Wilson 95%), flips against the clean run, and the WER of
each arm against the clips' references — as ``{"steer": {"<model> <mode>": ...}}``, which the
report's ``mech`` section renders (:mod:`asr_audit.report.sections_mech`).

Values are checked when the spec loads (types, mode, ``k``, a finite ``alpha``, hook-site names);
what needs the files and the model — the saved directions, the truth folder, the model's hook
sites — is checked when the probe starts, before any clip is steered; every error is one line
naming the ``[probes.mech]`` field and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asr_audit.calib.truth import load_truth
from asr_audit.corpus.clips import Corpus
from asr_audit.errors import AuditError, BackendError, ConfigError
from asr_audit.mech.directions import load_direction
from asr_audit.mech.interventions import parse_positions
from asr_audit.mech.sites import parse_site
from asr_audit.mechrun.steer import control_arms, direction_gate, gated_arms, run_steer
from asr_audit.models.base import SITES, require_capability
from asr_audit.options import OptionError, Reader, Surface, build, check
from asr_audit.paths import cache_dir
from asr_audit.runner.probes import ProbeContext, register_probe

MECH_PARAMS = (
    "model",
    "direction",
    "directions",
    "site",
    "mode",
    "alpha",
    "clamp_at",
    "trigger_at",
    "positions",
    "gate",
    "gate_at",
    "k",
    "n_random",
    "truth",
    "speakers",
)
MECH_MODES = ("ablate", "mean-ablate", "induce", "clamp")


@dataclass(frozen=True, slots=True, kw_only=True)
class MechOptions:
    """``[probes.mech]``: which model, which saved direction(s), which intervention and controls."""

    model: str
    direction: tuple[str, ...]
    directions: str | None = None
    site: tuple[str, ...] = ()
    mode: str = "ablate"
    alpha: float = 1.0
    clamp_at: float = 0.0
    trigger_at: float | None = None
    positions: str | None = None
    gate: str | None = None
    gate_at: float = 0.5
    k: int = 1
    n_random: int = 3
    truth: str | None = None
    speakers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check(bool(self.direction) and all(self.direction), "direction", self.direction, "is empty", "name a direction")
        check(math.isfinite(self.alpha), "alpha", self.alpha, "is not a finite number", "use e.g. alpha = 4.0")
        check(self.k >= 1, "k", self.k, "must be at least 1", "use k = 1 or more")
        check(math.isfinite(self.clamp_at), "clamp_at", self.clamp_at, "must be finite", "use a number such as 0.5")
        if self.trigger_at is not None:
            check(
                self.trigger_at >= self.clamp_at,
                "trigger_at",
                self.trigger_at,
                "must be at or above clamp_at",
                "raise it or drop it",
            )
        if self.positions is not None:
            check(
                _is_positions(self.positions),
                "positions",
                self.positions,
                "is not P0:P1 with 0 <= P0 < P1",
                'use e.g. positions = "1:2" (absolute decoder token positions, the prompt counts)',
            )
        check(math.isfinite(self.gate_at), "gate_at", self.gate_at, "must be finite", "use a number such as 0.5")
        check(self.gate != "", "gate", self.gate, "is empty", "name a saved direction, or drop gate")
        check(self.n_random >= 0, "n_random", self.n_random, "must not be negative", "use n_random = 0 or more")
        for name in self.site:
            check(
                _is_site(name),
                "site",
                self.site,
                f"names {name!r}, which is not a hook-site name",
                "use names like decoder.layers.3.out or encoder.out",
            )
        check(
            not self.site or len(self.direction) == 1,
            "site",
            self.site,
            "needs a single direction (several are each applied at their own site)",
            "drop site, or name one direction",
        )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface) -> MechOptions:
        r = Reader(values, surface, MECH_PARAMS, "mech")
        for key in ("model", "direction"):
            if not r.has(key):
                raise surface.missing(key, f"set {key} in [probes.mech]")
        try:
            return build(
                cls,
                surface,
                model=r.text("model", None),
                direction=r.names("direction", ()),
                directions=r.text("directions", None),
                site=r.names("site", ()),
                mode=r.choice("mode", MECH_MODES, "ablate"),
                alpha=r.number("alpha", 1.0),
                clamp_at=r.number("clamp_at", 0.0),
                trigger_at=r.number("trigger_at", None),
                positions=r.text("positions", None),
                gate=r.text("gate", None),
                gate_at=r.number("gate_at", 0.5),
                k=r.integer("k", 1),
                n_random=r.integer("n_random", 3),
                truth=r.text("truth", None),
                speakers=r.names("speakers", ()),
            )
        except OptionError as exc:
            raise surface.reword(exc) from None


def _parse(positions: str | None) -> tuple[int, int] | None:
    return None if positions is None else parse_positions(positions)


def _is_positions(text: str) -> bool:
    try:
        _parse(text)
    except ValueError:
        return False
    return True


def _is_site(name: str) -> bool:
    try:
        parse_site(name)
    except ConfigError:
        return False
    return True


def _load_directions(ctx: ProbeContext, surface: Surface, options: MechOptions, field: str = "direction") -> list[Any]:
    """The saved directions ``options`` names in ``field`` (``direction``, or ``gate``); a missing
    folder or name is an error naming the field."""
    from pathlib import Path

    if options.directions is not None:
        root = Path(options.directions)
        if not root.is_dir():
            raise ConfigError(
                f"{ctx.spec_path}: {surface.name('directions')} = {options.directions!r} is not a folder; "
                "fix: point it at the folder asr-audit mech direction --directions wrote"
            )
    else:
        root = cache_dir() / "directions"
    out = []
    names = options.direction if field == "direction" else (options.gate,) if options.gate else ()
    for name in names:
        if not (root / f"{name}.json").is_file():
            have = sorted(p.stem for p in root.glob("*.json")) if root.is_dir() else []
            raise ConfigError(
                f"{ctx.spec_path}: {surface.name(field)} = {name!r}: no saved direction of that name in {root}"
                + (f" (saved: {', '.join(have)})" if have else "")
                + f"; fix: make it with asr-audit mech direction --name {name} --directions {root}, "
                f"or set {surface.name('directions')} to the folder that holds it"
            )
        try:
            out.append(load_direction(name, root))
        except AuditError as exc:
            raise ConfigError(f"{ctx.spec_path}: {surface.name(field)} = {name!r}: {exc}") from None
    return out


def _check_sites(ctx: ProbeContext, surface: Surface, options: MechOptions, backend: Any, loaded: list[Any]) -> None:
    """Every site the arms will hook is one of ``backend``'s, and ``positions`` can be read from it
    (before any clip is steered)."""
    if options.positions is not None and getattr(backend, "decoder_position_module", None) is None:
        raise ConfigError(
            f"{ctx.spec_path}: {surface.name('positions')} = {options.positions!r}: {options.model} has no decoder "
            "position embedding to read token positions from; fix: drop positions, or steer a Whisper PyTorch model"
        )
    have = list(backend.sites())
    known = set(have)
    example = f"{len(have)} sites, e.g. {', '.join(have[:3])}"
    for name in options.site:
        if name not in known:
            raise ConfigError(
                f"{ctx.spec_path}: {surface.name('site')} = {name!r} is not a hook site of {options.model} "
                f"({example}); fix: use one of its sites, or drop site to use the direction's own"
            )
    if options.site:
        return
    for d in loaded:
        if d.site not in known:
            raise ConfigError(
                f"{ctx.spec_path}: {surface.name('direction')} = {d.name!r} was made at site {d.site!r}, "
                f"which {options.model} does not have ({example}); fix: capture and make the direction "
                f"on this model (asr-audit mech capture -m ...), or set {surface.name('site')}"
            )


@register_probe(
    "mech",
    MECH_PARAMS,
    "steering under a saved direction with random / shuffled controls: accept-ref, flips, WER",
    options=MechOptions.from_mapping,
)
def mech_probe(ctx: ProbeContext, params: Mapping[str, Any]) -> dict[str, Any] | None:
    if ctx.clips is None or ctx.backend is None:
        return None  # a prediction-file corpus: nothing to steer
    surface = ctx.surface("mech")
    options = MechOptions.from_mapping(params, surface)
    if options.model not in ctx.models:
        raise ConfigError(
            f"{ctx.spec_path}: {surface.name('model')} = {options.model!r} is not a model of this spec; "
            f"fix: use one of {', '.join(ctx.models)}"
        )
    loaded = _load_directions(ctx, surface, options)
    picked = loaded[0] if len(loaded) == 1 else loaded
    arms = control_arms(
        picked,
        options.mode,
        sites=options.site or None,
        alpha=options.alpha,
        k=options.k,
        n_random=options.n_random,
        seed=ctx.seed,
        clamp_at=options.clamp_at,
        trigger_at=options.trigger_at,
        positions=_parse(options.positions),
    )
    gates = _load_directions(ctx, surface, options, "gate")
    if gates:
        try:
            arms = gated_arms(arms, direction_gate(gates[0], options.gate_at))
        except ConfigError as exc:
            raise ConfigError(f"{ctx.spec_path}: {surface.name('gate')} = {options.gate!r}: {exc}") from None
    clips = ctx.clips
    if options.speakers:
        keep = tuple(c for c in clips.clips if c.speaker in set(options.speakers))
        if not keep:
            raise ConfigError(
                f"{ctx.spec_path}: {surface.name('speakers')}: no clip of corpus {ctx.corpus!r} has those speakers; "
                "fix: check the manifest's speaker field"
            )
        clips = Corpus(clips.name, clips.split, clips.source, keep)
    ids = {c.id for c in clips.clips}
    items = []
    if options.truth:
        try:
            items = [t for t in load_truth(options.truth).errors() if t.clip_id in ids]
        except AuditError as exc:
            raise ConfigError(f"{ctx.spec_path}: {surface.name('truth')} = {options.truth!r}: {exc}") from None
    backend = ctx.backend(options.model)
    try:
        require_capability(backend, SITES)
    except BackendError as exc:  # a configuration error of [probes.mech]: the run exits 2 (docs/mechanism.md)
        raise ConfigError(f"{ctx.spec_path}: {surface.name('model')} = {options.model!r}: {exc}") from None
    _check_sites(ctx, surface, options, backend, loaded)
    if gates and (gates[0].site not in set(backend.sites()) or not callable(getattr(backend, "score", None))):
        raise ConfigError(
            f"{ctx.spec_path}: {surface.name('gate')} = {options.gate!r}: {options.model} has no site "
            f"{gates[0].site!r} or cannot teacher-force the prompt (score); fix: gate a Whisper PyTorch model "
            "on a direction made at one of its decoder sites"
        )
    result = run_steer(
        backend,
        clips,
        ctx.need_store("mech"),
        arms,
        items=items,
        wer_texts={c.id: c.reference for c in clips.clips},
        direction=picked,
        mode=options.mode,
    )
    out = result.to_dict()
    out["model"] = {"name": options.model, **out["model"]}
    return {"steer": {f"{options.model} {options.mode}": out}}
