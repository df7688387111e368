"""Bootstrap intervals: the bincount counts match np.add.at, shared resamples behave per column."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.stats.intervals import (
    bootstrap_ratio_difference,
    bootstrap_ratio_differences,
    resample_counts,
)


def flat(rows: Sequence[tuple[float, ...]]) -> list[float]:
    """(estimate, low, high) triples as one flat list (pytest.approx does not nest)."""
    return [x for row in rows for x in row]


def add_at_bootstrap(num_a, den_a, num_b, den_b, rng, n_resamples=1000, level=0.95, chunk=64):
    """The previous implementation (np.add.at), kept here as the oracle."""
    arrays = [np.asarray(x, dtype=np.float64) for x in (num_a, den_a, num_b, den_b)]
    m = len(arrays[0])

    def stat(sums):
        na, da, nb, db = sums
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(da > 0, na / np.maximum(da, 1e-300), 0.0) - np.where(
                db > 0, nb / np.maximum(db, 1e-300), 0.0
            )

    est = float(stat([np.array([a.sum()]) for a in arrays])[0])
    draws = []
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        idx = rng.integers(0, m, size=(size, m))
        counts = np.zeros((size, m), dtype=np.float64)
        np.add.at(counts, (np.repeat(np.arange(size), m), idx.ravel()), 1.0)
        draws.append(stat([counts @ a for a in arrays]))
    values = np.concatenate(draws)
    alpha = (1 - level) / 2
    return est, float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))


@pytest.mark.parametrize("m, n", [(1, 10), (7, 64), (300, 130), (2001, 200)])
def test_bootstrap_ratio_difference_is_unchanged(m: int, n: int) -> None:
    g = np.random.default_rng(m)
    a, b, c, d = g.random(m), g.integers(1, 20, m), g.random(m), g.integers(0, 20, m)
    assert bootstrap_ratio_difference(a, b, c, d, np.random.default_rng(9), n) == add_at_bootstrap(
        a, b, c, d, np.random.default_rng(9), n
    )


def test_resample_counts_do_not_depend_on_chunk() -> None:
    whole = np.concatenate(list(resample_counts(np.random.default_rng(3), 11, 50, chunk=50)))
    for chunk in (1, 7, 64):
        parts = np.concatenate(list(resample_counts(np.random.default_rng(3), 11, 50, chunk=chunk)))
        assert np.array_equal(parts, whole)
    assert whole.shape == (50, 11) and np.all(whole.sum(axis=1) == 11)
    idx = np.random.default_rng(3).integers(0, 11, size=(50, 11))  # the documented draws
    assert np.array_equal(whole, np.stack([np.bincount(r, minlength=11) for r in idx]))


def test_resample_counts_are_the_32_bit_draws() -> None:
    # int32 and int64 draws of a range below 2**32 are the same stream: counts from either match
    for m in (5, 10_000, 70_000):
        got = np.concatenate(list(resample_counts(np.random.default_rng(11), m, 30, chunk=8)))
        idx = np.random.default_rng(11).integers(0, m, size=(30, m), dtype=np.int32)
        assert np.array_equal(got, np.stack([np.bincount(r, minlength=m) for r in idx]))


def columns(seed: int, m: int, k: int) -> list[np.ndarray]:
    g = np.random.default_rng(seed)
    words = g.integers(1, 30, size=(m, k))
    err = g.binomial(words, 0.2)
    return [g.binomial(words, 0.15), words, err, words]


def test_columns_share_resamples_and_ignore_each_other() -> None:
    na, da, nb, db = columns(1, 400, 3)
    full = bootstrap_ratio_differences(na, da, nb, db, np.random.default_rng(5), 300)
    for j in range(3):  # alone, the same column gets the same interval
        alone = bootstrap_ratio_differences(na[:, j], da[:, j], nb[:, j], db[:, j], np.random.default_rng(5), 300)
        assert alone[0] == pytest.approx(full[j], abs=1e-12)
        # and it equals the one-statistic function on the same draws (integer data: exact sums)
        single = bootstrap_ratio_difference(na[:, j], da[:, j], nb[:, j], db[:, j], np.random.default_rng(5), 300)
        assert single == pytest.approx(full[j], abs=1e-12)
    order = [2, 0, 1]
    shuffled = bootstrap_ratio_differences(
        na[:, order], da[:, order], nb[:, order], db[:, order], np.random.default_rng(5), 300
    )
    assert flat(shuffled) == pytest.approx(flat([full[j] for j in order]), abs=1e-12)


def test_memory_bound_does_not_change_the_result() -> None:
    na, da, nb, db = columns(2, 250, 2)
    big = bootstrap_ratio_differences(na, da, nb, db, np.random.default_rng(0), 200)
    small = bootstrap_ratio_differences(na, da, nb, db, np.random.default_rng(0), 200, max_cells=300)
    assert flat(big) == pytest.approx(flat(small), abs=1e-12)


def test_interval_brackets_the_estimate_and_zero_rows_are_neutral() -> None:
    na, da, nb, db = columns(4, 500, 1)
    est, low, high = bootstrap_ratio_differences(na, da, nb, db, np.random.default_rng(0), 400)[0]
    assert low < est < high
    assert est == pytest.approx(na.sum() / da.sum() - nb.sum() / db.sum())
    pna, pda, pnb, pdb = (np.vstack([x, np.zeros((100, 1), dtype=x.dtype)]) for x in (na, da, nb, db))
    est2, low2, high2 = bootstrap_ratio_differences(pna, pda, pnb, pdb, np.random.default_rng(0), 400)[0]
    assert est2 == pytest.approx(est)
    assert abs(low2 - low) < 0.02 and abs(high2 - high) < 0.02  # same statistic, other draws


def test_edge_cases() -> None:
    empty = np.zeros((0, 2))
    assert bootstrap_ratio_differences(empty, empty, empty, empty, np.random.default_rng(0)) == [(0.0, 0.0, 0.0)] * 2
    with pytest.raises(ValueError, match="same"):
        bootstrap_ratio_differences(
            np.ones((3, 2)), np.ones((3, 1)), np.ones((3, 2)), np.ones((3, 2)), np.random.default_rng(0)
        )
    assert list(resample_counts(np.random.default_rng(0), 0, 10)) == []


_quantile_values = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, 1e300, -1e300, np.inf, -np.inf, np.nan, 0.1, 0.3])


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.lists(st.lists(_quantile_values, min_size=3, max_size=3), min_size=n, max_size=n)
    ),
    st.sampled_from([0.0, 0.025, 0.05, 0.25, 0.5, 0.75, 0.95, 0.975, 1.0, 1 / 3]),
)
def test_quantile_columns_has_numpys_bits(rows: list[list[float]], q: float) -> None:
    # the same bits as np.quantile(axis=0): signed zeros, infinities and NaN columns included
    from asr_audit.stats.intervals import quantile_columns

    values = np.array(rows, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, as np.quantile meets it
        want = np.quantile(values, q, axis=0)
        got = quantile_columns(values, q)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_quantile_columns_refuses_what_it_does_not_compute() -> None:
    from asr_audit.stats.intervals import quantile_columns

    with pytest.raises(ValueError, match="2-D float64"):
        quantile_columns(np.zeros(3), 0.5)
    with pytest.raises(ValueError, match="not in"):
        quantile_columns(np.zeros((3, 2)), 1.5)
