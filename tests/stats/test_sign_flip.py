"""The cluster sign-flip interval (lift's means and contrasts): the subset-means formula by brute
force, agreement with the sign-flip test it inverts, coverage and the one-sided null rate."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from asr_audit.stats.intervals import bootstrap_mean, sign_flip_mean


def brute_subset_means(values: list[float], clusters: list[str]) -> list[float]:
    """Every non-empty subset of clusters' mean (sum of its values / their count), sorted."""
    groups: dict[str, list[float]] = {}
    for v, c in zip(values, clusters):
        groups.setdefault(c, []).append(v)
    sums = [sum(g) for g in groups.values()]
    counts = [len(g) for g in groups.values()]
    out = []
    for r in range(1, len(sums) + 1):
        for subset in itertools.combinations(range(len(sums)), r):
            out.append(sum(sums[i] for i in subset) / sum(counts[i] for i in subset))
    return sorted(out)


def brute_p_upper(values: list[float], clusters: list[str], mu: float) -> float:
    """One-sided sign-flip p-value of "mean <= mu" by enumerating every sign pattern: the share
    of patterns whose flipped centred sum is at least the observed one."""
    groups: dict[str, list[float]] = {}
    for v, c in zip(values, clusters):
        groups.setdefault(c, []).append(v - mu)
    r = [sum(g) for g in groups.values()]
    observed = sum(r)
    hits = sum(
        sum(s * x for s, x in zip(signs, r)) >= observed - 1e-12 for signs in itertools.product((1, -1), repeat=len(r))
    )
    return hits / 2 ** len(r)


def test_exact_bounds_are_the_kth_subset_means() -> None:
    values = [0.9, -0.3, 1.7, 0.2, 0.4, 2.2, -0.8, 0.5, 1.1]
    clusters = ["a", "a", "b", "c", "c", "c", "d", "e", "f"]  # 6 clusters of 1-3 values, 64 patterns
    means = brute_subset_means(values, clusters)
    rng = np.random.default_rng(0)
    for level, k in ((0.95, 1), (0.90, 3), (0.80, 6)):  # k = floor((1 - level) / 2 * 64)
        r = sign_flip_mean(values, clusters, rng, level=level)
        assert r.exact and r.n_patterns == 64 and r.n_clusters == 6 and r.n == 9
        assert r.estimate == pytest.approx(sum(values) / 9)
        assert (r.low, r.high) == pytest.approx((means[k - 1], means[-k]), abs=1e-12)


def test_low_above_zero_exactly_when_the_sign_flip_test_rejects() -> None:
    """The interval is the inverted test: ``low > mu`` iff the brute-force p-value <= 2.5%."""
    rng = np.random.default_rng(3)
    agree = 0
    for _ in range(40):
        g = 7
        clusters = [f"s{i}" for i in range(g) for _ in range(int(rng.integers(1, 3)))]
        values = list(rng.normal(0.5, 1.0, size=len(clusters)))
        r = sign_flip_mean(values, clusters, np.random.default_rng(0))
        assert r.exact and r.low is not None
        for mu in (0.0, r.low - 1e-9, r.low + 1e-9, r.estimate):
            assert (r.low > mu) == (brute_p_upper(values, clusters, mu) <= 0.025)
            agree += 1
    assert agree == 160


def test_monte_carlo_patterns_are_seeded_and_close_to_exact() -> None:
    rng = np.random.default_rng(8)
    values = rng.standard_t(4, size=40) + 0.3
    clusters = [f"s{i // 2}" for i in range(40)]  # 20 clusters: 2**20 patterns, sampled
    a = sign_flip_mean(values, clusters, np.random.default_rng(1), n_flips=2000)
    b = sign_flip_mean(values, clusters, np.random.default_rng(1), n_flips=2000)
    assert a == b and not a.exact and a.n_patterns == 2001
    exact = sign_flip_mean(values, clusters, np.random.default_rng(1), n_flips=2**20)
    assert exact.exact and exact.n_patterns == 2**20
    assert a.low is not None and a.high is not None and exact.low is not None and exact.high is not None
    width = exact.high - exact.low
    assert abs(a.low - exact.low) < 0.1 * width and abs(a.high - exact.high) < 0.1 * width


def test_too_few_clusters_give_an_undefined_interval_and_bad_input_is_refused() -> None:
    rng = np.random.default_rng(0)
    for g in (1, 2, 5):  # 2**5 = 32 patterns: the smallest p-value, 1/32, is above 2.5%
        r = sign_flip_mean([float(i) for i in range(g)], None, rng)
        assert (r.low, r.high) == (None, None) and r.estimate == pytest.approx((g - 1) / 2)
    assert sign_flip_mean([float(i) for i in range(6)], None, rng).low == 0.0  # 64 patterns: defined
    with pytest.raises(ValueError, match="non-empty"):
        sign_flip_mean([], None, rng)
    with pytest.raises(ValueError, match="one cluster per value"):
        sign_flip_mean([1.0, 2.0], ["a"], rng)


def test_coverage_on_a_small_heavy_tailed_clustered_sample() -> None:
    """12 clusters of 1-3 values, Student t(3) items plus a cluster effect, known mean 0.7: the
    interval covers at least at its level (exact under symmetry; exact enumeration at
    n_flips=4095); the percentile bootstrap on the same samples covers less."""
    rng = np.random.default_rng(11)
    reps, hit, hit_boot = 1500, 0, 0
    for _ in range(reps):
        labels = np.repeat(np.arange(12), rng.integers(1, 4, size=12))
        x = 0.7 + rng.normal(0, 0.3, size=12)[labels] + rng.standard_t(3, size=len(labels))
        r = sign_flip_mean(x, labels, rng, n_flips=4095)
        assert r.low is not None and r.high is not None
        hit += r.low <= 0.7 <= r.high
        _, lo, hi = bootstrap_mean(x, rng, labels, n_resamples=400)
        hit_boot += lo <= 0.7 <= hi
    se = math.sqrt(0.95 * 0.05 / reps)
    assert hit / reps >= 0.95 - 2.5 * se, hit / reps
    assert hit_boot < hit


def test_one_sided_rate_on_the_lift_null_world() -> None:
    """The lift null world's shape (30-60 sentences, 1-2 items each, sentence effect sd 0.1, item
    noise 0.2 t(4)): the lower bound is above the true mean 0 at most at the flag's 2.5%."""
    rng = np.random.default_rng(5)
    reps, fired = 3000, 0
    for _ in range(reps):
        g = int(rng.integers(30, 61))
        labels = np.repeat(np.arange(g), np.where(rng.random(g) < 0.7, 1, 2))
        x = rng.normal(0, 0.1, size=g)[labels] + 0.2 * rng.standard_t(4, size=len(labels))
        low = sign_flip_mean(x, labels, rng, n_flips=400).low
        assert low is not None
        fired += low > 0
    assert fired / reps <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps), fired / reps
