"""Paired differences and difference-in-differences with a sentence-clustered bootstrap.

Values are 0/1 outcomes (1 = the model wrote the reference's version) keyed by item; an item
belongs to a cluster (its sentence). Resampling draws clusters with replacement and keeps all of
a cluster's items, in every arm, together. A difference over no items, or with an arm that holds
no item, is undefined: its estimate and bounds are ``None`` (written as null, shown as "—"),
never 0; a resample that draws no item of an arm is left out
(:func:`~asr_audit.stats.intervals.cluster_bootstrap_difference`).

>>> import numpy as np
>>> d = paired_difference([1, 1, 0, 1], [0, 1, 0, 0], ["s1", "s1", "s2", "s3"], np.random.default_rng(0))
>>> round(d.estimate, 2)
-0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from asr_audit.stats.intervals import cluster_bootstrap_difference


@dataclass(frozen=True, slots=True)
class Difference:
    """A difference of means with its cluster-bootstrap percentile interval (``None``: undefined)."""

    estimate: float | None
    low: float | None
    high: float | None
    n_items: int
    n_clusters: int
    n_resamples: int

    @property
    def defined(self) -> bool:
        """Whether there was anything to compare (both arms hold items)."""
        return self.estimate is not None

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "estimate": self.estimate,
            "ci_low": self.low,
            "ci_high": self.high,
            "n_items": self.n_items,
            "n_clusters": self.n_clusters,
            "n_resamples": self.n_resamples,
        }


def _cluster_sums(
    values: Sequence[float], clusters: Sequence[str], labels: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    num = np.zeros(len(labels))
    den = np.zeros(len(labels))
    for v, c in zip(values, clusters):
        num[labels[c]] += float(v)
        den[labels[c]] += 1.0
    return num, den


def paired_difference(
    baseline: Sequence[float],
    treated: Sequence[float],
    clusters: Sequence[str],
    rng: np.random.Generator,
    n_resamples: int = 1000,
) -> Difference:
    """Mean of ``treated - baseline`` over paired items, clusters resampled; undefined with no pair.

    >>> paired_difference([], [], [], np.random.default_rng(0)).to_dict()["estimate"] is None
    True
    """
    if not len(baseline) == len(treated) == len(clusters):
        raise ValueError("paired_difference needs one baseline, treated value and cluster per item")
    labels = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    diffs = [float(t) - float(b) for b, t in zip(baseline, treated)]
    num, den = _cluster_sums(diffs, clusters, labels)
    if not labels:
        return Difference(None, None, None, 0, 0, n_resamples)
    est, low, high = cluster_bootstrap_difference(num, den, np.zeros_like(num), den, rng, n_resamples)
    return Difference(est, low, high, len(diffs), len(labels), n_resamples)


def difference_in_differences(
    a_treated: Sequence[float],
    a_control: Sequence[float],
    a_clusters: Sequence[str],
    b_treated: Sequence[float],
    b_control: Sequence[float],
    b_clusters: Sequence[str],
    rng: np.random.Generator,
    n_resamples: int = 1000,
) -> Difference:
    """``mean(a_treated - a_control) - mean(b_treated - b_control)`` with clusters shared by both arms.

    For donor experiments: a = benchmark audio, b = fresh-voice audio, treated = benchmark donor,
    control = conversational donor. A sentence in both arms is one cluster, resampled as a unit.
    An arm without items makes the difference undefined (``None``), and a resample that draws no
    item of one arm is left out.
    """
    if not (
        len(a_treated) == len(a_control) == len(a_clusters) and len(b_treated) == len(b_control) == len(b_clusters)
    ):
        raise ValueError("difference_in_differences needs paired values and a cluster per item in each arm")
    labels = {c: i for i, c in enumerate(dict.fromkeys([*a_clusters, *b_clusters]))}
    if not labels or not len(a_clusters) or not len(b_clusters):
        return Difference(None, None, None, len(a_clusters) + len(b_clusters), len(labels), n_resamples)
    na, da = _cluster_sums([float(t) - float(c) for t, c in zip(a_treated, a_control)], a_clusters, labels)
    nb, db = _cluster_sums([float(t) - float(c) for t, c in zip(b_treated, b_control)], b_clusters, labels)
    est, low, high = cluster_bootstrap_difference(na, da, nb, db, rng, n_resamples)
    return Difference(est, low, high, len(a_clusters) + len(b_clusters), len(labels), n_resamples)
