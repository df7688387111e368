"""Paired contrasts of ratio statistics with a one-sided cluster-bootstrap bound.

A *contrast* is a weighted sum of ratios ``sum_j coef_j * sum(num_j) / sum(den_j)`` whose columns
come from the same clusters (clips, sentences): candidate minus baseline WER is two columns with
coefficients ``(1, -1)``; a difference of WER inflations (corrected minus given WER, candidate
minus baseline) is four columns ``(1, -1, -1, 1)``. The clusters are resampled with replacement
with :func:`~asr_audit.stats.intervals.resample_counts` (one draw per resample for every column,
so the comparison is paired); a resample in which a column draws no data (its denominator sums to
0) is left out rather than counting that ratio as 0, as
:func:`~asr_audit.stats.intervals.cluster_bootstrap_difference` does.

No global random state: the ``numpy.random.Generator`` is passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from asr_audit.stats.intervals import resample_counts


@dataclass(frozen=True, slots=True)
class Contrast:
    """A contrast's estimate, its one-sided lower bound and the share of resamples at or below a value.

    ``lower`` is the ``alpha`` quantile of the bootstrap draws (a one-sided ``1 - alpha`` percentile
    bound); ``p_at_or_below`` the share of draws ``<= threshold`` (the bootstrap p-value of
    ``contrast <= threshold``). Every field is ``None`` when the contrast is undefined (a column
    without data), and the bounds are ``None`` when every resample was left out.
    """

    estimate: float | None
    lower: float | None
    upper: float | None
    p_at_or_below: float | None
    n_clusters: int
    n_used: int  # resamples that were defined

    @property
    def defined(self) -> bool:
        return self.estimate is not None


def cluster_sums(values: np.ndarray, clusters: Sequence[object] | None) -> np.ndarray:
    """Rows of ``values`` (one per item) summed per cluster, clusters in first-seen order.

    ``None`` keeps every row its own cluster.

    >>> cluster_sums(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), ["a", "b", "a"]).tolist()
    [[6.0, 8.0], [3.0, 4.0]]
    """
    values = np.asarray(values, dtype=np.float64)
    if clusters is None:
        return values
    if len(clusters) != len(values):
        raise ValueError(f"cluster_sums needs one cluster per row: {len(clusters)} labels for {len(values)} rows")
    index: dict[object, int] = {}
    inverse = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.int64, count=len(clusters))
    out = np.zeros((len(index), values.shape[1]), dtype=np.float64)
    np.add.at(out, inverse, values)
    return out


def ratio_contrast(
    nums: np.ndarray,
    dens: np.ndarray,
    coef: Sequence[float],
    rng: np.random.Generator,
    *,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    threshold: float = 0.0,
) -> Contrast:
    """``sum_j coef[j] * sum(nums[:, j]) / sum(dens[:, j])`` with a one-sided cluster-bootstrap bound.

    ``nums`` and ``dens`` are ``(clusters, columns)`` arrays. ``lower`` / ``upper`` are the
    ``alpha`` and ``1 - alpha`` quantiles of the resampled contrast (percentile bounds); a one-sided
    test of ``contrast <= threshold`` at level ``alpha`` rejects when ``lower > threshold``.

    >>> rng = np.random.default_rng(0)
    >>> num = np.array([[2, 1], [3, 1], [1, 0], [4, 2]]); den = np.full((4, 2), 10)
    >>> c = ratio_contrast(num, den, (1, -1), rng, n_resamples=200)
    >>> round(c.estimate, 3), c.n_clusters, c.lower < c.estimate < c.upper
    (0.15, 4, True)
    >>> ratio_contrast(num, den * 0, (1, -1), rng).estimate is None
    True
    """
    num = np.asarray(nums, dtype=np.float64)
    den = np.asarray(dens, dtype=np.float64)
    weights = np.asarray(coef, dtype=np.float64)
    if num.ndim != 2 or num.shape != den.shape or num.shape[1] != len(weights):
        raise ValueError(f"ratio_contrast needs (clusters, {len(weights)}) arrays, got {num.shape} and {den.shape}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    m = num.shape[0]
    den_sum = den.sum(axis=0)
    if m == 0 or np.any(den_sum <= 0):
        return Contrast(None, None, None, None, m, 0)
    estimate = float(weights @ (num.sum(axis=0) / den_sum))
    k = num.shape[1]
    stacked = np.concatenate([num, den], axis=1)
    draws = []
    for counts in resample_counts(rng, m, n_resamples):
        s = counts @ stacked
        sn, sd = s[:, :k], s[:, k:]
        ok = np.all(sd > 0, axis=1)
        draws.append((sn[ok] / sd[ok]) @ weights)
    values = np.concatenate(draws) if draws else np.zeros(0)
    if not values.size:
        return Contrast(estimate, None, None, None, m, 0)
    return Contrast(
        estimate,
        float(np.quantile(values, alpha)),
        float(np.quantile(values, 1 - alpha)),
        float(np.mean(values <= threshold)),
        m,
        int(values.size),
    )
