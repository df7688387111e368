"""The steering probe ``mech``: one object for ``asr-audit mech steer``, ``[probes.mech]`` and ``asr_audit.mech_steer``.

In an experiment spec (the verb's flags and the API's keywords have the same names)::

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
    limit = 20                     # only the first N of those clips (default: all)
    wer_field = "faithful"         # manifest field the WER is measured against (default: faithful)

It runs on audio corpora only: :func:`asr_audit.mechrun.steer.run_steer` over the corpus's clips
through the store (rows cached under keys that carry the intervention), and returns the steering
table — arms with accept-ref (Wilson 95%), flips against the clean run, and the WER of each arm
against what the speakers said (the manifest's ``wer_field``, the clips' references where the
manifest has no such field) — as ``{"steer": {"<model> <mode>": ...}}``, which the report's
``mech`` section renders (:mod:`asr_audit.report.sections_mech`).

Values are checked when the options are built (types, mode, ``k``, a finite ``alpha``, hook-site
names, ``positions`` parsed once into a pair); what needs the files and the model — the saved
directions, the truth folder, the model's hook sites — is checked when the probe starts, before
any clip is steered; every error is one line naming the field as the user wrote it (the flag, the
``[probes.mech]`` field or the keyword) and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_audit.calib.truth import TruthItem, load_truth
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.manifests import manifest_field
from asr_audit.errors import AuditError, BackendError, ConfigError
from asr_audit.mech.directions import Direction, load_direction
from asr_audit.mech.interventions import parse_positions
from asr_audit.mech.sites import parse_site
from asr_audit.mechrun.steer import MODES, SteerResult, control_arms, direction_gate, gated_arms, run_steer
from asr_audit.models.base import SITES, require_capability
from asr_audit.options import REQUIRED, CliFlag, OptionError, Reader, Surface, build, check, flag_table
from asr_audit.paths import cache_dir
from asr_audit.probes.core.flags import LIMIT, MODEL, SPEAKER
from asr_audit.probes.core.probe import FunctionProbe, ProbeInputs, probe

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
    "limit",
    "wer_field",
)
#: the verb's flags that are not ``--<field-name>`` (``Surface.cli(**CLI_FLAGS)``)
CLI_FLAGS = {"model": "--model", "speakers": "--speaker"}
#: the flags the mech verbs share: the saved directions' folder, the planted truth
DIRECTIONS = CliFlag("directions", Path, None, "Folder of saved directions (default: <cache>/directions).")
TRUTH = CliFlag("truth", Path, REQUIRED, "Folder with truth.jsonl (calibration or organism set).")
#: ``asr-audit mech steer``'s flag of every option
FLAGS = flag_table(
    MODEL,
    CliFlag(
        "direction",
        str,
        REQUIRED,
        "Name of a saved direction; several, comma-separated: each at its own site, applied together.",
    ),
    DIRECTIONS,
    CliFlag("site", str, None, "Apply at these sites (default: the direction's site)."),
    CliFlag(
        "mode",
        str,
        "ablate",
        "ablate (project out: h.d -> 0) | mean-ablate (h.d -> set B's mean) | induce (add alpha * d) | "
        "clamp (h.d capped at set B's mean + clamp-at * |d|; positions at or below untouched).",
    ),
    CliFlag("alpha", float, 1.0, "Induction strength (multiples of the direction)."),
    CliFlag("clamp_at", float, 0.0, "Clamp: the cap above set B's mean, in multiples of |d| (0: B's mean, 1: A's)."),
    CliFlag(
        "trigger_at",
        float,
        None,
        "Clamp: move only projections beyond B's mean + this * |d|, down to the cap (default: the cap).",
    ),
    CliFlag("k", int, 1, "Ablation rank (needs a direction saved with k or more).", minimum=1),
    CliFlag(
        "positions",
        str,
        None,
        "Decoder sites: edit only absolute token positions P0:P1 (prompt included; len(prompt)-1 predicts "
        "the first text token). Default: every position.",
    ),
    CliFlag(
        "gate",
        str,
        None,
        "Gate every arm on this saved decoder-site direction: edit only the clips whose unedited activation "
        "at the prompt end projects above --gate-at (the others decode clean; controls keep the same gate).",
    ),
    CliFlag("gate_at", float, 0.5, "Gate threshold above set B's mean, in multiples of |d| (0.5: midway to set A's)."),
    CliFlag("n_random", int, 3, "Random-direction controls (one per seed).", minimum=0),
    TRUTH,
    CliFlag("speakers", str, None, SPEAKER.help, ("--speaker",)),
    LIMIT,
    CliFlag("wer_field", str, "faithful", "Manifest field the WER is measured against."),
)

#: ``asr-audit mech steer --help``'s worked examples: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction voice-slt "
        "--speaker flite-slt",
        "ablate a saved direction, with random and shuffled controls",
    ),
    (
        "asr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction "
        "decision-L0,decision-L1,decision-L2,decision-L3 --mode clamp --clamp-at 0.5 --speaker flite-slt",
        "four directions clamped together, each at its own site",
    ),
    (
        "asr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction "
        "omission-L1,omission-L2 --mode clamp --positions 1:2 --gate voice-L0 --gate-at 0.5",
        "clamped at one token position, on the clips a voice gate opens for",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MechOptions:
    """Which model, which saved direction(s), which intervention and controls, on which clips.

    ``positions`` is the parsed ``P0:P1`` pair; ``origin`` is where the values came from, so the
    errors the probe raises when it reads the files are worded as the user wrote the field."""

    model: str
    direction: tuple[str, ...]
    directions: str | None = None
    site: tuple[str, ...] = ()
    mode: str = "ablate"
    alpha: float = 1.0
    clamp_at: float = 0.0
    trigger_at: float | None = None
    positions: tuple[int, int] | None = None
    gate: str | None = None
    gate_at: float = 0.5
    k: int = 1
    n_random: int = 3
    truth: str | None = None
    speakers: tuple[str, ...] = ()
    limit: int | None = None
    wer_field: str = "faithful"
    origin: Surface = field(default_factory=Surface.cli, compare=False, repr=False)

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
                f"must be at or above clamp_at {self.clamp_at!r}",
                "raise it or drop it",
            )
        check(math.isfinite(self.gate_at), "gate_at", self.gate_at, "must be finite", "use a number such as 0.5")
        check(self.gate != "", "gate", self.gate, "is empty", "name a saved direction, or drop gate")
        check(self.n_random >= 0, "n_random", self.n_random, "must not be negative", "use n_random = 0 or more")
        check(self.limit is None or self.limit >= 1, "limit", self.limit, "must be at least 1", "drop it or use 1+")
        check(bool(self.wer_field), "wer_field", self.wer_field, "is empty", "name a manifest field, e.g. faithful")
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
                raise surface.missing(key, f"set {surface.name(key)}")
        try:
            return build(
                cls,
                surface,
                model=r.text("model", None),
                direction=r.names("direction", ()),
                directions=r.text("directions", None),
                site=r.names("site", ()),
                mode=r.choice("mode", MODES, "ablate"),
                alpha=r.number("alpha", 1.0),
                clamp_at=r.number("clamp_at", 0.0),
                trigger_at=r.number("trigger_at", None),
                positions=_positions(r.text("positions", None), surface),
                gate=r.text("gate", None),
                gate_at=r.number("gate_at", 0.5),
                k=r.integer("k", 1),
                n_random=r.integer("n_random", 3),
                truth=r.text("truth", None),
                speakers=r.names("speakers", ()),
                limit=r.integer("limit", None),
                wer_field=r.text("wer_field", "faithful"),
                origin=surface,
            )
        except OptionError as exc:
            raise surface.reword(exc) from None

    def directions_root(self) -> Path:
        """The folder of saved directions (``directions``, default ``<cache>/directions``)."""
        if self.directions is None:
            return cache_dir() / "directions"
        root = Path(self.directions)
        if not root.is_dir():
            raise self.origin.error(
                "directions",
                self.directions,
                "is not a folder",
                "point it at the folder asr-audit mech direction --directions wrote",
            )
        return root


def _positions(text: str | None, surface: Surface) -> tuple[int, int] | None:
    """``positions`` (``"P0:P1"``) as its pair: the one place the option is parsed."""
    if text is None:
        return None
    try:
        return parse_positions(text)
    except ValueError:
        raise surface.error(
            "positions",
            text,
            "is not P0:P1 with 0 <= P0 < P1",
            "use e.g. 1:2 (absolute decoder token positions, the prompt counts)",
        ) from None


def _is_site(name: str) -> bool:
    try:
        parse_site(name)
    except ConfigError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class MechRun:
    """The steering table of ``model`` (the name it has in the run) under one intervention mode."""

    model: str
    steer: SteerResult

    def table(self) -> dict[str, Any]:
        """The table as ``results.json`` holds it (``model`` carries the model's name)."""
        out = self.steer.to_dict()
        out["model"] = {"name": self.model, **out["model"]}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"steer": {f"{self.model} {self.steer.mode}": self.table()}}


def _load(options: MechOptions, field_name: str, names: Sequence[str]) -> list[Direction]:
    """The saved directions ``names`` of the field ``field_name`` (``direction`` or ``gate``)."""
    root = options.directions_root()
    out = []
    for name in names:
        if not (root / f"{name}.json").is_file():
            have = sorted(p.stem for p in root.glob("*.json")) if root.is_dir() else []
            raise options.origin.error(
                field_name,
                name,
                f"names no saved direction in {root} (no {name}.json)"
                + (f" (saved: {', '.join(have)})" if have else ""),
                f"make it with asr-audit mech direction --name {name} --directions {root}, "
                f"or set {options.origin.name('directions')} to the folder that holds it",
            )
        try:
            out.append(load_direction(name, root))
        except AuditError as exc:
            raise options.origin.error(field_name, name, f"cannot be loaded: {exc}", "") from None
    return out


def _arms(options: MechOptions, seed: int) -> tuple[Direction | list[Direction], list[Any], Direction | None]:
    """The direction(s), the arms with their controls (gated when ``gate`` is set), and the gate's direction."""
    loaded = _load(options, "direction", options.direction)
    picked: Direction | list[Direction] = loaded[0] if len(loaded) == 1 else loaded
    arms: list[Any] = control_arms(
        picked,
        options.mode,
        sites=options.site or None,
        alpha=options.alpha,
        k=options.k,
        n_random=options.n_random,
        seed=seed,
        clamp_at=options.clamp_at,
        trigger_at=options.trigger_at,
        positions=options.positions,
    )
    if options.gate is None:
        return picked, arms, None
    (gate,) = _load(options, "gate", (options.gate,))
    try:
        return picked, gated_arms(arms, direction_gate(gate, options.gate_at)), gate
    except ConfigError as exc:
        raise options.origin.error("gate", options.gate, f"cannot gate: {exc}", "") from None


def _clips(options: MechOptions, corpus: Corpus) -> Corpus:
    """The corpus's clips of ``speakers`` (all by default), cut to the first ``limit``."""
    clips = corpus.clips
    if options.speakers:
        clips = tuple(c for c in clips if c.speaker in set(options.speakers))
        if not clips:
            raise options.origin.error(
                "speakers",
                options.speakers,
                f"match no clip of corpus {corpus.name!r}",
                "check the manifest's speaker field",
            )
    return Corpus(corpus.name, corpus.split, corpus.source, clips[: options.limit])


def _items(options: MechOptions, clips: Corpus) -> list[TruthItem]:
    """The planted sites of ``truth`` on ``clips`` (none without ``truth``)."""
    if not options.truth:
        return []
    ids = {c.id for c in clips.clips}
    try:
        return [t for t in load_truth(options.truth).errors() if t.clip_id in ids]
    except AuditError as exc:
        raise options.origin.error("truth", options.truth, f"cannot be read: {exc}", "") from None


def _backend(options: MechOptions, inputs: ProbeInputs, loaded: Sequence[Direction], gate: Direction | None) -> Any:
    """The model's backend, refused unless it has every hook site the arms and the gate use (and,
    for ``positions``, a decoder position embedding)."""
    backend = inputs.need_pool("mech").get(options.model)
    try:
        require_capability(backend, SITES)
    except BackendError as exc:  # a configuration error of the options: exit 2 (docs/mechanism.md)
        raise options.origin.error("model", options.model, f"cannot be steered: {exc}", "") from None
    if options.positions is not None and getattr(backend, "decoder_position_module", None) is None:
        raise options.origin.error(
            "positions",
            "{}:{}".format(*options.positions),
            f"needs a decoder position embedding to read token positions from, and {options.model} has none",
            "drop positions, or steer a Whisper PyTorch model",
        )
    have = list(backend.sites())
    example = f"{len(have)} sites, e.g. {', '.join(have[:3])}"
    for name in options.site:
        if name not in have:
            raise options.origin.error(
                "site",
                name,
                f"is not a hook site of {options.model} ({example})",
                "use one of its sites, or drop site to use the direction's own",
            )
    for d in () if options.site else loaded:
        if d.site not in have:
            raise options.origin.error(
                "direction",
                d.name,
                f"was made at site {d.site!r}, which {options.model} does not have ({example})",
                "capture and make the direction on this model (asr-audit mech capture -m ...), or set "
                + options.origin.name("site"),
            )
    if gate is not None and (gate.site not in have or not callable(getattr(backend, "score", None))):
        raise options.origin.error(
            "gate",
            options.gate,
            f"cannot gate {options.model}: it has no site {gate.site!r} or cannot teacher-force the prompt (score)",
            "gate a Whisper PyTorch model on a direction made at one of its decoder sites",
        )
    return backend


def _wer_texts(options: MechOptions, clips: Corpus) -> dict[str, str]:
    """What each clip's WER is measured against: the manifest's ``wer_field``, else the references."""
    found = manifest_field(clips.source, options.wer_field)
    return found if found else {c.id: c.reference for c in clips.clips}


def _check(options: MechOptions, inputs: ProbeInputs, surface: Surface) -> None:
    if inputs.clips is not None and options.model not in inputs.models:
        raise options.origin.error(
            "model", options.model, "is not a model of this spec", f"use one of {', '.join(inputs.models)}"
        )


def _run(inputs: ProbeInputs, options: MechOptions) -> MechRun | None:
    """The steering table of ``options`` on the corpus's clips (``None`` for a prediction-file corpus:
    nothing to steer); every file and the model's sites are checked before any clip is steered."""
    if inputs.clips is None:
        return None
    picked, arms, gate = _arms(options, inputs.seed)
    clips = _clips(options, inputs.clips)
    items = _items(options, clips)
    backend = _backend(options, inputs, [picked] if isinstance(picked, Direction) else picked, gate)
    result = run_steer(
        backend,
        clips,
        inputs.need_store("mech"),
        arms,
        items=items,
        wer_texts=_wer_texts(options, clips),
        direction=picked,
        mode=options.mode,
    )
    return MechRun(options.model, result)


#: the probe (see the module docstring)
MECH: FunctionProbe[MechOptions, MechRun] = probe(
    "mech",
    MECH_PARAMS,
    "steering under a saved direction with random / shuffled controls: accept-ref, flips, WER",
    MechOptions.from_mapping,
    _run,
    _check,
    flags=FLAGS,
    examples=EXAMPLES,
)

__all__ = ["CLI_FLAGS", "DIRECTIONS", "EXAMPLES", "FLAGS", "MECH", "MECH_PARAMS", "MechOptions", "MechRun", "TRUTH"]
