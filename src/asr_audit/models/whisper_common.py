"""Pieces shared by the CTranslate2 and PyTorch Whisper backends: prompts, input checks, device."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np

from asr_audit.errors import BackendError, ConfigError
from asr_audit.models.base import SAMPLE_RATE, DecodeOptions

DEVICE_ENV = "ASR_AUDIT_DEVICE"
WHISPER_MAX_SECONDS = 30.0
WHISPER_MAX_NEW_TOKENS = 224  # half of the 448 decoder positions (OpenAI sample_len, CTranslate2 cap)


def resolve_device(device: str | None, cuda_available: Callable[[], bool]) -> str:
    """``cpu`` or ``cuda`` from an explicit choice, ``$ASR_AUDIT_DEVICE``, or ``auto``."""
    choice = (device or os.environ.get(DEVICE_ENV) or "auto").strip().lower()
    if choice == "auto":
        return "cuda" if cuda_available() else "cpu"
    if choice.split(":")[0] not in ("cpu", "cuda"):
        raise ConfigError(f"device {choice!r} is unknown; fix: use cpu, cuda, cuda:N or auto (set via {DEVICE_ENV})")
    if choice.startswith("cuda") and not cuda_available():
        raise ConfigError(f"device {choice!r} requested but no CUDA device is available; fix: use cpu")
    return choice


def check_audios(spec: str, audios: Sequence[np.ndarray], max_seconds: float | None) -> list[np.ndarray]:
    """Validate a batch of 16 kHz mono waveforms; return them as float32 1-D arrays."""
    out = []
    for i, audio in enumerate(audios):
        arr = np.asarray(audio, dtype=np.float32)
        if arr.ndim != 1:
            raise BackendError(
                f"{spec}: input {i} has shape {arr.shape}, expected mono 1-D samples; fix: downmix to mono"
            )
        if arr.size == 0:
            raise BackendError(f"{spec}: input {i} is empty; fix: drop empty clips")
        if not np.all(np.isfinite(arr)):
            raise BackendError(f"{spec}: input {i} contains NaN or infinite samples; fix: repair the audio file")
        if max_seconds is not None and arr.size > max_seconds * SAMPLE_RATE + 1:
            raise BackendError(
                f"{spec}: input {i} lasts {arr.size / SAMPLE_RATE:.2f} s, longer than the {max_seconds:g} s this model "
                "accepts; fix: cut the clip or use a long-form pipeline"
            )
        out.append(arr)
    return out


def prompt_ids(
    spec: str,
    token_id: Callable[[str], int | None],
    multilingual: bool,
    options: DecodeOptions,
    language: str | None = None,
) -> list[int]:
    """``<|startoftranscript|>`` [+ ``<|lang|>`` + ``<|task|>``] + ``<|notimestamps|>`` as ids.

    English-only models take no language or task token; asking them for another language or
    for translation is an error rather than a silent change of meaning.
    """

    def need(token: str) -> int:
        tid = token_id(token)
        if tid is None:
            raise BackendError(f"{spec}: tokenizer lacks {token}; fix: use the model's own tokenizer.json")
        return tid

    ids = [need("<|startoftranscript|>")]
    lang = language or options.language
    if multilingual:
        if lang is None:
            raise ConfigError(f"{spec}: language detection is not supported here; fix: set decode option language")
        if token_id(f"<|{lang}|>") is None:
            raise ConfigError(f"{spec}: language {lang!r} is not a Whisper language code; fix: use e.g. en, de, fr")
        ids += [need(f"<|{lang}|>"), need(f"<|{options.task}|>")]
    else:
        if lang not in (None, "en"):
            raise ConfigError(f"{spec} is English-only; fix: use language=en or a multilingual model")
        if options.task != "transcribe":
            raise ConfigError(f"{spec} is English-only and cannot {options.task}; fix: use a multilingual model")
    return ids + [need("<|notimestamps|>")]


def batches(n: int, size: int) -> list[range]:
    """Consecutive index ranges of at most ``size``."""
    return [range(i, min(i + size, n)) for i in range(0, n, max(1, size))]


def length_sorted_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """Indices grouped into batches of at most ``size``, longest first (ties in input order).

    Clips of similar length share a batch, so little padding is computed (CTC models) and a
    batch's decoding stops soon after its rows do (Whisper). Callers put each result back at
    its index, so the output order is the input order.

    >>> length_sorted_batches([3, 9, 1, 9, 5], 2)
    [[1, 3], [4, 0], [2]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    step = max(1, size)
    return [order[i : i + step] for i in range(0, len(order), step)]


def device_code(device: str) -> dict[str, str]:
    """The identity's ``device`` code entry: the device kind when it is not the CPU, else none.

    >>> device_code("cuda:1"), device_code("cpu")
    ({'device': 'cuda'}, {})
    """
    kind = device.split(":")[0]
    return {} if kind == "cpu" else {"device": kind}
