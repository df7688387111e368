"""Fixtures for the CLI robustness tests."""

from __future__ import annotations

import functools

import pytest


@pytest.fixture(autouse=True)
def _no_retry_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus fresh-* cases fail their downloads on purpose, and a failed download is retried
    after 1 s and then 2 s (:class:`asr_audit.fresh.fetch.Fetcher`'s back-off): the retries still run
    here, without the waits (3 s a case), which no case is about."""
    from asr_audit.fresh import fetch

    monkeypatch.setattr(fetch, "Fetcher", functools.partial(fetch.Fetcher, backoff=0.0))
