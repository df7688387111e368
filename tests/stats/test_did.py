"""Paired differences and difference-in-differences with sentence clusters."""

from __future__ import annotations

import numpy as np

from asr_audit.stats.did import difference_in_differences, paired_difference


def test_paired_difference_estimate_and_clusters() -> None:
    base = [1, 1, 1, 1, 0, 0]
    treat = [0, 0, 1, 1, 0, 0]
    d = paired_difference(base, treat, ["s1", "s1", "s2", "s2", "s3", "s3"], np.random.default_rng(1), 500)
    assert d.estimate == -2 / 6
    assert d.n_clusters == 3 and d.n_items == 6
    assert d.low is not None and d.high is not None and d.estimate is not None
    assert d.low <= d.estimate <= d.high and d.low < 0


def test_did_is_difference_of_paired_effects() -> None:
    rng = np.random.default_rng(0)
    clusters = [f"s{i}" for i in range(20)]
    # benchmark audio: bench donor keeps 18/20, conversational 2/20 -> +0.8
    a_t = [1] * 18 + [0] * 2
    a_c = [1] * 2 + [0] * 18
    # fresh voice: no donor effect
    b_t = [0] * 20
    b_c = [0] * 20
    d = difference_in_differences(a_t, a_c, clusters, b_t, b_c, clusters, rng, 500)
    assert d.low is not None and d.high is not None and d.estimate is not None
    assert abs(d.estimate - 0.8) < 1e-12
    assert 0.5 < d.low <= d.estimate <= d.high <= 1.0
    flat = difference_in_differences(a_t, a_c, clusters, a_t, a_c, clusters, np.random.default_rng(0), 200)
    assert flat.estimate == 0 and flat.low == 0 and flat.high == 0
