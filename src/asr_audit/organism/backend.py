"""Bundled backends ``organism-benchmark``, ``organism-control``, ``organism-memorizer``,
``organism-memorizer-control`` and ``organism-donor``.

Each is the bundled ``whisper-tiny.en`` rebuilt in PyTorch (:mod:`asr_audit.models.hf`) with the
trained decoder tensors of its delta file applied (:mod:`asr_audit.organism.weights`). The delta
files live in :func:`organism_dir` (``$ASR_AUDIT_ORGANISM_DIR``, else ``<cache>/organism``) as
``<kind>.safetensors`` (``benchmark``, ``control``, ``memorizer``, ``memorizer-control``, ``donor``:
one file per kind, so training one kind never overwrites another); ``asr-audit organism train
[--kind policy|memorizer|donor]`` writes them.
Importing this module registers the names and never trains; loading a backend whose delta is
absent raises a :class:`~asr_audit.errors.BackendError` saying how to train it.

Identity: spec ``organism-<kind>``, weights hash
``sha256(base weights hash + ":" + delta file hash)[:16]``: retraining gives a new identity.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from asr_audit.errors import BackendError, InputFileError
from asr_audit.models.base import (
    SCORE,
    SITES,
    TRANSCRIBE,
    DecodeOptions,
    RuntimeOptions,
    register_backend,
)
from asr_audit.models.bundled import bundled_model_dir
from asr_audit.models.cache import weights_hash
from asr_audit.models.ct2 import ct2_weight_files
from asr_audit.models.whisper_convert import CONVERTER_VERSION, converted_whisper_dir
from asr_audit.models.whisper_torch import TorchWhisperBackend
from asr_audit.organism.weights import apply_delta, check_base, load_delta
from asr_audit.paths import cache_dir

BASE_MODEL = "whisper-tiny.en"
ORGANISM_DIR_ENV = "ASR_AUDIT_ORGANISM_DIR"
ORGANISMS = {
    "organism-benchmark": "benchmark",
    "organism-control": "control",
    "organism-memorizer": "memorizer",
    "organism-memorizer-control": "memorizer-control",
    "organism-donor": "donor",
}
# the --kind of `asr-audit organism train` that trains each delta
TRAINED_BY = {
    "benchmark": "policy",
    "control": "policy",
    "memorizer": "memorizer",
    "memorizer-control": "memorizer",
    "donor": "donor",
}
TRAIN_HINT = "train it first: asr-audit organism train"


def train_hint(kind: str) -> str:
    """How to train the delta of ``kind`` (the default ``--kind policy`` needs no flag)."""
    flag = TRAINED_BY.get(kind, "policy")
    return TRAIN_HINT if flag == "policy" else f"{TRAIN_HINT} --kind {flag}"


def organism_dir() -> Path:
    """Where trained organism deltas live (``$ASR_AUDIT_ORGANISM_DIR`` or ``<cache>/organism``)."""
    override = os.environ.get(ORGANISM_DIR_ENV)
    if override:
        return Path(override).expanduser()

    return cache_dir() / "organism"


def weights_path(kind: str, root: Path | None = None) -> Path:
    """The delta file of organism ``kind`` (``benchmark``, ``control``, ``memorizer``, ``memorizer-control``, ``donor``)."""
    if kind not in ORGANISMS.values():
        raise BackendError(f"unknown organism {kind!r}; valid: {', '.join(ORGANISMS.values())}")
    return (root or organism_dir()) / f"{kind}.safetensors"


def combined_hash(base_hash: str, delta_path: Path) -> str:
    return hashlib.sha256(f"{base_hash}:{weights_hash([delta_path])}".encode()).hexdigest()[:16]


def load_organism(
    name: str,
    options: DecodeOptions | None = None,
    *,
    root: Path | None = None,
    device: str | None = None,
    batch_size: int = 8,
    lazy: bool = False,
    share_encoder: bool = False,
) -> Any:
    """The organism backend ``name`` (a key of :data:`ORGANISMS`). With ``lazy`` the base weights
    are read and the delta applied on first use (the delta file and its base are checked now), so a
    run that finds every transcript in the store never loads the model. With ``share_encoder``
    (the demo's pair) organisms whose deltas leave the encoder alone hand each other their encoder
    states (:class:`~asr_audit.models.whisper_torch.EncoderHandoff`): a clip is encoded once."""
    if name not in ORGANISMS:
        raise BackendError(f"unknown organism backend {name!r}; valid: {', '.join(ORGANISMS)}")
    path = weights_path(ORGANISMS[name], root)
    if not path.is_file():
        raise BackendError(f"{name}: no trained weights at {path}; fix: {train_hint(ORGANISMS[name])}")

    try:
        delta = load_delta(path)
    except InputFileError as exc:
        raise BackendError(f"{name}: {exc}") from None
    source = bundled_model_dir(BASE_MODEL)
    base_hash = weights_hash(ct2_weight_files(source))
    check_base(delta, base_hash, name)
    decoder_only = all(n.startswith("model.decoder.") for n in delta.tensors)
    backend = TorchWhisperBackend(
        converted_whisper_dir(source),
        name,
        options or DecodeOptions(),
        combined_hash(base_hash, path),
        device=device,
        batch_size=batch_size,
        converter=CONVERTER_VERSION,
        prepare=lambda model: apply_delta(model, delta, base_hash, name),
        lazy=lazy,
        shared_encoder=f"{BASE_MODEL}:{base_hash}" if share_encoder and decoder_only else None,
    )
    backend.organism_meta = dict(delta.meta)
    return backend


def _register(name: str) -> None:
    kind = ORGANISMS[name]

    @register_backend(
        name,
        description=f"Whisper tiny.en fine-tuned as the {kind} model organism ({train_hint(kind).replace('train it first: ', 'train it: ')})",
        capabilities=[TRANSCRIBE, SCORE, SITES],
        bundled=True,
        extra="torch",
    )
    def factory(arg: str, options: DecodeOptions, runtime: RuntimeOptions | None = None) -> Any:
        return load_organism(name, options, **(runtime or RuntimeOptions()).kwargs())


for _name in ORGANISMS:
    _register(_name)
