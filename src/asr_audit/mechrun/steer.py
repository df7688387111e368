"""Steering: run a backend under interventions, with the controls built in, and score each arm.

* :class:`SteeredBackend` wraps a PyTorch backend so that every ``transcribe`` / ``score`` call
  runs under its interventions; its identity carries the interventions' keys (site, direction
  hash, alpha, k, frames), so the store caches its rows apart from the clean run's and any
  probe that takes a backend (refdis prediction files, masked, the battery, switch rate) runs
  under an intervention unchanged.
* :func:`control_arms` builds the paper's arms from one direction: the intervention itself,
  random directions of the same norm (several seeds), a norm-matched shuffled direction; the
  clean run is always arm ``clean``. Modes: ``ablate`` (project out: ``h.d`` set to 0),
  ``mean-ablate`` (``h.d`` set to that of set B's mean, the faithful set's value: its controls
  use the same center), ``clamp`` (directional clamping: ``h.d`` capped at set B's mean plus
  ``clamp_at`` times the direction's norm, positions at or below untouched; with ``trigger_at``
  above it only projections beyond set B's mean plus ``trigger_at`` times the norm move, down to
  the cap: a conditional mean ablation; its controls use the same center, cap and trigger) and ``induce`` (add ``alpha * d``). Given several directions (each made
  at its own site) every arm is **multi-site**: an :class:`Arm` of one intervention per site,
  the controls drawn per site.
* :func:`run_steer` transcribes a corpus under every arm through the store, batch by batch with
  the arms innermost, so a decoder-side intervention reuses each batch's encoder states (the
  backend's encoder memo) instead of re-encoding per arm, and scores accept-ref on planted sites
  (:func:`asr_audit.calib.sites.score_sites`, Wilson 95%), the **flips** against the clean run
  (ref -> spoken, spoken -> ref, per planted site) and the WER against faithful texts (the
  side-effect check).
* **Gated arms** (conditional activation steering): an :class:`Arm` with a
  :class:`~asr_audit.mech.interventions.Gate` edits only the clips whose *unedited* activation at
  the gate's site and position (a teacher-forced pass on the prompt alone,
  :func:`prompt_activations`) opens it; those get exactly the ungated arm's decode (its stored
  rows are reused), the others the clean decode; each arm reports how many clips it opened for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asr_audit.audio.io import load_audio
from asr_audit.calib.sites import REF, SPOKEN, SiteScore, score_sites
from asr_audit.calib.truth import TruthItem
from asr_audit.corpus.clips import Corpus
from asr_audit.errors import ConfigError
from asr_audit.mech.directions import Direction, random_direction, shuffled_direction
from asr_audit.mech.interventions import Gate, Intervention, intervene, recording
from asr_audit.models.base import BackendIdentity
from asr_audit.stats.intervals import Rate
from asr_audit.store.base import Store
from asr_audit.store.transcribe import transcribe_corpus
from asr_audit.text.align import wer_counts
from asr_audit.text.normalize import get_normalizer

MODES = ("ablate", "mean-ablate", "induce", "clamp")
CLEAN = "clean"


@dataclass(frozen=True, slots=True)
class Arm:
    """One steering arm of several interventions applied together (e.g. one per site); with a
    ``gate``, applied only to the clips the gate opens for (the others decode clean)."""

    label: str
    interventions: tuple[Intervention, ...]
    gate: Gate | None = None

    def __post_init__(self) -> None:
        if not self.interventions:
            raise ConfigError(f"arm {self.label!r} has no intervention")

    @property
    def key(self) -> str:
        keys = ",".join(iv.key for iv in self.interventions)
        return keys if self.gate is None else f"{keys}|gate={self.gate.key}"

    def ungated(self) -> Arm:
        """This arm without its gate (what a clip the gate opens for is decoded under)."""
        return Arm(self.label, self.interventions)

    @property
    def kind(self) -> str:
        return self.interventions[0].kind

    def to_dict(self) -> dict[str, Any]:
        first = self.interventions[0].to_dict()
        return {
            **first,
            "label": self.label,
            "sites": [s for iv in self.interventions for s in iv.sites],
            "key": self.key,
            "parts": [iv.to_dict() for iv in self.interventions],
        } | ({"gate": self.gate.to_dict()} if self.gate is not None else {})


def as_arm(arm: Intervention | Arm) -> Arm:
    """``arm`` as an :class:`Arm` (a lone intervention is an arm of one, under its own label)."""
    return arm if isinstance(arm, Arm) else Arm(arm.label, (arm,))


class SteeredBackend:
    """``inner`` with ``interventions`` active during every call (see the module docstring)."""

    def __init__(self, inner: Any, interventions: Sequence[Intervention]) -> None:
        if not interventions:
            raise ConfigError(
                "a steered backend needs at least one intervention; use the backend itself for clean runs"
            )
        self.inner = inner
        self.interventions = tuple(interventions)
        self.spec = inner.spec
        self.capabilities = inner.capabilities
        self.max_duration = getattr(inner, "max_duration", None)
        self.batch_size = getattr(inner, "batch_size", 8)

    def identity(self) -> BackendIdentity:
        base = self.inner.identity()
        keys = ",".join(iv.key for iv in self.interventions)
        return BackendIdentity(
            base.spec, base.weights_hash, base.options, tuple(sorted({**dict(base.code), "intervention": keys}.items()))
        )

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        with intervene(self.inner, self.interventions):
            return list(self.inner.transcribe(audios))

    def score(self, audios: Sequence[np.ndarray], prefixes: Sequence[str], targets: Sequence[str]) -> list[Any]:
        with intervene(self.inner, self.interventions):
            return list(self.inner.score(audios, prefixes, targets))

    def sites(self) -> list[str]:
        return list(self.inner.sites())

    def site_module(self, name: str) -> Any:
        return self.inner.site_module(name)


def _random_basis(width: int, k: int, rng: np.random.Generator) -> np.ndarray:
    return np.stack([random_direction(width, 1.0, rng) for _ in range(k)])


def control_arms(
    direction: Direction | Sequence[Direction],
    mode: str,
    *,
    sites: Sequence[str] | None = None,
    alpha: float = 1.0,
    k: int = 1,
    n_random: int = 3,
    seed: int = 0,
    frames: tuple[int, int] | None = None,
    clamp_at: float = 0.0,
    trigger_at: float | None = None,
    positions: tuple[int, int] | None = None,
) -> list[Any]:
    """The intervention (label ``ablate-k<k>`` / ``mean-ablate-k<k>`` / ``clamp-c<clamp_at>-k<k>`` /
    ``induce-a<alpha>``),
    ``random-<i>`` for ``n_random`` seeded random directions of the same norm (rank ``k`` for
    ablation; mean ablation and clamping keep set B's mean as the center, clamping the same cap
    ``clamp_at * |d|``) and ``shuffled`` (coordinates
    permuted). One direction: a list of :class:`Intervention` (at ``sites``, default the
    direction's site). Several directions: a list of multi-site :class:`Arm` (each direction at
    its own site; ``sites`` must then be empty), the controls drawn per site from one generator.
    ``positions``: every arm edits only these absolute decoder token positions ``[p0, p1)``."""
    if mode not in MODES:
        raise ConfigError(f"unknown steering mode {mode!r}; valid: {', '.join(MODES)}")
    if not np.isfinite(clamp_at):
        raise ConfigError(f"clamp_at {clamp_at!r} must be a finite number (a multiple of the direction's norm)")
    if trigger_at is not None and not trigger_at >= clamp_at:
        raise ConfigError(f"trigger_at {trigger_at!r} must be at or above clamp_at {clamp_at!r}; fix: raise it")
    clamp = (clamp_at, trigger_at)
    if isinstance(direction, Direction):
        where = tuple(sites or (direction.site,))
        return _control_arms(direction, mode, where, alpha, k, n_random, seed, frames, clamp, positions)
    dirs = list(direction)
    if not dirs:
        raise ConfigError("control arms need at least one direction")
    if sites:
        raise ConfigError("several directions are applied each at its own site; fix: drop --site")
    if len({d.site for d in dirs}) != len(dirs):
        raise ConfigError(f"two directions share a site ({', '.join(d.site for d in dirs)}); fix: one per site")
    rng = np.random.default_rng(seed)
    per_site = [_control_arms(d, mode, (d.site,), alpha, k, n_random, rng, frames, clamp, positions) for d in dirs]
    return [Arm(parts[0].label, tuple(parts)) for parts in zip(*per_site)]


def _control_arms(
    direction: Direction,
    mode: str,
    sites: tuple[str, ...],
    alpha: float,
    k: int,
    n_random: int,
    seed: int | np.random.Generator,
    frames: tuple[int, int] | None,
    clamp: tuple[float, float | None] = (0.0, None),
    positions: tuple[int, int] | None = None,
) -> list[Intervention]:
    vec = np.asarray(direction.vector, np.float64)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if mode in ("ablate", "mean-ablate", "clamp"):
        center = None
        if mode in ("mean-ablate", "clamp"):
            if not direction.has_mean_b:
                raise ConfigError(
                    f"direction {direction.name!r} was saved without set B's mean, which {mode} needs; "
                    "fix: recreate it with asr-audit mech direction"
                )
            center = np.asarray(direction.mean_b, np.float64)
        clamp_at, trigger_at = clamp
        limit = clamp_at * direction.norm
        trigger = None if trigger_at is None else trigger_at * direction.norm

        def ablation(basis: np.ndarray, label: str) -> Intervention:
            if mode == "clamp":
                return Intervention.clamping(
                    sites, basis, limit, center=center, trigger=trigger, frames=frames, label=label, positions=positions
                )
            return Intervention.ablation(sites, basis, frames=frames, label=label, center=center, positions=positions)

        name = f"{mode}-k{k}"
        if mode == "clamp":
            name = f"clamp-c{clamp_at:g}" + ("" if trigger_at is None else f"-t{trigger_at:g}") + f"-k{k}"
        arms = [ablation(direction.rank(k).basis, name)]
        arms += [ablation(_random_basis(len(vec), k, rng), f"random-{i}") for i in range(n_random)]
        arms.append(ablation(shuffled_direction(vec, rng), "shuffled"))
        return arms
    at = {"frames": frames, "positions": positions}
    arms = [Intervention.induction(sites, vec, alpha, label=f"induce-a{alpha:g}", **at)]
    for i in range(n_random):
        arms.append(
            Intervention.induction(
                sites, random_direction(len(vec), direction.norm, rng), alpha, label=f"random-{i}", **at
            )
        )
    arms.append(Intervention.induction(sites, shuffled_direction(vec, rng), alpha, label="shuffled", **at))
    return arms


def direction_gate(direction: Direction, at: float = 0.5, *, position: int | None = None) -> Gate:
    """A gate from a saved direction (a decoder site's set A minus set B, set B's mean kept): open
    iff ``(h - mean_B) . d / |d| > at * |d|`` at the prompt end (``at = 0.5``: the midpoint of
    the two sets' means; 0: set B's mean, 1: set A's)."""
    if not direction.has_mean_b:
        raise ConfigError(
            f"gate direction {direction.name!r} was saved without set B's mean (the gate's center); "
            "fix: recreate it with asr-audit mech direction"
        )
    if not np.isfinite(at):
        raise ConfigError(f"gate_at {at!r} must be a finite number (a multiple of the direction's norm)")
    mean_b = np.asarray(direction.mean_b, np.float64)
    g = Gate.between(direction.site, mean_b + np.asarray(direction.vector, np.float64), mean_b, position=position)
    return Gate(g.site, g.vector, g.center, at * direction.norm, position, label=f"{direction.name} at {at:g}")


def gated_arms(arms: Sequence[Intervention | Arm], gate: Gate) -> list[Arm]:
    """Every arm (the intervention and its controls) under the same ``gate``: controls then differ
    from the arm only in the edit."""
    return [Arm(a.label, a.interventions, gate) for a in map(as_arm, arms)]


@dataclass(frozen=True, slots=True)
class SteerArm:
    """One arm: its accept-ref on planted sites, flips against the clean run, WER on faithful texts."""

    label: str
    intervention: Mapping[str, Any] | None
    accept_ref: Rate
    spoken: Rate
    ref_to_spoken: int  # sites whose outcome was ref in the clean run and spoken here
    spoken_to_ref: int
    n_sites: int
    wer: float | None
    n_failed: int
    n_open: int | None = None  # gated arm: clips the gate opened for (of n_clips); None: not gated
    n_clips: int | None = None

    def to_dict(self) -> dict[str, Any]:
        gate = {} if self.n_open is None else {"gate_open": {"k": self.n_open, "n": self.n_clips}}
        return gate | {
            "label": self.label,
            "intervention": dict(self.intervention) if self.intervention else None,
            "accept_ref": self.accept_ref.to_dict(),
            "spoken": self.spoken.to_dict(),
            "flips": {"ref_to_spoken": self.ref_to_spoken, "spoken_to_ref": self.spoken_to_ref},
            "n_sites": self.n_sites,
            "wer": self.wer,
            "n_failed": self.n_failed,
        }


@dataclass(frozen=True, slots=True)
class SteerResult:
    model: Mapping[str, Any]
    direction: Mapping[str, Any]
    mode: str
    corpus: str
    arms: tuple[SteerArm, ...]
    hypotheses: Mapping[str, Mapping[str, str]]  # arm -> clip id -> text

    def arm(self, label: str) -> SteerArm:
        for a in self.arms:
            if a.label == label:
                return a
        raise ConfigError(f"no arm {label!r}; arms: {', '.join(a.label for a in self.arms)}")

    def effect_share(self) -> float | None:
        """``1 - rate(intervention) / rate(clean)`` (ablation: the share of accept-ref removed);
        undefined when the clean rate is 0 or undefined."""
        clean, main = self.arms[0].accept_ref, self.arms[1].accept_ref
        if not clean.n or clean.rate == 0 or not main.n:
            return None
        return 1.0 - main.rate / clean.rate

    def lines(self) -> list[str]:
        """The table as ``asr-audit mech steer`` prints it: a line per arm, then the effect share."""
        out = []
        for arm in self.arms:
            r, wer = arm.accept_ref, "-" if arm.wer is None else f"{arm.wer:.3f}"
            rate = f"{r.rate:.3f} [{r.low:.3f}, {r.high:.3f}]" if r.n else "undefined (no sites)"
            opened = f"  gate open {arm.n_open}/{arm.n_clips}" if arm.n_open is not None else ""
            out.append(
                f"{arm.label:12s} accept-ref {rate} ({r.k}/{r.n})  flips ref->spoken {arm.ref_to_spoken}, "
                f"spoken->ref {arm.spoken_to_ref}  WER {wer}{opened}"
            )
        share = self.effect_share()
        return [*out, "effect share: " + ("undefined (clean rate 0)" if share is None else f"{share:.3f}")]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": dict(self.model),
            "direction": dict(self.direction),
            "mode": self.mode,
            "corpus": self.corpus,
            "effect_share": self.effect_share(),
            "arms": [a.to_dict() for a in self.arms],
        }


def _direction_dict(direction: Direction | Sequence[Direction] | None) -> dict[str, Any]:
    if direction is None:
        return {}
    if isinstance(direction, Direction):
        return direction.to_dict()
    return {"directions": [d.to_dict() for d in direction]}


def _arm_dict(arm: Arm) -> dict[str, Any]:
    """A one-intervention arm reports that intervention (as before multi-site arms existed)."""
    if len(arm.interventions) == 1:
        gate = {"gate": arm.gate.to_dict(), "key": arm.key} if arm.gate is not None else {}
        return {**arm.interventions[0].to_dict(), "label": arm.label} | gate
    return arm.to_dict()


def prompt_activations(
    backend: Any, audios: Sequence[np.ndarray], sites: Sequence[str], position: int | None = None
) -> dict[str, np.ndarray]:
    """Per site, the ``(n, width)`` outputs at absolute decoder token ``position`` (default
    ``len(backend.prompt) - 1``, the one that predicts the first text token) of an unedited
    teacher-forced pass on the prompt alone (``backend.score`` with empty prefix and target), one
    clip per call so a clip's value does not depend on its batch; encoder states come from the
    backend's encoder memo. The gate's pre-pass, and what a gate is fitted on."""
    if not callable(getattr(backend, "score", None)):
        raise ConfigError(
            f"{getattr(backend, 'spec', backend)!r} cannot teacher-force (no score); fix: gate a PyTorch backend"
        )
    if position is None:
        prompt = getattr(backend, "prompt", None)
        if not prompt:
            raise ConfigError("the gate's default position needs the backend's prompt; fix: give the gate a position")
        position = len(prompt) - 1
    got: dict[str, list[np.ndarray]] = {s: [] for s in sites}

    def sink(site: str, t: Any, pos: int = position) -> None:
        if t.dim() != 3 or t.shape[1] <= pos:
            raise ConfigError(f"gate at {site}: no token position {pos} in a {tuple(t.shape)} output")
        got[site].append(t[0, pos].double().cpu().numpy().copy())

    for audio in audios:
        with recording(backend, sites, sink):
            backend.score([audio], [""], [""])
    return {s: np.array(v).reshape(len(audios), -1) for s, v in got.items()}


def gate_scores(backend: Any, audios: Sequence[np.ndarray], gate: Gate) -> np.ndarray:
    """``(h - center) . vector`` per clip, ``h`` from :func:`prompt_activations` (no intervention
    active: the gate reads the clean model); a clip is open where it exceeds ``gate.threshold``."""
    inner = backend.inner if isinstance(backend, SteeredBackend) else backend
    h = prompt_activations(inner, audios, [gate.site], gate.position)[gate.site]
    return np.array([gate.score(x) for x in h], np.float64)


def flips(clean: SiteScore, steered: SiteScore) -> tuple[int, int]:
    """``(ref -> spoken, spoken -> ref)`` counts over the planted sites both runs scored."""
    before = {(o.clip_id, o.item): o.outcome for o in clean.outcomes}
    r2s = s2r = 0
    for o in steered.outcomes:
        b = before.get((o.clip_id, o.item))
        r2s += b == REF and o.outcome == SPOKEN
        s2r += b == SPOKEN and o.outcome == REF
    return r2s, s2r


def wer_on(hyps: Mapping[str, str], texts: Mapping[str, str]) -> float | None:
    """Corpus WER (Whisper normalization) of ``hyps`` against ``texts`` over shared clip ids; None if none."""

    norm = get_normalizer("whisper")
    errors = words = 0
    for cid, text in texts.items():
        if cid in hyps:
            c = wer_counts(norm(text).split(), norm(hyps[cid]).split())
            errors, words = errors + c.errors, words + c.ref_len
    return errors / words if words else None


def run_steer(
    backend: Any,
    corpus: Corpus,
    store: Store,
    arms: Sequence[Intervention | Arm],
    *,
    items: Sequence[TruthItem] = (),
    wer_texts: Mapping[str, str] | None = None,
    direction: Direction | Sequence[Direction] | None = None,
    mode: str = "",
    batch_size: int = 8,
) -> SteerResult:
    """Transcribe ``corpus`` clean and under each arm (through ``store``), then score every arm.
    An arm is one :class:`Intervention` or an :class:`Arm` of several applied together.

    A gated arm is evaluated per clip in a pre-pass (:func:`gate_scores`: unedited, teacher-forced
    on the prompt alone); a clip it opens for gets the *ungated* arm's decode (through the store,
    under the ungated arm's key, so rows decoded earlier are reused), a closed clip the clean
    decode. Gates at one site and position share one pre-pass."""
    arm_list = [as_arm(a) for a in arms]
    labels = [CLEAN, *(a.label for a in arm_list)]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"arm labels must be unique, got {', '.join(labels)}")
    runners: list[tuple[str, Any, Arm | None]] = [(CLEAN, backend, None)]
    runners += [(a.label, SteeredBackend(backend, a.interventions), a) for a in arm_list]
    hyps: dict[str, dict[str, str]] = {lab: {} for lab in labels}
    failed: dict[str, int] = dict.fromkeys(labels, 0)
    opened: dict[str, set[str]] = {}  # gate key -> ids of the clips it opened for
    clips = corpus.clips
    for start in range(0, len(clips), batch_size):
        sub = Corpus(corpus.name, corpus.split, corpus.source, clips[start : start + batch_size])
        clean_failed: set[str] = set()
        read: dict[tuple[str, int | None], np.ndarray] = {}  # (site, position) -> this batch's gate activations
        for label, runner, arm in runners:  # arms innermost: the batch's encoder states stay memoized
            on = sub
            if arm is not None and arm.gate is not None:
                gate, is_open = arm.gate, opened.setdefault(arm.gate.key, set())
                where = (gate.site, gate.position)
                if where not in read:  # one pre-pass per batch and gate site, shared by every gate there
                    audios = [load_audio(c) for c in sub.clips]
                    read[where] = prompt_activations(backend, audios, [gate.site], gate.position)[gate.site]
                is_open.update(c.id for c, h in zip(sub.clips, read[where]) if gate.opens(h))
                closed = [c.id for c in sub.clips if c.id not in is_open]
                hyps[label].update({cid: hyps[CLEAN][cid] for cid in closed if cid in hyps[CLEAN]})
                failed[label] += sum(cid in clean_failed for cid in closed)
                on = Corpus(sub.name, sub.split, sub.source, tuple(c for c in sub.clips if c.id in is_open))
                if not on.clips:
                    continue
            out = transcribe_corpus(runner, on, store, batch_size=batch_size)
            hyps[label].update({r.clip_id: r.hypothesis for r in out.records})
            failed[label] += len(out.failures)
            if arm is None:
                clean_failed = {f.clip_id for f in out.failures}
    refs = {c.id: c.reference for c in clips}
    scores = {lab: score_sites(items, refs, hyps[lab]) for lab in labels}
    result_arms = []
    for label, _, iv in runners:
        r2s, s2r = flips(scores[CLEAN], scores[label]) if label != CLEAN else (0, 0)
        sc = scores[label]
        result_arms.append(
            SteerArm(
                label,
                _arm_dict(iv) if iv else None,
                sc.accept_ref,
                sc.spoken,
                r2s,
                s2r,
                sc.accept_ref.n,
                wer_on(hyps[label], wer_texts) if wer_texts else None,
                failed[label],
                *((len(opened[iv.gate.key]), len(clips)) if iv is not None and iv.gate is not None else (None, None)),
            )
        )
    return SteerResult(
        backend.identity().to_dict(),
        _direction_dict(direction),
        mode,
        corpus.name,
        tuple(result_arms),
        hyps,
    )
