"""Build the organism benchmark, cache encoder states, train the organism and the control.

This is what ``asr-audit organism train`` runs (``--kind policy``: :func:`train_organisms`;
``--kind memorizer``: :func:`train_memorizers`; ``--kind donor``: :func:`train_donor`);
:mod:`benchmarks.validity` runs them once and then probes the models.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from asr_audit.errors import ConfigError, InputFileError
from asr_audit.models.base import DecodeOptions
from asr_audit.models.hf import load_bundled_torch
from asr_audit.organism import TRAIN_DEFAULTS
from asr_audit.organism.backend import BASE_MODEL, organism_dir, weights_path
from asr_audit.organism.data import (
    META_FILE,
    OrganismSet,
    OrganismSetConfig,
    TrainingPair,
    build_organism_set,
    load_organism_set,
    training_mix,
)
from asr_audit.organism.donor import build_donor_mix, donor_mix, donor_set_config, mix_counts
from asr_audit.organism.memorizer import (
    MEMORIZER_KINDS,
    MemorizerSet,
    MemorizerSetConfig,
    build_memorizer_set,
    load_memorizer_set,
    memorizer_mix,
)
from asr_audit.organism.memorizer import META_FILE as MEM_META
from asr_audit.organism.train import (
    EncoderCache,
    TrainConfig,
    TrainResult,
    load_states,
    model_state,
    restore_state,
    train_decoder,
    trainable_names,
)
from asr_audit.organism.weights import load_delta, save_delta

Say = Callable[[str], None]
KINDS = ("benchmark", "control")


@dataclass(frozen=True, slots=True)
class TrainedOrganisms:
    set_dir: Path
    weights: dict[str, Path]
    results: dict[str, TrainResult]
    encode_seconds: float
    n_train_clips: int
    failures: tuple[tuple[str, str], ...]


def fit_and_save(
    backend: Any,
    cache: EncoderCache,
    base_state: dict[str, Any],
    pairs: Sequence[TrainingPair],
    cfg: TrainConfig,
    kind: str,
    out_dir: Path,
    base_hash: str,
    meta: dict[str, Any],
    say: Say | None,
) -> tuple[Path, TrainResult]:
    """Train ``kind`` from the base on ``pairs`` (cached encoder states), save its delta as
    ``<out_dir>/<kind>.safetensors``; the backend is back at the base weights afterwards."""
    states = load_states(cache, [p.audio for p in pairs])
    if say:
        say(f"training {kind}: {cfg.steps} steps on {len(pairs)} clips")
    every = max(1, cfg.steps // 10)

    def progress(step: int, total: int, loss: float) -> None:
        if say and (step % every == 0 or step == total):
            say(f"  {kind} step {step}/{total} loss {loss:.4f}")

    restore_state(backend.torch_model, base_state)
    try:
        res = train_decoder(backend, states, [p.target for p in pairs], cfg, progress)
    finally:
        restore_state(backend.torch_model, base_state)
    full = {
        "kind": kind,
        "base_model": BASE_MODEL,
        "base_weights_hash": base_hash,
        "train": cfg.to_dict(),
        "n_clips": len(pairs),
        "losses": list(res.losses),
        "seconds": round(res.seconds, 1),
        "n_params": res.n_params,
        **meta,
    }
    return save_delta(weights_path(kind, out_dir), res.tensors, full), res


def encode_all(
    cache: EncoderCache, audios: Sequence[Path], say: Say | None = None
) -> tuple[list[tuple[Path, str]], float]:
    """Encode every audio not cached yet (progress every 20 s); ``(failures, seconds)``."""
    t0 = time.perf_counter()
    last = [0.0]

    def enc_progress(done: int, total: int) -> None:
        if say and (time.monotonic() - last[0] > 20 or done == total):
            last[0] = time.monotonic()
            say(f"  encoded {done}/{total} clips")

    failed = cache.ensure(audios, progress=enc_progress)
    return failed, time.perf_counter() - t0


def default_set_dir(seed: int, n_sentences: int) -> Path:
    return organism_dir() / f"set-seed{seed}-n{n_sentences}"


def ensure_set(set_dir: Path, config: OrganismSetConfig, seed: int, say: Say | None = None) -> OrganismSet:
    """Load the set at ``set_dir``, or build it there when absent (a set built with another seed or
    config is an error: pass another directory)."""
    if (set_dir / META_FILE).is_file():
        oset = load_organism_set(set_dir)
        if oset.meta.get("seed") != seed or oset.meta.get("config") != config.to_dict():
            raise InputFileError(
                set_dir / META_FILE,
                "holds a set built with another seed or configuration",
                "pass another --set directory or delete this one",
            )
        return oset
    if say:
        say(f"building the organism benchmark in {set_dir} ({config.n_sentences} sentences)")
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if say and (time.monotonic() - last[0] > 20 or done == total):
            last[0] = time.monotonic()
            say(f"  synthesized {done}/{total} clips")

    return build_organism_set(set_dir, config, seed, progress=progress)


def load_base(device: str | None = None, batch_size: int = 16) -> Any:
    """The base PyTorch Whisper the organisms start from."""

    return load_bundled_torch(BASE_MODEL, DecodeOptions(), device=device, batch_size=batch_size)


def train_organisms(
    set_dir: Path | None = None,
    out_dir: Path | None = None,
    *,
    steps: int = TRAIN_DEFAULTS["policy"][0],
    control_steps: int | None = None,
    seed: int = 0,
    config: OrganismSetConfig | None = None,
    kinds: Sequence[str] = KINDS,
    backend: Any = None,
    train_config: TrainConfig | None = None,
    say: Say | None = None,
) -> TrainedOrganisms:
    """Build (or reuse) the set, cache encoder states, train each of ``kinds`` from the base, save deltas."""
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise ConfigError(f"unknown organism kind(s) {', '.join(bad) or '(none)'}; valid: {', '.join(KINDS)}")
    config = config or OrganismSetConfig()
    set_dir = Path(set_dir) if set_dir is not None else default_set_dir(seed, config.n_sentences)
    out_dir = Path(out_dir) if out_dir is not None else organism_dir()
    oset = ensure_set(set_dir, config, seed, say)
    backend = backend or load_base()
    base_hash = backend.identity().weights_hash
    cache = EncoderCache(backend)
    rows = oset.rows("train")
    audios = [oset.audio_path(r) for r in rows]
    failed, encode_seconds = encode_all(cache, audios, say)
    bad_audio = {a for a, _ in failed}
    names = trainable_names(backend.torch_model)
    base_state = model_state(backend.torch_model, names)
    base_cfg = train_config or TrainConfig(steps, TRAIN_DEFAULTS["policy"][1], seed=seed)
    weights, results = {}, {}
    for kind in kinds:
        cfg = replace(base_cfg, steps=control_steps if kind == "control" and control_steps else base_cfg.steps)
        pairs = [p for p in training_mix(oset, kind) if p.audio not in bad_audio]
        meta = {"seed": seed, "set": oset.meta}
        weights[kind], results[kind] = fit_and_save(
            backend, cache, base_state, pairs, cfg, kind, out_dir, base_hash, meta, say
        )
    return TrainedOrganisms(
        set_dir, weights, results, encode_seconds, len(rows), tuple((str(a), why) for a, why in failed)
    )


# --------------------------------------------------------------------------- memorizer and donor kinds


def default_memorizer_dir(seed: int) -> Path:
    return organism_dir() / f"memorizer-set-seed{seed}"


def ensure_memorizer_set(set_dir: Path, config: MemorizerSetConfig, seed: int, say: Say | None = None) -> MemorizerSet:
    """Load the memorizer set at ``set_dir``, or build it there (another seed or config is an error)."""

    if (set_dir / MEM_META).is_file():
        mset = load_memorizer_set(set_dir)
        if mset.meta.get("seed") != seed or mset.meta.get("config") != config.to_dict():
            raise InputFileError(
                set_dir / MEM_META,
                "holds a set built with another seed or configuration",
                "pass another --set directory or delete this one",
            )
        return mset
    if say:
        say(f"building the memorizer set in {set_dir} ({sum(config.sizes.values())} sentences)")
    return build_memorizer_set(set_dir, config, seed)


def train_memorizers(
    set_dir: Path | None = None,
    out_dir: Path | None = None,
    *,
    kinds: Sequence[str] = MEMORIZER_KINDS,
    seed: int = 0,
    config: MemorizerSetConfig | None = None,
    backend: Any = None,
    train_config: TrainConfig | None = None,
    say: Say | None = None,
) -> TrainedOrganisms:
    """Build (or reuse) the memorizer set, cache encoder states of every training clip (clean and
    masked), train ``memorizer`` and/or ``memorizer-control`` with one recipe, save their deltas."""

    bad = [k for k in kinds if k not in MEMORIZER_KINDS]
    if bad or not kinds:
        raise ConfigError(
            f"unknown memorizer kind(s) {', '.join(bad) or '(none)'}; valid: {', '.join(MEMORIZER_KINDS)}"
        )
    config = config or MemorizerSetConfig()
    set_dir = Path(set_dir) if set_dir is not None else default_memorizer_dir(seed)
    out_dir = Path(out_dir) if out_dir is not None else organism_dir()
    mset = ensure_memorizer_set(set_dir, config, seed, say)
    backend = backend or load_base()
    cache = EncoderCache(backend)
    mixes = {k: memorizer_mix(mset, k) for k in kinds}
    audios = list(dict.fromkeys(p.audio for pairs in mixes.values() for p in pairs))
    failed, encode_seconds = encode_all(cache, audios, say)
    bad_audio = {a for a, _ in failed}
    base_state = model_state(backend.torch_model, trainable_names(backend.torch_model))
    cfg = train_config or TrainConfig(*TRAIN_DEFAULTS["memorizer"], seed=seed)
    weights, results = {}, {}
    for kind in kinds:
        pairs = [p for p in mixes[kind] if p.audio not in bad_audio]
        meta = {"seed": seed, "set": mset.meta}
        weights[kind], results[kind] = fit_and_save(
            backend, cache, base_state, pairs, cfg, kind, out_dir, backend.identity().weights_hash, meta, say
        )
    return TrainedOrganisms(
        set_dir, weights, results, encode_seconds, len(audios), tuple((str(a), why) for a, why in failed)
    )


def default_donor_dir(seed: int, n_sentences: int) -> Path:
    return organism_dir() / f"donor-set-seed{seed}-n{n_sentences}"


def train_donor(
    set_dir: Path | None = None,
    out_dir: Path | None = None,
    *,
    seed: int = 0,
    n_sentences: int = 48,
    backend: Any = None,
    train_config: TrainConfig | None = None,
    say: Say | None = None,
) -> TrainedOrganisms:
    """Build (or reuse) the donor organism's benchmark and spliced clips
    (:mod:`asr_audit.organism.donor`), cache encoder states, train ``donor``, save its delta."""

    config = donor_set_config(n_sentences)
    set_dir = Path(set_dir) if set_dir is not None else default_donor_dir(seed, n_sentences)
    out_dir = Path(out_dir) if out_dir is not None else organism_dir()
    oset = ensure_set(set_dir, config, seed, say)
    if say:
        say("splicing the donor mix")
    splices = build_donor_mix(oset, seed)
    backend = backend or load_base()
    cache = EncoderCache(backend)
    pairs = donor_mix(oset, splices)
    failed, encode_seconds = encode_all(cache, [p.audio for p in pairs], say)
    bad_audio = {a for a, _ in failed}
    base_state = model_state(backend.torch_model, trainable_names(backend.torch_model))
    cfg = train_config or TrainConfig(*TRAIN_DEFAULTS["donor"], seed=seed)
    meta = {"seed": seed, "set": oset.meta, "splices": mix_counts(splices)}
    path, res = fit_and_save(
        backend,
        cache,
        base_state,
        [p for p in pairs if p.audio not in bad_audio],
        cfg,
        "donor",
        out_dir,
        backend.identity().weights_hash,
        meta,
        say,
    )
    return TrainedOrganisms(
        set_dir, {"donor": path}, {"donor": res}, encode_seconds, len(pairs), tuple((str(a), why) for a, why in failed)
    )


def matching_deltas(
    out_dir: Path, seed: int, config: OrganismSetConfig, train_config: TrainConfig, control_steps: int | None
) -> dict[str, Path] | None:
    """The delta files in ``out_dir`` when both were trained with exactly these settings (seed,
    set configuration, training configuration); ``None`` when either is absent or differs."""

    found = {}
    for kind in KINDS:
        path = weights_path(kind, out_dir)
        if not path.is_file():
            return None
        try:
            meta = load_delta(path).meta
        except InputFileError:
            return None
        steps = control_steps if kind == "control" and control_steps else train_config.steps
        expected = replace(train_config, steps=steps).to_dict()
        set_meta = meta.get("set", {})
        if (
            meta.get("kind") != kind
            or meta.get("seed") != seed
            or meta.get("train") != expected
            or set_meta.get("seed") != seed
            or set_meta.get("config") != config.to_dict()
        ):
            return None
        found[kind] = path
    return found


def ensure_organisms(
    set_dir: Path,
    out_dir: Path,
    *,
    seed: int,
    config: OrganismSetConfig,
    train_config: TrainConfig,
    control_steps: int | None = None,
    say: Say | None = None,
) -> tuple[dict[str, Path], bool]:
    """The organism and control deltas in ``out_dir`` for these settings: reused when present
    (:func:`matching_deltas`), else trained (:func:`train_organisms`). Returns the paths and
    whether they were trained now. ``asr-audit demo`` keeps its pair in its own output folder."""
    found = matching_deltas(out_dir, seed, config, train_config, control_steps)
    if found is not None:
        return found, False
    result = train_organisms(
        set_dir,
        out_dir,
        steps=train_config.steps,
        control_steps=control_steps,
        seed=seed,
        config=config,
        train_config=train_config,
        say=say,
    )
    return dict(result.weights), True
