"""Forked normalization workers give the serial output and keep the cache counters honest."""

from __future__ import annotations

import pytest

from asr_audit.text import normalize as nm
from asr_audit.text.normalize import clear_normalize_cache, get_normalizer, normalize_cache_stats, normalize_many

TEXTS = [f"Mr. Brown's colour number {i}, twenty-five!" for i in range(40)] + ["Hello  there."] * 3


def test_workers_match_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    norm = get_normalizer("whisper")
    clear_normalize_cache(norm)
    serial = normalize_many(norm, TEXTS)
    clear_normalize_cache(norm)
    monkeypatch.setattr(nm, "PARALLEL_MIN_STRINGS", 10)
    parallel = normalize_many(norm, TEXTS, workers=2)
    assert parallel == serial
    (stats,) = normalize_cache_stats(norm)
    assert (stats.misses, stats.hits, stats.entries) == (41, 2, 41)
    again = normalize_many(norm, TEXTS, workers=2)  # all cached: nothing to fork for
    assert again == serial
    (stats,) = normalize_cache_stats(norm)
    assert (stats.misses, stats.hits) == (41, 45)
    clear_normalize_cache(norm)


def test_small_batches_stay_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    norm = get_normalizer("basic")
    clear_normalize_cache(norm)

    def no_fork(*args: object, **kwargs: object) -> None:
        raise AssertionError("forked for a small batch")

    monkeypatch.setattr("multiprocessing.get_context", no_fork)
    assert normalize_many(norm, ["A b", "c D"], workers=2) == ["a b", "c d"]
    clear_normalize_cache(norm)
