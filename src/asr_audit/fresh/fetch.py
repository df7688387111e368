"""HTTP(S) downloads for fresh corpora: one polite client with an on-disk cache and one-line errors.

Every response body is kept under the cache folder by the SHA-256 of its URL, so a rerun (or a
run killed half way) downloads nothing twice. Failures are :class:`FetchError` naming the URL
(its password masked), what went wrong and the fix.

What is fetched, and from where:

* **Schemes.** A URL the user typed (``--api``, ``--media``, ``--text-url``, and what is built
  from them) may be ``http``, ``https`` or ``file``. A URL *named by an answer* (a catalogue's
  recording or text URL, a media page's player URL, a playlist's segments) is fetched with its
  ``origin``, the URL of the answer that named it: it must be ``http(s)``, except that a local
  mirror the user named (a ``file:`` origin) may name its own ``file:`` URLs. A server can never
  make asr-audit read a local file; redirects are followed to ``http(s)`` only.
* **Bounds.** Each download has an overall deadline (``deadline`` seconds, however slowly the
  server drips its bytes; ``timeout`` bounds each wait for a byte), a size cap (``max_bytes``;
  ``max_text_bytes`` for pages read as JSON or text) checked while the body streams to disk, and
  prints a progress line every few seconds while it runs (``progress``).
* **Answers that are not what was asked for.** A short body, a non-HTTP answer or malformed
  headers is a :class:`FetchError` (retried like a timeout); a body that is not the JSON, text or
  audio expected is dropped from the cache (:meth:`Fetcher.forget`), so a rerun asks again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import http.client
import json
import os
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asr_audit import __version__
from asr_audit.errors import AuditError

SCHEMES = ("http", "https", "file")
NAMED_SCHEMES = ("http", "https")  # what an answer may name (besides file: from a file: origin)
_CHUNK = 1 << 16
_PROGRESS_EVERY = 5.0  # seconds between progress lines


class FetchError(AuditError):
    """A download that failed (unreachable host, HTTP error, unreadable body, refused URL)."""


def shown(url: str) -> str:
    """``url`` as printed: a password in it masked.

    >>> shown("http://user:s3cret@example.org/api")
    'http://user:***@example.org/api'
    >>> shown("https://librivox.org/api")
    'https://librivox.org/api'
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def check_named(url: str, origin: str) -> None:
    """Refuse ``url`` named by the answer at ``origin`` unless it is http(s) (or file: from a file: origin)."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    origin_scheme = urllib.parse.urlsplit(origin).scheme.lower()
    if scheme in NAMED_SCHEMES or (scheme == "file" and origin_scheme == "file"):
        return
    raise FetchError(
        f"{shown(origin)} names a {scheme or 'scheme-less'} URL ({shown(url)}); refused: only http(s) URLs "
        "named by a server are fetched, never local files; fix: check the source (or --api / --media) is "
        "the service it claims to be"
    )


def _agent() -> str:
    return f"asr-audit/{__version__} (fresh held-out corpora for ASR audits)"


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http(s) URLs only (urllib would follow one to ``ftp:``)."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        scheme = urllib.parse.urlsplit(urllib.parse.urljoin(req.full_url, newurl)).scheme.lower()
        if scheme not in NAMED_SCHEMES:
            raise FetchError(
                f"{shown(req.full_url)} redirects to a {scheme or 'scheme-less'} URL ({shown(newurl)}); refused: "
                "redirects are followed to http(s) only; fix: check the URL (or --api / --media)"
            )
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(new.full_url).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            new.headers.pop("Authorization", None)  # credentials never follow a redirect to another host
        return new


_OPENER = urllib.request.build_opener(_HttpOnlyRedirects)


class _Status(Exception):
    """An HTTP error status whose body was read (within the caps)."""

    def __init__(self, code: int, reason: str, body: bytes) -> None:
        super().__init__(code)
        self.code, self.reason, self.body = code, reason, body


@dataclass(frozen=True, slots=True)
class Fetcher:
    """Downloads with a cache (``cache=None``: no cache), bounds and a few retries on 5xx/timeouts
    (see the module docstring)."""

    cache: Path | None = None
    timeout: float = 60.0  # seconds to wait for any one byte
    retries: int = 2
    backoff: float = 1.0
    deadline: float = 1800.0  # seconds for one whole download (each try)
    max_bytes: int = 512 << 20  # a recording
    max_text_bytes: int = 64 << 20  # a page read as JSON or text
    progress: Callable[[str], None] | None = None

    def _cached(self, url: str) -> Path | None:
        if self.cache is None:
            return None
        digest = hashlib.sha256(url.encode("utf-8")).hexdigest()
        return self.cache / digest[:2] / digest

    def get(
        self, url: str, *, accept: tuple[int, ...] = (), origin: str | None = None, limit: int | None = None
    ) -> bytes:
        """The body of ``url`` (from the cache when present). An HTTP error status listed in
        ``accept`` returns its body instead of raising (never cached). ``origin``: the URL of the
        answer that named ``url`` (None: the user typed it); ``limit``: the size cap (default
        ``max_bytes``)."""
        return self.response(url, accept=accept, origin=origin, limit=limit)[0]

    def response(
        self, url: str, *, accept: tuple[int, ...] = (), origin: str | None = None, limit: int | None = None
    ) -> tuple[bytes, int]:
        """The body and HTTP status of ``url`` (200 for a cached body; the rest as in :meth:`get`)."""
        scheme = urllib.parse.urlsplit(url).scheme.lower()
        if origin is not None:
            check_named(url, origin)
        if scheme not in SCHEMES:
            raise FetchError(
                f"{shown(url)}: cannot fetch a {scheme or 'scheme-less'} URL; fix: give an http(s) or file URL"
            )
        path = self._cached(url)
        if path is not None and path.is_file():
            return path.read_bytes(), 200
        return self._download(url, accept, path, self.max_bytes if limit is None else limit)

    def forget(self, url: str) -> None:
        """Drop ``url``'s cache entry (its body was not what was expected: a rerun asks again)."""
        path = self._cached(url)
        if path is not None:
            path.unlink(missing_ok=True)

    def retrieved(self, url: str) -> str:
        """When ``url``'s body was downloaded (its cache entry's time; now without a cache entry),
        as an ISO 8601 UTC time to the second."""
        path = self._cached(url)
        stamp = path.stat().st_mtime if path is not None and path.is_file() else time.time()
        return dt.datetime.fromtimestamp(stamp, dt.timezone.utc).isoformat(timespec="seconds")

    def _download(self, url: str, accept: tuple[int, ...], path: Path | None, limit: int) -> tuple[bytes, int]:
        for attempt in range(self.retries + 1):
            try:
                body = self._bounded(url, path, limit)
                return body, 200
            except _Status as exc:
                if exc.code in accept:
                    return exc.body, exc.code
                if exc.code < 500 or attempt == self.retries:
                    raise FetchError(
                        f"{shown(url)}: HTTP {exc.code} {' '.join(str(exc.reason).split())[:80]}; fix: check the URL "
                        "(or --api) and that the source still serves it"
                    ) from None
            except FetchError:
                raise
            except (urllib.error.URLError, http.client.HTTPException, TimeoutError, OSError, ValueError) as exc:
                if attempt == self.retries:
                    reason = _masked(str(getattr(exc, "reason", None) or _describe(exc)), url)
                    raise FetchError(
                        f"{shown(url)}: {' '.join(reason.split())[:160]}; fix: check the network connection and the URL"
                    ) from None
            time.sleep(self.backoff * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def _bounded(self, url: str, path: Path | None, limit: int) -> bytes:
        """One try: the body, streamed to a temporary file (then into the cache), within the
        deadline and the size cap. The transfer runs in a worker thread, so a server that drips
        even its headers (or says nothing) cannot hold the run past the deadline; this thread
        prints the progress line meanwhile."""
        outcome: dict[str, Any] = {"done": 0}
        stop = threading.Event()

        def work() -> None:
            try:
                outcome["body"] = self._transfer(url, path, limit, stop, outcome)
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
                outcome["error"] = exc

        worker = threading.Thread(target=work, name="asr-audit-fetch", daemon=True)
        start = time.monotonic()
        worker.start()
        while True:
            left = self.deadline - (time.monotonic() - start)
            worker.join(max(0.0, min(_PROGRESS_EVERY, left)))
            if not worker.is_alive():
                break
            if time.monotonic() - start >= self.deadline:
                stop.set()  # the worker gives up at its next read (a daemon: it never holds the process)
                raise FetchError(
                    f"{shown(url)}: not downloaded within {self.deadline:g} s ({outcome['done']:,} bytes received; "
                    "the server is too slow or stalled); fix: rerun later (the download cache keeps what finished)"
                )
            if self.progress is not None:
                self.progress(
                    f"downloading {shown(url)}: {outcome['done'] / 1e6:.1f} MB in {time.monotonic() - start:.0f} s"
                )
        if "error" in outcome:
            raise outcome["error"]
        body: bytes = outcome["body"]
        return body

    def _transfer(self, url: str, path: Path | None, limit: int, stop: threading.Event, state: dict[str, Any]) -> bytes:
        request = _request(url)
        try:
            response = _OPENER.open(request, timeout=self.timeout)  # schemes checked by the caller
        except urllib.error.HTTPError as exc:
            body = b"" if exc.fp is None else _read_capped(exc, url, 1 << 20, stop, state)
            exc.close()
            raise _Status(exc.code, str(exc.reason), body) from None
        with response:
            length = response.headers.get("Content-Length") if response.headers else None
            if length is not None and length.strip().isdigit() and int(length) > limit:
                raise FetchError(_too_big(url, int(length), limit))
            if path is None:
                return _read_capped(response, url, limit, stop, state)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as sink:
                    _read_capped(response, url, limit, stop, state, sink)
                body = Path(tmp).read_bytes()
                os.replace(tmp, path)
            finally:
                Path(tmp).unlink(missing_ok=True)
            return body

    def json(self, url: str, *, accept: tuple[int, ...] = ()) -> Any:
        """``url``'s body parsed as JSON (``accept``: as in :meth:`get`); a body that is not JSON
        is dropped from the cache."""
        body = self.get(url, accept=accept, limit=self.max_text_bytes)
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            self.forget(url)
            raise FetchError(f"{shown(url)}: the response is not JSON ({exc}); fix: check the API URL") from None

    def text(self, url: str, *, origin: str | None = None) -> str:
        """``url``'s body as text (UTF-8, with a BOM dropped; undecodable bytes replaced; ``origin``
        as in :meth:`get`)."""
        return self.get(url, origin=origin, limit=self.max_text_bytes).decode("utf-8-sig", errors="replace")


def _request(url: str) -> urllib.request.Request:
    """The request for ``url``; credentials in it (``http://user:pass@host/``) go into a Basic
    ``Authorization`` header, as urllib would otherwise take them for part of the host name."""
    import base64

    headers = {"User-Agent": _agent()}
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() in NAMED_SCHEMES and "@" in parts.netloc:
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        headers["Authorization"] = f"Basic {token}"
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return urllib.request.Request(url, headers=headers)


def _masked(text: str, url: str) -> str:
    """``text`` with ``url``'s password (if any) masked."""
    try:
        password = urllib.parse.urlsplit(url).password
    except ValueError:
        return text
    return text.replace(password, "***") if password else text


def _describe(exc: BaseException) -> str:
    if isinstance(exc, http.client.IncompleteRead):
        return f"the answer ended early ({exc.expected:,} more bytes were announced)"
    if isinstance(exc, http.client.BadStatusLine):
        return "the server's answer is not HTTP"
    if isinstance(exc, http.client.HTTPException):
        return f"malformed HTTP answer ({type(exc).__name__}: {exc})"
    return str(exc) or type(exc).__name__


def _too_big(url: str, size: int, limit: int) -> str:
    return (
        f"{shown(url)}: the answer is larger than {limit / 1e6:,.0f} MB ({size / 1e6:,.0f} MB or more); refused; "
        "fix: check the URL names the page or recording meant"
    )


def _read_capped(
    source: Any, url: str, limit: int, stop: threading.Event, state: dict[str, Any], sink: Any = None
) -> bytes:
    """Read ``source`` to its end, at most ``limit`` bytes (more: a :class:`FetchError`), one
    socket read at a time (``read1``), counting them in ``state["done"]``; into ``sink`` when
    given (then returns ``b""``). Stops when ``stop`` is set."""
    chunks: list[bytes] = []
    done = 0
    read = getattr(source, "read1", None) or source.read
    while True:
        if stop.is_set():
            raise FetchError(f"{shown(url)}: download abandoned")
        chunk = read(_CHUNK)
        if not chunk:
            break
        done += len(chunk)
        state["done"] = done
        if done > limit:
            raise FetchError(_too_big(url, done, limit))
        if sink is not None:
            sink.write(chunk)
        else:
            chunks.append(chunk)
    missing = getattr(source, "length", None)  # http.client's read1 ends quietly on a short body
    if isinstance(missing, int) and missing > 0:
        raise http.client.IncompleteRead(b"", missing)
    return b"".join(chunks)
