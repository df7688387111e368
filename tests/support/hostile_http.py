"""A hostile web server on 127.0.0.1 for the robustness tests of ``corpus fresh-*``: answers that
end early, are not HTTP, drip a byte at a time, never end, or carry JSON of the wrong shape.

tests/conftest.py puts this folder on ``sys.path``, so it imports as ``hostile_http``. The server
is a thread of the test process on a free loopback port (no outside network is touched); what it
answers is chosen by the request path's first segment (:data:`BEHAVIOURS`), the rest of the path
is the API path the client asked for (``/truncated/api/feed/audiobooks/?...``). ``/json/<name>/...``
answers the JSON document registered under ``name`` with :func:`HostileServer.answer`.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
from collections import Counter
from typing import Any

BEHAVIOURS = (
    "truncated",  # Content-Length 1000, 10 bytes sent, connection closed
    "not-http",  # an SSH banner instead of an HTTP status line
    "many-headers",  # 150 header lines
    "drip",  # headers, then one byte every 0.5 s for a minute
    "silent",  # accepts the connection and says nothing for a minute
    "huge-declared",  # Content-Length of 10 GB
    "huge",  # no Content-Length, 90 MB of JSON-looking bytes
    "empty-200",  # status 200 and no body at all
    "html-200",  # an error page served with status 200
    "redirect-file",  # 302 to file:///etc/hostname
    "redirect-ftp",  # 302 to ftp://127.0.0.1/x
    "json",  # a registered JSON document (see HostileServer.answer)
)


def _status(code: int, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    head = [f"HTTP/1.1 {code} X", f"Content-Length: {len(body)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class HostileServer:
    """The server: ``base`` is ``http://127.0.0.1:PORT``; ``hits`` counts requests per path."""

    def __init__(self) -> None:
        self.documents: dict[str, bytes] = {}
        self.hits: Counter[str] = Counter()
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                server._handle(self.request)

        class Threaded(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._tcp = Threaded(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._tcp.server_address[1]}"
        threading.Thread(target=self._tcp.serve_forever, daemon=True).start()

    def answer(self, name: str, document: Any) -> str:
        """Serve ``document`` (JSON, or bytes as they are) at ``/json/<name>/``; returns that base URL."""
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        self.documents[name] = body
        return f"{self.base}/json/{name}"

    def _handle(self, sock: socket.socket) -> None:
        sock.settimeout(5)
        try:
            request = b""
            while b"\r\n\r\n" not in request and len(request) < 65536:
                chunk = sock.recv(4096)
                if not chunk:
                    return
                request += chunk
            path = request.split(b" ", 2)[1].decode("latin-1")
            self.hits[path.split("?")[0]] += 1
            parts = path.lstrip("/").split("/")
            self._answer(sock, parts[0], parts[1] if len(parts) > 1 else "")
        except OSError:
            pass  # the client gave up (a deadline): nothing to clean up
        finally:
            sock.close()

    def _answer(self, sock: socket.socket, kind: str, name: str) -> None:
        if kind == "truncated":
            sock.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n{"books": [')
        elif kind == "not-http":
            sock.sendall(b"SSH-2.0-OpenSSH_9.0\r\n")
        elif kind == "many-headers":
            sock.sendall(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"\r\n{}")
        elif kind == "drip":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            for _ in range(120):
                sock.sendall(b" ")
                time.sleep(0.5)
        elif kind == "silent":
            time.sleep(60)
        elif kind == "huge-declared":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n" + b"[" * 1000)
        elif kind == "huge":
            sock.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
            block = b'{"books": [' + b" " * (1 << 20)
            for _ in range(90):
                sock.sendall(block)
        elif kind == "empty-200":
            sock.sendall(_status(200, b""))
        elif kind == "html-200":
            sock.sendall(_status(200, b"<html><body>Service temporarily unavailable</body></html>"))
        elif kind == "redirect-file":
            sock.sendall(_status(302, b"", {"Location": "file:///etc/hostname"}))
        elif kind == "redirect-ftp":
            sock.sendall(_status(302, b"", {"Location": "ftp://127.0.0.1/x"}))
        elif kind == "json" and name in self.documents:
            sock.sendall(_status(200, self.documents[name]))
        else:
            sock.sendall(_status(404, b'{"error": "not found"}'))


_SERVER: HostileServer | None = None
_LOCK = threading.Lock()


def hostile() -> HostileServer:
    """The process's hostile server (started on first use)."""
    global _SERVER
    with _LOCK:
        if _SERVER is None:
            _SERVER = HostileServer()
        return _SERVER


def skip_retry_waits(monkeypatch: Any) -> None:
    """Downloads that fail on purpose are retried after 1 s and then 2 s
    (:class:`asr_audit.fresh.fetch.Fetcher`'s back-off): with this (a pytest ``monkeypatch``) the
    fetchers the CLI builds still retry, without the waits, which no robustness case is about."""
    import functools

    from asr_audit.fresh import fetch

    monkeypatch.setattr(fetch, "Fetcher", functools.partial(fetch.Fetcher, backoff=0.0))
