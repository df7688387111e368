"""HTTP(S) downloads for fresh corpora: one polite client with an on-disk cache and one-line errors.

Every response body is kept under the cache folder by the SHA-256 of its URL, so a rerun (or a
run killed half way) downloads nothing twice. Only ``http``, ``https`` and ``file`` URLs are
fetched. Failures are :class:`FetchError` naming the URL, what went wrong and the fix.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asr_audit.errors import AuditError

SCHEMES = ("http", "https", "file")


class FetchError(AuditError):
    """A download that failed (unreachable host, HTTP error, unreadable body)."""


def _agent() -> str:
    from asr_audit import __version__

    return f"asr-audit/{__version__} (fresh held-out corpora for ASR audits)"


@dataclass(frozen=True, slots=True)
class Fetcher:
    """Downloads with a cache (``cache=None``: no cache), a timeout and a few retries on 5xx/timeouts."""

    cache: Path | None = None
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 1.0

    def _cached(self, url: str) -> Path | None:
        if self.cache is None:
            return None
        digest = hashlib.sha256(url.encode("utf-8")).hexdigest()
        return self.cache / digest[:2] / digest

    def get(self, url: str, *, accept: tuple[int, ...] = ()) -> bytes:
        """The body of ``url`` (from the cache when present). An HTTP error status listed in
        ``accept`` returns its body instead of raising (never cached)."""
        return self.response(url, accept=accept)[0]

    def response(self, url: str, *, accept: tuple[int, ...] = ()) -> tuple[bytes, int]:
        """The body and HTTP status of ``url`` (200 for a cached body; ``accept`` as in :meth:`get`)."""
        scheme = urllib.parse.urlsplit(url).scheme
        if scheme not in SCHEMES:
            raise FetchError(f"{url}: cannot fetch a {scheme or 'scheme-less'} URL; fix: give an http(s) or file URL")
        path = self._cached(url)
        if path is not None and path.is_file():
            return path.read_bytes(), 200
        body, status = self._download(url, accept)
        if path is not None and status < 400:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            os.replace(tmp, path)
        return body, status

    def retrieved(self, url: str) -> str:
        """When ``url``'s body was downloaded (its cache entry's time; now without a cache entry),
        as an ISO 8601 UTC time to the second."""
        path = self._cached(url)
        stamp = path.stat().st_mtime if path is not None and path.is_file() else time.time()
        return dt.datetime.fromtimestamp(stamp, dt.timezone.utc).isoformat(timespec="seconds")

    def _download(self, url: str, accept: tuple[int, ...]) -> tuple[bytes, int]:
        request = urllib.request.Request(url, headers={"User-Agent": _agent()})
        for attempt in range(self.retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # schemes checked above
                    return bytes(response.read()), 200
            except urllib.error.HTTPError as exc:
                if exc.code in accept:
                    return bytes(exc.read()), exc.code
                if exc.code < 500 or attempt == self.retries:
                    raise FetchError(
                        f"{url}: HTTP {exc.code} {exc.reason}; fix: check the URL (or --api) and that the "
                        "source still serves it"
                    ) from None
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                if attempt == self.retries:
                    reason = getattr(exc, "reason", exc)
                    raise FetchError(f"{url}: {reason}; fix: check the network connection and the URL") from None
            time.sleep(self.backoff * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def json(self, url: str, *, accept: tuple[int, ...] = ()) -> Any:
        """``url``'s body parsed as JSON (``accept``: as in :meth:`get`)."""
        body = self.get(url, accept=accept)
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FetchError(f"{url}: the response is not JSON ({exc}); fix: check the API URL") from None

    def text(self, url: str) -> str:
        """``url``'s body as text (UTF-8, with a BOM dropped; undecodable bytes replaced)."""
        return self.get(url).decode("utf-8-sig", errors="replace")
