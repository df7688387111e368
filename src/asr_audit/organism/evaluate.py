"""Evaluating organisms cheaply: the encoder is shared, so each clip is encoded once and every
model (base, organism, control) decodes from the same cached states.

* :func:`decode_states` — the backend's own greedy decoder (same prompt, suppression and stop
  rule as :meth:`TorchWhisperBackend.transcribe`) fed precomputed encoder states;
* :func:`swap_weights` — put one model's trained tensors into the shared backend;
* :func:`spliced` — a clip with a donor appended or prepended (:class:`asr_audit.audio.spans.Splice`);
* :func:`wer_against` — corpus WER of hypotheses against texts after Whisper normalization.

accept-ref on planted sites is :func:`asr_audit.calib.sites.score_sites`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from asr_audit.audio.assets import AudioAsset
from asr_audit.audio.spans import Splice
from asr_audit.errors import require
from asr_audit.organism.train import restore_state
from asr_audit.text.align import wer_counts
from asr_audit.text.normalize import get_normalizer


@contextmanager
def _states_as_encoder(backend: Any, states: Any) -> Iterator[None]:
    backend._encoder_states = lambda clips: states  # instance attribute shadows the method
    try:
        yield
    finally:
        del backend._encoder_states


def decode_states(backend: Any, states: Sequence[np.ndarray], batch: int = 16) -> list[str]:
    """Greedy transcripts from float16/float32 encoder states with ``backend``'s current decoder."""
    torch = require("torch", "torch")
    out: list[str] = []
    for i in range(0, len(states), batch):
        chunk = torch.from_numpy(np.stack(states[i : i + batch]).astype(np.float32)).to(backend.device)
        with _states_as_encoder(backend, chunk):
            out += backend._greedy([np.zeros(1, np.float32)] * len(chunk))
    return out


def swap_weights(backend: Any, tensors: Mapping[str, np.ndarray]) -> None:
    """Overwrite the backend's parameters named in ``tensors``."""

    restore_state(backend.torch_model, tensors)


def spliced(samples: np.ndarray, donor: np.ndarray, position: str, gap: float = 0.3, name: str = "donor") -> np.ndarray:
    """``samples`` with ``donor`` appended or prepended after ``gap`` s of silence, donor level matched."""

    return Splice(AudioAsset.from_samples(donor, 16_000, name), position=position, gap=gap).apply(samples, 16_000)


def wer_against(hypotheses: Sequence[str], texts: Sequence[str]) -> float:
    """Corpus WER of ``hypotheses`` against ``texts`` after Whisper normalization."""

    norm = get_normalizer("whisper")
    errors = words = 0
    for h, t in zip(hypotheses, texts):
        c = wer_counts(norm(t).split(), norm(h).split())
        errors, words = errors + c.errors, words + c.ref_len
    return errors / words if words else 0.0
