"""Interval estimates: Wilson score intervals for rates, seeded bootstrap for ratio statistics.

No global random state: every resampling function takes a ``numpy.random.Generator``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Z95 = 1.96


@dataclass(frozen=True, slots=True)
class Rate:
    """k of n with its Wilson interval."""

    k: int
    n: int
    rate: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float | int]:
        return {"k": self.k, "n": self.n, "rate": self.rate, "ci_low": self.low, "ci_high": self.high}


def wilson(k: int, n: int, z: float = Z95) -> Rate:
    """Wilson score interval for ``k`` successes in ``n`` trials (the reference code's formula).

    ``n = 0`` gives ``(0, 0, 0)``.

    >>> r = wilson(0, 31)
    >>> (r.rate, r.low, round(r.high, 4))
    (0.0, 0.0, 0.1103)
    >>> wilson(0, 0).high
    0.0
    """
    if k < 0 or n < 0 or k > n:
        raise ValueError(f"wilson needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Rate(0, 0, 0.0, 0.0, 0.0)
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, center - half)  # exact bounds at the extremes (no 1e-18 residue)
    high = 1.0 if k == n else min(1.0, center + half)
    return Rate(k, n, p, low, high)


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a bootstrap percentile interval."""

    estimate: float
    low: float
    high: float
    n_resamples: int
    seed: int | None = None


def bootstrap_ratio_difference(
    num_a: np.ndarray,
    den_a: np.ndarray,
    num_b: np.ndarray,
    den_b: np.ndarray,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    level: float = 0.95,
    chunk: int = 64,
) -> tuple[float, float, float]:
    """Clustered bootstrap of ``sum(num_a)/sum(den_a) - sum(num_b)/sum(den_b)``.

    Each array holds one value per cluster (clip or sentence); clusters are resampled with
    replacement, keeping a cluster's a and b values together (a paired design). Returns
    ``(estimate, low, high)`` with a percentile interval.
    """
    arrays = [np.asarray(x, dtype=np.float64) for x in (num_a, den_a, num_b, den_b)]
    m = len(arrays[0])
    if any(len(a) != m for a in arrays):
        raise ValueError("all arrays must have one value per cluster")

    def stat(sums: list[np.ndarray]) -> np.ndarray:
        na, da, nb, db = sums
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(da > 0, na / np.maximum(da, 1e-300), 0.0) - np.where(db > 0, nb / np.maximum(db, 1e-300), 0.0)

    est = float(stat([np.array([a.sum()]) for a in arrays])[0])
    if m == 0:
        return 0.0, 0.0, 0.0
    draws: list[np.ndarray] = []
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        idx = rng.integers(0, m, size=(size, m))
        counts = np.zeros((size, m), dtype=np.float64)
        rows = np.repeat(np.arange(size), m)
        np.add.at(counts, (rows, idx.ravel()), 1.0)
        draws.append(stat([counts @ a for a in arrays]))
    values = np.concatenate(draws)
    alpha = (1 - level) / 2
    return est, float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))


def bootstrap_mean(
    values: np.ndarray,
    rng: np.random.Generator,
    clusters: np.ndarray | None = None,
    n_resamples: int = 1000,
    level: float = 0.95,
    statistic: Callable[[np.ndarray], float] | None = None,
) -> tuple[float, float, float]:
    """Cluster bootstrap of the mean of ``values`` (e.g. paired differences), clusters resampled.

    ``clusters`` gives a cluster label per value (sentence id); ``None`` treats each value as its
    own cluster. Returns ``(estimate, low, high)``.
    """
    values = np.asarray(values, dtype=np.float64)
    if clusters is None:
        clusters = np.arange(len(values))
    labels, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    sums = np.bincount(inverse, weights=values, minlength=len(labels))
    counts = np.bincount(inverse, minlength=len(labels)).astype(np.float64)
    zeros = np.zeros_like(sums)
    est, low, high = bootstrap_ratio_difference(sums, counts, zeros, counts, rng, n_resamples, level)
    if statistic is not None:  # pragma: no cover - hook for other statistics
        est = statistic(values)
    return est, low, high
