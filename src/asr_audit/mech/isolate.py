"""Attention isolation: encode the whole clip, let the decoder's cross-attention see only a frame range.

Whisper's encoder turns 30 s of audio into 1500 frames (20 ms each). :func:`isolate_cross_attention`
adds ``-inf`` to every cross-attention score outside ``[f0, f1)`` in every decoder layer (a forward
pre-hook on each ``decoder.layers.{L}.cross_attn`` site that sets its additive ``attention_mask``), so
the decoder reads only those frames while the encoder states themselves still come from the full
clip (each frame has attended to the whole clip inside the encoder). The softmax over the remaining
keys equals attention over the sliced encoder states; the tests check that equality.

Used by the opening-courtesy case study: does the model still write "thank you" when the decoder can
only listen to the frames of the spoken opener?
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from asr_audit.errors import AuditError, ConfigError, require
from asr_audit.mech.hooks import forward_pre_hooks
from asr_audit.mech.sites import layer_sites

FRAME_SECONDS = 0.02  # one Whisper encoder frame
WHISPER_FRAMES = 1500


def frames_for(t0: float, t1: float, n_frames: int = WHISPER_FRAMES) -> tuple[int, int]:
    """Encoder frames covering ``[t0, t1)`` seconds (outward rounding, clamped, never empty).

    >>> frames_for(0.1, 0.95)
    (5, 48)
    """
    if not (math.isfinite(t0) and math.isfinite(t1)) or t1 <= t0 or t0 < 0:
        raise ConfigError(f"frame range needs 0 <= t0 < t1, got [{t0}, {t1})")
    f0 = min(int(math.floor(t0 / FRAME_SECONDS + 1e-9)), n_frames - 1)
    f1 = min(max(int(math.ceil(t1 / FRAME_SECONDS - 1e-9)), f0 + 1), n_frames)
    return f0, f1


def cross_attention_modules(backend: Any) -> list[Any]:
    """The decoder cross-attention modules of a backend with hook sites."""
    names = layer_sites(backend, "decoder", "cross_attn")
    if not names:
        raise ConfigError(
            f"backend {getattr(backend, 'spec', backend)!r} has no decoder cross-attention sites; "
            "fix: use a PyTorch encoder-decoder backend such as whisper-tiny.en-pt"
        )
    return [backend.site_module(n) for n in names]


def frame_mask(n_batch: int, n_query: int, n_keys: int, frames: tuple[int, int], dtype: Any, device: Any) -> Any:
    """Additive mask ``(batch, 1, queries, keys)``: 0 inside ``frames``, the dtype's minimum outside."""
    torch = require("torch", "torch")
    f0, f1 = frames
    if not 0 <= f0 < f1 <= n_keys:
        raise ConfigError(f"frame range [{f0}, {f1}) is outside the {n_keys} encoder frames")
    mask = torch.full((n_keys,), torch.finfo(dtype).min, dtype=dtype, device=device)
    mask[f0:f1] = 0
    return mask.view(1, 1, 1, n_keys).expand(n_batch, 1, n_query, n_keys)


@contextmanager
def isolate_cross_attention(modules: Sequence[Any], frames: tuple[int, int]) -> Iterator[None]:
    """While active, every cross-attention module in ``modules`` attends only to ``frames``."""

    def hook(module: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        hidden = args[0] if args else kwargs["hidden_states"]
        kv = kwargs.get("key_value_states")
        if kv is None and len(args) > 1:
            kv = args[1]
        if kv is None:
            raise ConfigError("cross-attention was called without encoder states; isolation needs them")
        mask = frame_mask(hidden.shape[0], hidden.shape[1], kv.shape[1], frames, hidden.dtype, hidden.device)
        old = kwargs.get("attention_mask")
        kwargs["attention_mask"] = mask if old is None else old + mask
        return args, kwargs

    with forward_pre_hooks(list(modules), hook, with_kwargs=True):
        yield


def isolated_transcribe(backend: Any, samples: np.ndarray, window: tuple[float, float]) -> str:
    """Greedy transcript of ``samples`` (the full clip is encoded) with the decoder's cross-attention
    restricted to the frames of ``window`` = ``(t0, t1)`` seconds."""
    frames = frames_for(*window)
    with isolate_cross_attention(cross_attention_modules(backend), frames):
        return backend.transcribe([samples])[0]


def isolated_rows(
    backend: Any, audios: Sequence[Any], windows: Sequence[tuple[float, float]]
) -> list[tuple[str | None, str | None]]:
    """The attn-isolated decode of each clip (:func:`isolated_transcribe`: the
    whole clip encoded, the decoder's cross-attention restricted to the window): per clip
    ``(text, None)``, or ``(None, error)`` where it fails. The one computation of the courtesy study's
    attn-isolated arm: a local model handle and a Ray worker both run it."""

    out: list[tuple[str | None, str | None]] = []
    for x, w in zip(audios, windows):
        try:
            out.append((isolated_transcribe(backend, x, w), None))
        except AuditError as exc:
            out.append((None, str(exc)))
    return out
