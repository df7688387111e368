"""Decoder fine-tuning of PyTorch Whisper on cached encoder states.

The encoder is frozen, so its output for a clip is computed once and cached on disk as float16
(``<cache>/organism/encoder/<base weights hash>/<audio sha256>.npy``, ~1.1 MiB per clip for
tiny.en). Training then only runs the decoder.

Trained (:data:`TRAINABLE`): decoder self-attention, cross-attention query/output projections,
feed-forward layers and every decoder LayerNorm (8.28 M parameters of tiny.en). Frozen: the
encoder, token and positional embeddings (tied to the output projection) and the cross-attention
key/value projections (so cached keys stay meaningful).

Recipe (:class:`TrainConfig`): AdamW (weight decay 0), linear warmup over 5% of the steps then
linear decay to 0, gradient norm clipped at 1.0, batch 16, float32, dropout off (the model stays
in eval mode). Prompt ``<|startoftranscript|><|notimestamps|>`` (the backend's decode prompt);
the loss is the mean cross-entropy over the target tokens and the end-of-text token. Batches
come from a ``numpy`` Generator seeded by ``seed`` (epoch-wise permutations); no global random
state is touched, so the same seed gives the same losses bit for bit on one machine.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.audio.io import to_mono_16k
from asr_audit.errors import AuditError, ConfigError, InputFileError, require
from asr_audit.paths import cache_dir

TRAINABLE = re.compile(
    r"^model\.decoder\.(layers\.\d+\.(self_attn\.|self_attn_layer_norm\.|encoder_attn\.(q_proj|out_proj)\.|"
    r"encoder_attn_layer_norm\.|fc1\.|fc2\.|final_layer_norm\.)|layer_norm\.)"
)
ProgressFn = Callable[[int, int, float], None]


def trainable_names(model: Any) -> list[str]:
    """Names of the parameters the recipe trains (see the module docstring)."""
    return [n for n, _ in model.named_parameters() if TRAINABLE.match(n)]


@dataclass(frozen=True, slots=True)
class TrainConfig:
    steps: int = 200
    lr: float = 1e-4
    batch_size: int = 16
    warmup: float = 0.05
    clip_norm: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.steps, int) or self.steps < 1:
            raise ConfigError(f"--steps {self.steps!r} must be an integer >= 1")
        if not self.lr > 0:
            raise ConfigError(f"learning rate {self.lr!r} must be > 0")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError(f"batch size {self.batch_size!r} must be an integer >= 1")
        if not 0 <= self.warmup < 1:
            raise ConfigError(f"warmup share {self.warmup!r} must be in [0, 1)")

    def to_dict(self) -> dict[str, object]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    def lr_at(self, step: int) -> float:
        """Learning rate of (0-based) ``step``: linear warmup, then linear decay to 0."""
        warm = max(1, round(self.steps * self.warmup))
        if step < warm:
            return self.lr * (step + 1) / warm
        return self.lr * max(0.0, (self.steps - step) / max(1, self.steps - warm))


# --------------------------------------------------------------------------- encoder cache


def read_wav(path: Path) -> np.ndarray:
    """A 16 kHz mono float32 waveform from ``path`` (resampled / downmixed if needed)."""

    sf = require("soundfile", "audio")
    try:
        samples, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # noqa: BLE001 - soundfile raises several types for unreadable files
        raise InputFileError(path, f"unreadable audio ({type(exc).__name__})", "rebuild the organism set") from None
    if samples.size == 0:
        raise InputFileError(path, "empty audio", "rebuild the organism set")
    return to_mono_16k(samples, int(sr))


def encoder_states(backend: Any, clips: Sequence[np.ndarray], batch: int = 8) -> list[np.ndarray]:
    """Float16 encoder states (frames x width) of in-memory 16 kHz waveforms."""
    torch = require("torch", "torch")
    out: list[np.ndarray] = []
    for i in range(0, len(clips), batch):
        with torch.inference_mode():
            out += list(backend._encoder_states(list(clips[i : i + batch])).to("cpu", torch.float16).numpy())
    return out


def _audio_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


class EncoderCache:
    """Encoder states of one base model, float16 on disk, one ``.npy`` per audio file content."""

    def __init__(self, backend: Any, root: Path | None = None) -> None:
        self.backend = backend
        self.root = (root or cache_dir() / "organism" / "encoder") / backend.identity().weights_hash
        self._sha: dict[Path, str] = {}

    def path(self, audio: Path) -> Path:
        sha = self._sha.get(audio) or self._sha.setdefault(audio, _audio_sha(audio))
        return self.root / sha[:2] / f"{sha}.npy"

    def ensure(
        self, audios: Sequence[Path], batch: int = 8, progress: Callable[[int, int], None] | None = None
    ) -> list[tuple[Path, str]]:
        """Encode every audio not cached yet; returns ``(audio, problem)`` for files that failed."""
        todo = [a for a in dict.fromkeys(audios) if not self.path(a).is_file()]
        failed: list[tuple[Path, str]] = []
        for i in range(0, len(todo), batch):
            chunk, clips = [], []
            for a in todo[i : i + batch]:
                try:
                    clips.append(read_wav(a))
                    chunk.append(a)
                except AuditError as exc:
                    failed.append((a, str(exc)))
            if clips:
                for a, s in zip(chunk, encoder_states(self.backend, clips, batch)):
                    out = self.path(a)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    tmp = out.with_name(f"{out.stem}.{os.getpid()}.tmp.npy")
                    np.save(tmp, s, allow_pickle=False)
                    os.replace(tmp, out)
            if progress:
                progress(min(i + batch, len(todo)), len(todo))
        return failed

    def load(self, audio: Path) -> np.ndarray:
        return np.load(self.path(audio), allow_pickle=False)


# --------------------------------------------------------------------------- training


@dataclass(frozen=True, slots=True)
class TrainResult:
    losses: tuple[float, ...]
    seconds: float
    tensors: Mapping[str, np.ndarray]  # trained parameters (float32), name -> value
    n_params: int
    config: TrainConfig


def encode_targets(backend: Any, targets: Sequence[str]) -> list[list[int]]:
    """Token ids of each target text, as the backend tokenizes a transcript (leading space)."""
    return [backend._encode_text(t) for t in targets]


def _batch_tensors(prompt: list[int], eot: int, targets: Sequence[list[int]]) -> tuple[Any, Any]:
    torch = require("torch", "torch")
    seqs = [prompt + t + [eot] for t in targets]
    width = max(len(s) for s in seqs) - 1
    ids = torch.full((len(seqs), width), eot, dtype=torch.long)
    labels = torch.full((len(seqs), width), -100, dtype=torch.long)
    for b, s in enumerate(seqs):
        ids[b, : len(s) - 1] = torch.tensor(s[:-1])
        lab = torch.tensor(s[1:])
        lab[: len(prompt) - 1] = -100
        labels[b, : len(s) - 1] = lab
    return ids, labels


def train_decoder(
    backend: Any,
    states: Sequence[np.ndarray],
    targets: Sequence[str],
    config: TrainConfig,
    progress: ProgressFn | None = None,
) -> TrainResult:
    """Fine-tune ``backend.torch_model``'s decoder in place on (encoder state, target text) pairs."""
    torch = require("torch", "torch")
    if len(states) != len(targets) or not targets:
        raise ConfigError(
            f"training needs one target per clip and at least one clip (got {len(states)} states, "
            f"{len(targets)} targets)"
        )
    model = backend.torch_model
    names = set(trainable_names(model))
    params = []
    for n, p in model.named_parameters():
        p.requires_grad_(n in names)
        if n in names:
            params.append(p)
    model.eval()  # dropout off: deterministic steps
    tokens = encode_targets(backend, targets)
    too_long = [i for i, t in enumerate(tokens) if len(t) + len(backend.prompt) + 1 > backend.max_positions]
    if too_long:
        raise ConfigError(
            f"{len(too_long)} target(s) exceed {backend.max_positions} tokens (first: #{too_long[0]}); "
            "fix: shorten the clips"
        )
    opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.0)
    rng = np.random.default_rng(config.seed)
    order: list[int] = []
    losses: list[float] = []
    t0 = time.perf_counter()
    for step in range(config.steps):
        if len(order) < config.batch_size:
            order += [int(i) for i in rng.permutation(len(targets))]
        idx, order = order[: config.batch_size], order[config.batch_size :]
        enc = torch.from_numpy(np.stack([states[i] for i in idx]).astype(np.float32))
        ids, labels = _batch_tensors(list(backend.prompt), backend.eot, [tokens[i] for i in idx])
        for g in opt.param_groups:
            g["lr"] = config.lr_at(step)
        logits = model(encoder_outputs=(enc,), decoder_input_ids=ids).logits
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, config.clip_norm)
        opt.step()
        losses.append(float(loss.detach()))
        if progress:
            progress(step + 1, config.steps, losses[-1])
    for p in model.parameters():
        p.requires_grad_(False)
    tensors = {n: p.detach().to("cpu", torch.float32).numpy().copy() for n, p in model.named_parameters() if n in names}
    return TrainResult(tuple(losses), time.perf_counter() - t0, tensors, sum(v.size for v in tensors.values()), config)


def load_states(cache: EncoderCache, audios: Sequence[Path]) -> list[np.ndarray]:
    """Cached encoder states of ``audios`` (call :meth:`EncoderCache.ensure` first)."""
    missing = [a for a in audios if not cache.path(a).is_file()]
    if missing:
        raise ConfigError(
            f"{len(missing)} clip(s) have no cached encoder state (first: {missing[0]}); "
            "fix: run EncoderCache.ensure on them"
        )
    return [cache.load(a) for a in audios]


def model_state(model: Any, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """A float32 copy of ``model``'s parameters (only ``names`` when given)."""
    keep = None if names is None else set(names)
    return {
        n: p.detach().to("cpu").float().numpy().copy() for n, p in model.named_parameters() if keep is None or n in keep
    }


def restore_state(model: Any, state: Mapping[str, np.ndarray]) -> None:
    """Write ``state`` (name -> array) back into ``model``'s parameters."""
    torch = require("torch", "torch")
    params = dict(model.named_parameters())
    with torch.no_grad():
        for n, v in state.items():
            params[n].copy_(torch.from_numpy(np.asarray(v)).to(params[n].dtype))


__all__ = [
    "TRAINABLE",
    "EncoderCache",
    "TrainConfig",
    "TrainResult",
    "encode_targets",
    "encoder_states",
    "load_states",
    "model_state",
    "read_wav",
    "restore_state",
    "train_decoder",
    "trainable_names",
]
