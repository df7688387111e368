"""Directions in activation space: diff-in-means, paired rank-k subspaces, held-out separability.

Pure numpy on per-clip activation vectors (rows = clips, columns = the site's width), so it runs
on anything :mod:`asr_audit.mechrun.capture` wrote:

* :func:`diff_in_means` — ``d = mean(A) - mean(B)``, the paper's steering direction;
* :func:`paired_subspace` — the top-``k`` right singular vectors of the paired differences
  ``A_i - B_i`` (same clip, two conditions), an orthonormal ``k x width`` basis;
* :func:`auc` — the probability that a held-out A row projects above a held-out B row
  (Mann-Whitney, ties count half); :func:`heldout_auc` fits ``d`` on a seeded split of the pairs
  and scores the rest, the number a layer sweep reports per site;
* :func:`random_direction`, :func:`shuffled_direction` — the controls (same norm);
* :class:`Direction` with :func:`save_direction` / :func:`load_direction`: a basis plus
  provenance, saved as ``<name>.npz`` + ``<name>.json`` and reloaded by name.

>>> import numpy as np
>>> a = np.array([[2.0, 0.0], [3.0, 1.0]]); b = np.array([[0.0, 0.0], [1.0, 1.0]])
>>> diff_in_means(a, b).tolist()
[2.0, 0.0]
>>> auc(np.array([1.0, 2.0]), np.array([0.0, 1.0]))
0.875
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import ConfigError, InputFileError

FORMAT = "asr-audit-direction"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def _rows(x: np.ndarray, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ConfigError(f"{what} must be a (clips x width) array with at least one row, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ConfigError(f"{what} holds NaN or infinite activations; fix: recapture")
    return arr


def diff_in_means(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``mean(a) - mean(b)`` over rows (float64)."""
    a, b = _rows(a, "set A"), _rows(b, "set B")
    if a.shape[1] != b.shape[1]:
        raise ConfigError(f"set A has width {a.shape[1]} but set B {b.shape[1]}; fix: capture the same site")
    return np.asarray(a.mean(0) - b.mean(0))


def paired_subspace(a: np.ndarray, b: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal ``(k, width)`` basis of the paired differences ``a_i - b_i`` and all their
    singular values. Rows of ``a`` and ``b`` must be pairs (same clip, two conditions)."""
    a, b = _rows(a, "set A"), _rows(b, "set B")
    if a.shape != b.shape:
        raise ConfigError(f"paired sets need equal shapes, got {a.shape} and {b.shape}; fix: pair every clip")
    if not 1 <= k <= min(a.shape):
        raise ConfigError(f"rank k={k} must be in [1, {min(a.shape)}] (pairs x width)")
    _, s, vt = np.linalg.svd(a - b, full_matrices=False)
    basis = vt[:k].copy()
    mean_diff = (a - b).mean(0)
    for i in range(k):  # orient each vector along the mean difference (SVD signs are arbitrary)
        if float(basis[i] @ mean_diff) < 0:
            basis[i] = -basis[i]
    return basis, s


def unit(v: np.ndarray) -> np.ndarray:
    """``v / |v|``; a zero vector is an error."""
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    n = float(np.linalg.norm(v))
    if not n > 0:
        raise ConfigError("the direction is the zero vector (the two sets have the same mean); fix: check the sets")
    return v / n


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(score of a ``pos`` row > score of a ``neg`` row), ties count half (Mann-Whitney U / n m)."""
    pos, neg = np.asarray(pos, dtype=np.float64).ravel(), np.asarray(neg, dtype=np.float64).ravel()
    if not len(pos) or not len(neg):
        raise ConfigError("AUC needs at least one score on each side")
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)


def split_pairs(n: int, holdout: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A seeded split of ``n`` pair indices into ``(fit, held out)``; both non-empty."""
    if n < 2:
        raise ConfigError(f"a held-out split needs at least 2 pairs, got {n}")
    if not 0 < holdout < 1:
        raise ConfigError(f"held-out share {holdout!r} must be in (0, 1)")
    order = rng.permutation(n)
    n_out = min(n - 1, max(1, round(n * holdout)))
    return np.sort(order[n_out:]), np.sort(order[:n_out])


def heldout_auc(a: np.ndarray, b: np.ndarray, fit: np.ndarray, held: np.ndarray) -> float:
    """AUC of the held-out rows' projections on the diff-in-means of the fit rows."""
    a, b = _rows(a, "set A"), _rows(b, "set B")
    d = unit(diff_in_means(a[fit], b[fit]))
    return auc(a[held] @ d, b[held] @ d)


def random_direction(width: int, norm: float, rng: np.random.Generator) -> np.ndarray:
    """A Gaussian direction scaled to ``norm`` (the random-direction control)."""
    v = rng.standard_normal(width)
    return v / np.linalg.norm(v) * norm


def shuffled_direction(v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``v`` with its coordinates permuted: same norm and value distribution, no alignment."""
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    return v[rng.permutation(len(v))]


def vector_hash(v: np.ndarray) -> str:
    """A short content hash of a float64 array (enters intervention cache keys)."""
    arr = np.ascontiguousarray(np.asarray(v, dtype=np.float64))
    return hashlib.sha256(repr(arr.shape).encode() + arr.tobytes()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Direction:
    """A named direction at one hook site.

    ``vector`` is the raw diff-in-means (its norm is the steering scale: induction adds
    ``alpha * vector``); ``basis`` an orthonormal ``(k, width)`` basis (row 0 is
    ``vector / |vector|`` for rank 1; the paired SVD for rank k). ``mean_b`` is set B's mean
    activation (the faithful set's: mean ablation sets the projection to it), empty for
    directions saved before it was kept. ``provenance``: model key, site, clip ids and audio
    hashes of both sets, seed, held-out AUC.
    """

    name: str
    site: str
    vector: np.ndarray
    basis: np.ndarray
    provenance: Mapping[str, Any] = field(default_factory=dict)
    mean_b: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ConfigError(f"direction name {self.name!r} must be letters, digits, '.', '_' or '-' (max 100)")
        b = np.asarray(self.basis)
        if b.ndim != 2 or b.shape[1] != np.asarray(self.vector).reshape(-1).shape[0]:
            raise ConfigError(f"direction {self.name!r}: basis shape {b.shape} does not fit the vector")
        m = np.asarray(self.mean_b).reshape(-1)
        if m.size and m.shape[0] != b.shape[1]:
            raise ConfigError(f"direction {self.name!r}: set-B mean width {m.shape[0]} does not fit the vector")

    @property
    def k(self) -> int:
        return int(np.asarray(self.basis).shape[0])

    @property
    def norm(self) -> float:
        return float(np.linalg.norm(self.vector))

    @property
    def hash(self) -> str:
        # the set-B mean enters only when kept, so directions saved before it keep their hash
        return vector_hash(np.concatenate([np.ravel(self.vector), np.ravel(self.basis), np.ravel(self.mean_b)]))

    @property
    def has_mean_b(self) -> bool:
        return bool(np.asarray(self.mean_b).size)

    def rank(self, k: int) -> Direction:
        """The same direction keeping the first ``k`` basis vectors."""
        if not 1 <= k <= self.k:
            raise ConfigError(f"direction {self.name!r} has rank {self.k}; k={k} must be in [1, {self.k}]")
        return Direction(self.name, self.site, self.vector, np.asarray(self.basis)[:k], self.provenance, self.mean_b)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "site": self.site,
            "k": self.k,
            "norm": self.norm,
            "hash": self.hash,
            "mean_b": self.has_mean_b,
            "provenance": dict(self.provenance),
        }


def direction_from_sets(
    name: str, site: str, a: np.ndarray, b: np.ndarray, *, k: int = 1, provenance: Mapping[str, Any] | None = None
) -> Direction:
    """Diff-in-means of ``a`` vs ``b`` (set B's mean kept for mean ablation); with ``k > 1`` the
    basis is the paired SVD subspace."""
    vec = diff_in_means(a, b)
    basis = unit(vec)[None, :] if k == 1 else paired_subspace(a, b, k)[0]
    return Direction(name, site, vec, basis, dict(provenance or {}), np.asarray(b, np.float64).mean(0))


def save_direction(direction: Direction, root: str | Path) -> Path:
    """Write ``<root>/<name>.npz`` (vector, basis, set B's mean when kept) and ``<name>.json``
    (provenance); returns the json path."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    npz = root / f"{direction.name}.npz"
    tmp = root / f".{direction.name}.{os.getpid()}.tmp.npz"
    vector, basis = np.asarray(direction.vector, np.float64), np.asarray(direction.basis, np.float64)
    if direction.has_mean_b:
        np.savez(tmp, vector=vector, basis=basis, mean_b=np.asarray(direction.mean_b, np.float64))
    else:
        np.savez(tmp, vector=vector, basis=basis)
    os.replace(tmp, npz)
    meta = root / f"{direction.name}.json"
    meta.write_text(json.dumps({"format": FORMAT, **direction.to_dict()}, indent=1, sort_keys=True) + "\n")
    return meta


def load_direction(name: str, root: str | Path) -> Direction:
    """The direction saved as ``name`` under ``root`` (its hash is checked against the arrays)."""
    root = Path(root)
    meta_path, npz = root / f"{name}.json", root / f"{name}.npz"
    if not meta_path.is_file() or not npz.is_file():
        have = sorted(p.stem for p in root.glob("*.json")) if root.is_dir() else []
        raise InputFileError(
            meta_path,
            "no saved direction of that name" + (f" (saved: {', '.join(have)})" if have else ""),
            "make it first: asr-audit mech direction",
        )
    import zipfile

    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise InputFileError(meta_path, f"unreadable direction record ({type(exc).__name__})", "recreate it") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputFileError(meta_path, "not a direction file", "recreate it: asr-audit mech direction")
    for key in ("name", "site"):
        if not isinstance(meta.get(key), str):
            raise InputFileError(meta_path, f"no {key!r} string in the direction record", "recreate it")
    try:
        with np.load(npz, allow_pickle=False) as z:
            vector, basis = z["vector"], z["basis"]
            mean_b = z["mean_b"] if "mean_b" in z.files else np.zeros(0)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise InputFileError(npz, f"unreadable direction ({type(exc).__name__})", "recreate it") from None
    for label, arr in (("vector", vector), ("basis", basis), ("mean_b", mean_b)):
        if arr.dtype.kind not in "fiu" or not np.isfinite(arr).all():
            raise InputFileError(npz, f"its {label} holds NaN, infinite or non-numeric values", "recreate it")
    provenance = meta.get("provenance", {})
    out = Direction(
        meta["name"], meta["site"], vector, basis, provenance if isinstance(provenance, dict) else {}, mean_b
    )
    if out.hash != meta.get("hash"):
        raise InputFileError(npz, "the arrays do not match the hash in the .json", "recreate it")
    return out
