"""Steering: run a backend under interventions, with the controls built in, and score each arm.

* :class:`SteeredBackend` wraps a PyTorch backend so that every ``transcribe`` / ``score`` call
  runs under its interventions; its identity carries the interventions' keys (site, direction
  hash, alpha, k, frames), so the store caches its rows apart from the clean run's and any
  probe that takes a backend (refdis prediction files, masked, the battery, switch rate) runs
  under an intervention unchanged.
* :func:`control_arms` builds the paper's arms from one direction: the intervention itself,
  random directions of the same norm (several seeds), a norm-matched shuffled direction; the
  clean run is always arm ``clean``.
* :func:`run_steer` transcribes a corpus under every arm through the store, batch by batch with
  the arms innermost, so a decoder-side intervention reuses each batch's encoder states (the
  backend's encoder memo) instead of re-encoding per arm, and scores accept-ref on planted sites
  (:func:`asr_audit.calib.sites.score_sites`, Wilson 95%), the **flips** against the clean run
  (ref -> spoken, spoken -> ref, per planted site) and the WER against faithful texts (the
  side-effect check).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asr_audit.calib.sites import REF, SPOKEN, SiteScore, score_sites
from asr_audit.calib.truth import TruthItem
from asr_audit.corpus.clips import Corpus
from asr_audit.errors import ConfigError
from asr_audit.mech.directions import Direction, random_direction, shuffled_direction
from asr_audit.mech.interventions import Intervention, intervene
from asr_audit.models.base import BackendIdentity
from asr_audit.stats.intervals import Rate
from asr_audit.store.sqlite import Store
from asr_audit.store.transcribe import transcribe_corpus

MODES = ("ablate", "induce")
CLEAN = "clean"


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
    direction: Direction,
    mode: str,
    *,
    sites: Sequence[str] | None = None,
    alpha: float = 1.0,
    k: int = 1,
    n_random: int = 3,
    seed: int = 0,
    frames: tuple[int, int] | None = None,
) -> list[Intervention]:
    """The intervention (label ``ablate`` / ``induce``), ``random-<i>`` for ``n_random`` seeded random
    directions of the same norm (rank ``k`` for ablation) and ``shuffled`` (coordinates permuted)."""
    if mode not in MODES:
        raise ConfigError(f"unknown steering mode {mode!r}; valid: {', '.join(MODES)}")
    sites = tuple(sites or (direction.site,))
    vec = np.asarray(direction.vector, np.float64)
    rng = np.random.default_rng(seed)
    if mode == "ablate":
        arms = [Intervention.ablation(sites, direction.rank(k).basis, frames=frames, label=f"ablate-k{k}")]
        for i in range(n_random):
            arms.append(
                Intervention.ablation(sites, _random_basis(len(vec), k, rng), frames=frames, label=f"random-{i}")
            )
        arms.append(Intervention.ablation(sites, shuffled_direction(vec, rng), frames=frames, label="shuffled"))
        return arms
    arms = [Intervention.induction(sites, vec, alpha, frames=frames, label=f"induce-a{alpha:g}")]
    for i in range(n_random):
        arms.append(
            Intervention.induction(
                sites, random_direction(len(vec), direction.norm, rng), alpha, frames=frames, label=f"random-{i}"
            )
        )
    arms.append(Intervention.induction(sites, shuffled_direction(vec, rng), alpha, frames=frames, label="shuffled"))
    return arms


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

    def to_dict(self) -> dict[str, Any]:
        return {
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": dict(self.model),
            "direction": dict(self.direction),
            "mode": self.mode,
            "corpus": self.corpus,
            "effect_share": self.effect_share(),
            "arms": [a.to_dict() for a in self.arms],
        }


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
    from asr_audit.text.align import wer_counts
    from asr_audit.text.normalize import get_normalizer

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
    arms: Sequence[Intervention],
    *,
    items: Sequence[TruthItem] = (),
    wer_texts: Mapping[str, str] | None = None,
    direction: Direction | None = None,
    mode: str = "",
    batch_size: int = 8,
) -> SteerResult:
    """Transcribe ``corpus`` clean and under each arm (through ``store``), then score every arm."""
    labels = [CLEAN, *(a.label for a in arms)]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"arm labels must be unique, got {', '.join(labels)}")
    runners: list[tuple[str, Any, Intervention | None]] = [(CLEAN, backend, None)]
    runners += [(a.label, SteeredBackend(backend, [a]), a) for a in arms]
    hyps: dict[str, dict[str, str]] = {lab: {} for lab in labels}
    failed: dict[str, int] = dict.fromkeys(labels, 0)
    clips = corpus.clips
    for start in range(0, len(clips), batch_size):
        sub = Corpus(corpus.name, corpus.split, corpus.source, clips[start : start + batch_size])
        for label, runner, _ in runners:  # arms innermost: the batch's encoder states stay memoized
            out = transcribe_corpus(runner, sub, store, batch_size=batch_size)
            hyps[label].update({r.clip_id: r.hypothesis for r in out.records})
            failed[label] += len(out.failures)
    refs = {c.id: c.reference for c in clips}
    scores = {lab: score_sites(items, refs, hyps[lab]) for lab in labels}
    result_arms = []
    for label, _, iv in runners:
        r2s, s2r = flips(scores[CLEAN], scores[label]) if label != CLEAN else (0, 0)
        sc = scores[label]
        result_arms.append(
            SteerArm(
                label,
                iv.to_dict() if iv else None,
                sc.accept_ref,
                sc.spoken,
                r2s,
                s2r,
                sc.accept_ref.n,
                wer_on(hyps[label], wer_texts) if wer_texts else None,
                failed[label],
            )
        )
    return SteerResult(
        backend.identity().to_dict(),
        direction.to_dict() if direction else {},
        mode,
        corpus.name,
        tuple(result_arms),
        hyps,
    )
