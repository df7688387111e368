"""Compact organism weights: only the tensors training changed, as float32 safetensors.

A delta file holds the trained parameters (the decoder subset of
:data:`asr_audit.organism.train.TRAINABLE`, ~33 MB for tiny.en instead of 151 MB) and metadata:
the organism kind, the base model's spec and weights hash, the training config and seed, and
the loss curve. Loading checks that the base weights hash matches before applying, so a delta
is never applied to another base model. The organism backend's weights hash is
``sha256(base hash + delta file hash)``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import BackendError, InputFileError, require

FORMAT = "asr-audit-organism-delta"


@dataclass(frozen=True, slots=True)
class Delta:
    """Trained tensors (name -> float32 array) and their metadata."""

    tensors: Mapping[str, np.ndarray]
    meta: Mapping[str, Any]

    @property
    def base_hash(self) -> str:
        return str(self.meta.get("base_weights_hash", ""))


def save_delta(path: str | Path, tensors: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> Path:
    """Write ``tensors`` and ``meta`` (JSON-able) atomically; returns the path."""
    st = require("safetensors.numpy", "torch")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    arrays = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in sorted(tensors.items())}
    st.save_file(arrays, str(tmp), metadata={"format": FORMAT, "meta": json.dumps(dict(meta), sort_keys=True)})
    os.replace(tmp, out)
    return out


def load_delta(path: str | Path) -> Delta:
    """Read a delta written by :func:`save_delta`; a foreign or damaged file is an :class:`InputFileError`."""
    safetensors = require("safetensors", "torch")
    st = require("safetensors.numpy", "torch")
    p = Path(path)
    try:
        with safetensors.safe_open(str(p), framework="np") as fh:
            header = fh.metadata() or {}
        tensors = st.load_file(str(p))
    except FileNotFoundError:
        raise InputFileError(p, "no such file", "train it first: asr-audit organism train") from None
    except Exception as exc:  # noqa: BLE001 - safetensors raises SafetensorError / OSError on damage
        raise InputFileError(
            p, f"not a readable delta ({type(exc).__name__})", "retrain: asr-audit organism train"
        ) from None
    if header.get("format") != FORMAT:
        raise InputFileError(p, "not an organism delta file", "retrain: asr-audit organism train")
    try:
        meta = json.loads(header["meta"])
    except (KeyError, ValueError):
        raise InputFileError(p, "delta metadata is missing or not JSON", "retrain: asr-audit organism train") from None
    return Delta(tensors, meta)


def check_base(delta: Delta, base_hash: str, where: str = "organism") -> None:
    """Refuse a delta trained on other base weights than ``base_hash`` (before any model is loaded)."""
    if delta.base_hash != base_hash:
        raise BackendError(
            f"{where}: the trained weights were made for base weights {delta.base_hash!r}, "
            f"but the installed base is {base_hash!r}; fix: retrain: asr-audit organism train"
        )


def apply_delta(model: Any, delta: Delta, base_hash: str, where: str = "organism") -> None:
    """Overwrite ``model``'s parameters with the delta's tensors (names, shapes and base hash checked)."""
    torch = require("torch", "torch")
    check_base(delta, base_hash, where)
    params = dict(model.named_parameters())
    bad = [n for n, v in delta.tensors.items() if n not in params or tuple(params[n].shape) != v.shape]
    if bad:
        raise BackendError(
            f"{where}: {len(bad)} trained tensor(s) do not fit the base model (first: {bad[0]}); "
            "fix: retrain: asr-audit organism train"
        )
    with torch.no_grad():
        for n, v in delta.tensors.items():
            params[n].copy_(torch.from_numpy(np.asarray(v)).to(params[n].dtype))
