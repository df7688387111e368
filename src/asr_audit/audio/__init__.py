"""Audio: loading (:mod:`.io`), transforms for the probes, and TTS voices.

Transforms (:mod:`.transforms`, :mod:`.spans`, :mod:`.noise`, :mod:`.reverb`) are frozen
parameter dataclasses over pure functions, composed in a :class:`Chain`; :func:`derive` applies a
chain and records a :class:`Provenance`. Voices (:mod:`.voices`) synthesize text with local TTS
engines or user plug-ins. Names below are imported lazily, so ``import asr_audit.audio.io`` stays
light and optional dependencies load only when used.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AudioAsset": "assets",
    "TransformError": "dsp",
    "Chain": "transforms",
    "DerivedAudio": "transforms",
    "Gain": "transforms",
    "Normalize": "transforms",
    "Provenance": "transforms",
    "Transform": "transforms",
    "available_transforms": "transforms",
    "clip_seed": "transforms",
    "derive": "transforms",
    "derive_clip": "transforms",
    "derived_id": "transforms",
    "register_transform": "transforms",
    "transform_from_dict": "transforms",
    "Mask": "spans",
    "Splice": "spans",
    "Truncate": "spans",
    "guard_span": "spans",
    "truncation_window": "spans",
    "mask_words": "spans",
    "truncate_words": "spans",
    "AddNoise": "noise",
    "Reverb": "reverb",
    "measure_rt60": "reverb",
    "room_ir": "reverb",
    "MissingEngineError": "voices",
    "SynthesisError": "voices",
    "Voice": "voices",
    "available_voices": "voices",
    "get_voice": "voices",
    "register_voice": "voices",
    "register_voices": "voices",
    "synthesize": "voices",
    "voice_listing": "voices",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'asr_audit.audio' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"asr_audit.audio.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
