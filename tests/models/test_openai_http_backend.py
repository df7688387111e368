"""openai:<url>#<model> against a real local HTTP server started by the test."""

from __future__ import annotations

import email.parser
import email.policy
import io
import json
import logging
import threading
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from asr_audit.corpus.clips import ArraySource, Clip, Corpus
from asr_audit.errors import BackendError, ConfigError
from asr_audit.models.base import DecodeOptions, load_backend
from asr_audit.models.openai_http import OpenAIHTTPBackend, parse_openai_spec
from asr_audit.store import Store
from asr_audit.store.transcribe import transcribe_corpus

pytest.importorskip("httpx")
SECRET = "sk-test-DO-NOT-LEAK-1234567890"


class _Server:
    """A tiny OpenAI-compatible transcription server: parses the multipart upload."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.plan: list[int] = []  # status codes to answer before succeeding
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                    f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body
                )
                fields, files = {}, {}
                for part in msg.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    if part.get_filename():
                        payload = part.get_payload(decode=True)  # a leaf part's bytes
                        assert isinstance(payload, bytes)
                        files[name] = (part.get_filename(), part.get_content_type(), payload)
                    else:
                        fields[name] = part.get_content()
                server.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "fields": fields, "files": files}
                )
                if server.plan:
                    code = server.plan.pop(0)
                    self.send_response(code)
                    if code == 429:
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(b'{"error": "try again"}')
                    return
                if fields.get("model") != "tiny-test":
                    self.send_response(404)
                    self.end_headers()
                    self.wfile.write(b'{"error": "model not found"}')
                    return
                with wave.open(io.BytesIO(files["file"][2])) as w:
                    n, rate, width = w.getnframes(), w.getframerate(), w.getsampwidth()
                payload = json.dumps({"text": f" {n} frames at {rate} hz width {width} "}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def server():
    s = _Server()
    yield s
    s.close()


def _fast(url: str, model: str = "tiny-test", **kw) -> OpenAIHTTPBackend:
    base, model = parse_openai_spec(f"{url}#{model}")
    return OpenAIHTTPBackend(base, model, DecodeOptions(), backoff_s=0.0, timeout_s=5.0, **kw)


def test_uploads_wav_and_sends_key_only_in_header(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASR_AUDIT_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    backend = load_backend(f"openai:{server.url}#tiny-test")
    out = backend.transcribe([np.zeros(16000, np.float32), np.full(800, 0.5, np.float32)])
    assert out == ["16000 frames at 16000 hz width 2", "800 frames at 16000 hz width 2"]
    req = server.requests[0]
    assert req["path"] == "/v1/audio/transcriptions" and req["auth"] == f"Bearer {SECRET}"
    assert req["fields"] == {"model": "tiny-test", "temperature": "0", "response_format": "json", "language": "en"}
    assert req["files"]["file"][:2] == ("audio.wav", "audio/wav")
    ident = backend.identity()
    assert ident.spec == f"openai:{server.url}#tiny-test" and ident.weights_hash == "remote"
    assert SECRET not in json.dumps(ident.to_dict()) and SECRET not in repr(backend)


def test_preferred_env_var_wins(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_AUDIT_OPENAI_API_KEY", "k-asr")
    monkeypatch.setenv("OPENAI_API_KEY", "k-openai")
    load_backend(f"openai:{server.url}/v1#tiny-test").transcribe([np.zeros(10, np.float32)])
    assert server.requests[0]["auth"] == "Bearer k-asr" and server.requests[0]["path"] == "/v1/audio/transcriptions"


def test_retries_5xx_and_429_then_succeeds(server: _Server) -> None:
    server.plan = [503, 429, 500]
    assert _fast(server.url, max_retries=3).transcribe([np.zeros(160, np.float32)]) == [
        "160 frames at 16000 hz width 2"
    ]
    assert len(server.requests) == 4


def test_gives_up_after_retries_and_fails_fast_on_4xx(server: _Server) -> None:
    server.plan = [502] * 10
    with pytest.raises(BackendError, match="HTTP 502 .* after 3 attempts"):
        _fast(server.url, max_retries=2).transcribe([np.zeros(16, np.float32)])
    assert len(server.requests) == 3
    server.plan = []
    with pytest.raises(BackendError, match="HTTP 404.*model not found"):
        _fast(server.url, model="nope").transcribe([np.zeros(16, np.float32)])
    assert len(server.requests) == 4  # no retry on 404


def test_connection_refused_is_retried_then_reported() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(BackendError, match="ConnectError.*after 2 attempts"):
        _fast(f"http://127.0.0.1:{port}", max_retries=1).transcribe([np.zeros(16, np.float32)])


def test_key_never_reaches_store_logs_or_errors(
    server: _Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("ASR_AUDIT_OPENAI_API_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    backend = load_backend(f"openai:{server.url}#tiny-test")
    clips = tuple(
        Clip(id=f"c{i}", reference="x", source=ArraySource(np.full(100 * (i + 1), 0.1, np.float32), 16000))
        for i in range(3)
    )
    server.plan = [400]  # the first clip's request fails: the batch is retried clip by clip
    with Store(tmp_path / "s.sqlite") as st:
        out = transcribe_corpus(backend, Corpus("mem", "test", "mem", clips), st, batch_size=3)
    assert len(out.records) + len(out.failures) == 3 and len(out.records) >= 2
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() not in raw
    assert SECRET not in caplog.text and all(SECRET not in f.reason for f in out.failures)
    assert all(r["auth"] == f"Bearer {SECRET}" for r in server.requests)


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("openai:http://127.0.0.1:9", "names no model"),
        ("openai:ftp://host#m", "not an http"),
        ("openai:http://user:pw@host#m", "holds credentials"),
    ],
)
def test_bad_specs(spec: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_backend(spec)
