"""A stand-in web server on 127.0.0.1 for end-to-end tests of code that downloads (tests/fresh):
tests/conftest.py puts this folder on ``sys.path``, so it imports as ``local_http``."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import SplitResult, urlsplit

Route = Callable[[str, SplitResult], tuple[int, bytes]]


@contextmanager
def serve(route: Route) -> Iterator[tuple[str, Counter[str]]]:
    """Answer GET requests on a free port of 127.0.0.1 from a thread of this process:
    ``route(base, url)`` gives the status and body of a request (``base`` is the server's
    ``http://127.0.0.1:PORT``, ``url`` the request's split path). Yields ``base`` and a count of
    the requests per path; the server stops on exit."""
    hits: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            hits[url.path] += 1
            status, body = route(f"http://127.0.0.1:{httpd.server_port}", url)
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}", hits
    finally:
        httpd.shutdown()
