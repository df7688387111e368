"""The demo's organism pair shipped as package data: low-rank float16 differences from the base.

``asr-audit demo`` trains an organism and its control on its generated benchmark (minutes on two
cores). The same training on the same clips with the same seed gives the same weights, so the
package ships the pair once trained (``benchmarks/demo_organism.py --write`` regenerates it) and
the demo uses it when, and only when, it matches what the demo would train here
(:func:`shipped_for`): the same recipe (seed, set configuration, training configurations, trained
tensors), the same training data (:func:`set_hash`: clip ids, targets and audio bytes) and the
same base weights. Anything else and the demo trains as before.

Format (:data:`asr_audit.data.DEMO_ORGANISM_MANIFEST` and the weights file it names): for each kind
(``benchmark``, ``control``) and trained tensor, the trained-minus-base difference: a matrix as its
rank-``r`` truncated SVD ``U V`` (singular values split evenly between the factors), a vector
(bias, LayerNorm) in full, both float16, in one safetensors file. The JSON manifest holds the
file's sha256 (checked at every load), the recipe, the set and base hashes, each kind's training
metadata (as a trained delta records it) and the provenance
(:func:`asr_audit.provenance.make_provenance`: code hash of the organism modules, commit, date,
command, seed, input hashes; and the torch version). :func:`materialize` rebuilds ordinary delta files
(:mod:`asr_audit.organism.weights`, float32) whose metadata says they came from the shipped file,
so every other part of the package (lazy loading, identities, the store) works unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import InputFileError, require
from asr_audit.models.bundled import bundled_model_dir
from asr_audit.models.cache import weights_hash
from asr_audit.models.ct2 import ct2_weight_files
from asr_audit.models.whisper_convert import read_ct2_index, whisper_state_dict
from asr_audit.organism.backend import BASE_MODEL, weights_path
from asr_audit.organism.data import OrganismSet, OrganismSetConfig, load_organism_set, training_mix
from asr_audit.organism.pipeline import ensure_organisms, matching_deltas
from asr_audit.organism.train import TRAINABLE, TrainConfig
from asr_audit.organism.weights import Delta, load_delta, save_delta
from asr_audit.provenance import file_hash

FORMAT = "asr-audit-organism-shipped"
KINDS = ("benchmark", "control")
WRITE_COMMAND = "python benchmarks/demo_organism.py --write"


def recipe(seed: int, config: OrganismSetConfig, train_config: TrainConfig, control_steps: int | None) -> dict:
    """What decides the trained weights besides the data and the base: JSON-able, compared exactly."""
    return {
        "seed": seed,
        "set_config": config.to_dict(),
        "train": train_config.to_dict(),
        "control_steps": control_steps,
        "trainable": TRAINABLE.pattern,
    }


def set_hash(oset: OrganismSet) -> str:
    """sha256 of the pair's training data: every training clip's id, both targets and audio bytes."""
    rows = [
        [b.clip_id, b.target, c.target, file_hash(b.audio)]
        for b, c in zip(training_mix(oset, "benchmark"), training_mix(oset, "control"), strict=True)
    ]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()


def base_tensors(names: Sequence[str]) -> dict[str, np.ndarray]:
    """The bundled base model's float32 tensors ``names``, read from its CTranslate2 file (no
    conversion, no PyTorch); the same values the converted PyTorch model starts from."""

    state = whisper_state_dict(read_ct2_index(bundled_model_dir(BASE_MODEL) / "model.bin"))
    return {n: np.asarray(state[n], dtype=np.float32) for n in names}


def compress(trained: Mapping[str, np.ndarray], base: Mapping[str, np.ndarray], rank: int) -> dict[str, np.ndarray]:
    """The float16 low-rank form of ``trained - base``: ``<name>::u`` / ``<name>::v`` for a matrix
    (truncated SVD at ``rank``, or the full difference as ``<name>::d`` when that is not larger),
    ``<name>::d`` for a vector."""
    out: dict[str, np.ndarray] = {}
    for name in sorted(trained):
        diff = np.asarray(trained[name], dtype=np.float64) - np.asarray(base[name], dtype=np.float64)
        if diff.ndim != 2 or rank * sum(diff.shape) >= diff.size:
            out[f"{name}::d"] = diff.astype(np.float16)
            continue
        u, s, vt = np.linalg.svd(diff, full_matrices=False)
        root = np.sqrt(s[:rank])
        out[f"{name}::u"] = (u[:, :rank] * root).astype(np.float16)
        out[f"{name}::v"] = (root[:, None] * vt[:rank]).astype(np.float16)
    return out


def expand(packed: Mapping[str, np.ndarray], base: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The float32 trained tensors rebuilt from :func:`compress`'s output and the base (sums in
    float64, rounded once, so every machine rebuilds the same bits)."""
    names = sorted({k.rsplit("::", 1)[0] for k in packed})
    out = {}
    for name in names:
        if f"{name}::d" in packed:
            diff = packed[f"{name}::d"].astype(np.float64)
        else:
            diff = packed[f"{name}::u"].astype(np.float64) @ packed[f"{name}::v"].astype(np.float64)
        out[name] = (np.asarray(base[name], dtype=np.float64) + diff).astype(np.float32)
    return out


@dataclass(frozen=True, slots=True)
class ShippedPair:
    """The shipped pair: packed tensors per kind and the manifest."""

    path: Path
    manifest: Mapping[str, Any]
    packed: Mapping[str, Mapping[str, np.ndarray]]  # kind -> compress() output

    @property
    def sha256(self) -> str:
        return str(self.manifest["sha256"])

    def describe(self) -> str:
        return f"shipped delta {self.sha256[:12]}, trained by `{self.manifest['provenance']['command']}`"


def write_shipped(
    weights_path: Path,
    manifest_path: Path,
    deltas: Mapping[str, Delta],
    base: Mapping[str, np.ndarray],
    rank: int,
    *,
    recipe_: Mapping[str, Any],
    set_sha: str,
    provenance: Mapping[str, Any],
) -> ShippedPair:
    """Pack both kinds' trained deltas at ``rank`` into ``weights_path`` and write the manifest."""
    st = require("safetensors.numpy", "torch")
    tensors: dict[str, np.ndarray] = {}
    for kind in KINDS:
        for k, v in compress(deltas[kind].tensors, base, rank).items():
            tensors[f"{kind}/{k}"] = np.ascontiguousarray(v)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    st.save_file(tensors, str(weights_path), metadata={"format": FORMAT})
    base_hashes = {deltas[k].base_hash for k in KINDS}
    if len(base_hashes) != 1:
        raise InputFileError(weights_path, "the two deltas were trained on different base weights", "retrain both")
    manifest = {
        "format": FORMAT,
        "file": weights_path.name,
        "sha256": file_hash(weights_path),
        "bytes": weights_path.stat().st_size,
        "rank": rank,
        "recipe": dict(recipe_),
        "set_hash": set_sha,
        "base_weights_hash": base_hashes.pop(),
        "kinds": {k: dict(deltas[k].meta) for k in KINDS},
        "provenance": dict(provenance),
    }
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return load_shipped(manifest_path)


def load_shipped(manifest_path: Path) -> ShippedPair:
    """Read the manifest and its weights file, checking the file's sha256 (a damaged or foreign
    file is an :class:`InputFileError` naming the regenerating command)."""
    st = require("safetensors.numpy", "torch")
    fix = f"reinstall asr-audit or regenerate it: {WRITE_COMMAND}"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputFileError(manifest_path, "no such file", fix) from None
    except (OSError, ValueError) as exc:
        raise InputFileError(manifest_path, f"unreadable ({type(exc).__name__})", fix) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputFileError(manifest_path, "not a shipped organism manifest", fix)
    path = manifest_path.parent / str(manifest.get("file", ""))
    if not path.is_file() or file_hash(path) != manifest.get("sha256"):
        raise InputFileError(path, "missing, or its sha256 differs from the manifest's", fix)
    flat = st.load_file(str(path))
    packed: dict[str, dict[str, np.ndarray]] = {k: {} for k in KINDS}
    for key, value in flat.items():
        kind, _, name = key.partition("/")
        if kind not in packed:
            raise InputFileError(path, f"unexpected tensor {key!r}", fix)
        packed[kind][name] = value
    return ShippedPair(path, manifest, packed)


def shipped_for(
    manifest_path: Path, recipe_: Mapping[str, Any], set_sha: str, base_hash: str
) -> tuple[ShippedPair | None, str]:
    """The shipped pair when it was trained with exactly ``recipe_`` on data hashing to ``set_sha``
    from base weights ``base_hash``; else ``None``. The string says why (for the user)."""
    try:
        pair = load_shipped(manifest_path)
    except InputFileError as exc:
        return None, f"the shipped pair is unusable ({exc})"
    m = pair.manifest
    for what, mine, theirs in (
        ("recipe (seed, set or training settings)", dict(recipe_), m.get("recipe")),
        ("training data (set hash: clip ids, targets, audio bytes)", set_sha, m.get("set_hash")),
        ("base weights", base_hash, m.get("base_weights_hash")),
    ):
        if mine != theirs:
            return None, f"the shipped pair was made with another {what}"
    return pair, pair.describe()


def materialize(pair: ShippedPair, out_dir: Path) -> dict[str, Path]:
    """Write the pair as ordinary delta files ``<out_dir>/<kind>.safetensors`` (float32, the
    kind's training metadata plus ``shipped``: sha256, rank, command) and return their paths."""

    names = sorted({k.rsplit("::", 1)[0] for kind in KINDS for k in pair.packed[kind]})
    base = base_tensors(names)
    shipped = {
        "sha256": pair.sha256,
        "rank": pair.manifest["rank"],
        "command": pair.manifest["provenance"]["command"],
        "date": pair.manifest["provenance"].get("date"),
    }
    paths = {}
    for kind in KINDS:
        meta = {**pair.manifest["kinds"][kind], "shipped": shipped}
        paths[kind] = save_delta(weights_path(kind, out_dir), expand(pair.packed[kind], base), meta)
    return paths


def origin(meta: Mapping[str, Any]) -> str:
    """Where a delta file's weights came from, for the user: the shipped pair, or trained here."""
    shipped = meta.get("shipped")
    if isinstance(shipped, Mapping):
        return f"shipped delta {str(shipped.get('sha256', ''))[:12]}, trained by `{shipped.get('command', '?')}`"
    return "trained here"


def ensure_pair(
    set_dir: Path,
    out_dir: Path,
    manifest_path: Path,
    *,
    seed: int,
    config: OrganismSetConfig,
    train_config: TrainConfig,
    control_steps: int | None,
    train_here: bool = False,
    say: Any = None,
) -> tuple[dict[str, Path], str]:
    """The organism and control deltas in ``out_dir`` for these settings, and where they came
    from (:func:`origin`): the pair already there when it matches (a pair from the shipped file
    only without ``train_here``), else the shipped pair when it matches (:func:`shipped_for`,
    never with ``train_here``), else trained here (:func:`~asr_audit.organism.pipeline.ensure_organisms`)."""

    found = matching_deltas(out_dir, seed, config, train_config, control_steps)
    if found is not None:
        where = origin(load_delta(found["benchmark"]).meta)
        if not (train_here and where != "trained here"):
            return found, where
        for path in found.values():  # the shipped pair, in the demo's own folder: trained over below
            path.unlink()
    if not train_here:
        recipe_ = recipe(seed, config, train_config, control_steps)
        base_hash = weights_hash(ct2_weight_files(bundled_model_dir(BASE_MODEL)))
        pair, why = shipped_for(manifest_path, recipe_, set_hash(load_organism_set(set_dir)), base_hash)
        if pair is not None:
            return materialize(pair, out_dir), pair.describe()
        if say:
            say(f"{why}: training the pair here")
    paths, _ = ensure_organisms(
        set_dir,
        out_dir,
        seed=seed,
        config=config,
        train_config=train_config,
        control_steps=control_steps,
        say=say,
    )
    return paths, "trained here"


__all__ = [
    "KINDS",
    "WRITE_COMMAND",
    "ShippedPair",
    "base_tensors",
    "compress",
    "ensure_pair",
    "expand",
    "load_shipped",
    "materialize",
    "origin",
    "recipe",
    "set_hash",
    "shipped_for",
    "write_shipped",
]
