"""openai:<url>#<model> against a misbehaving local server: secrets never leak, nothing is sent twice.

The server runs on 127.0.0.1 in a thread and counts requests; every test bounds the number of
requests (no sleeps beyond a fraction of a second, ``backoff_s=0``).
"""

from __future__ import annotations

import io
import json
import threading
import time
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from asr_audit.corpus.clips import ArraySource, Clip, Corpus
from asr_audit.errors import BackendError, ConfigError, PartialBatchError
from asr_audit.models.base import DecodeOptions
from asr_audit.models.openai_http import OpenAIHTTPBackend, parse_openai_spec
from asr_audit.store import Store
from asr_audit.store.transcribe import transcribe_corpus

pytest.importorskip("httpx")
SECRET = "sk-test-ECHOED-0123456789abcdef"


def _frames(body: bytes, content_type: str) -> int:
    """Frames of the uploaded WAV (found by its RIFF header; no multipart parsing needed)."""
    start = body.index(b"RIFF")
    with wave.open(io.BytesIO(body[start:])) as w:
        return w.getnframes()


class _Server:
    """Answers by the uploaded clip's frame count: ``self.fail[n]`` names the misbehaviour for n frames."""

    def __init__(self) -> None:
        self.requests: list[int] = []  # frame count of each request, in order
        self.fail: dict[int, str] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, code: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                n = _frames(body, self.headers["Content-Type"])
                server.requests.append(n)
                mode = server.fail.get(n, "ok")
                # the Authorization line first, as a proxy's debug page might show it
                echo = "".join(
                    f"{k}: {v}\n"
                    for k, v in sorted(self.headers.items(), key=lambda kv: kv[0].lower() != "authorization")
                ).encode()
                if mode == "echo-html":  # a proxy's error page quoting the request headers, status 200
                    self._send(200, b"<pre>" + echo + b"</pre></html>", "text/html")
                elif mode == "echo-400":
                    self._send(400, b"bad request; you sent:\n" + echo, "text/plain")
                elif mode == "echo-text-key":  # status 200, the key inside the "transcript"
                    self._send(200, json.dumps({"text": f"you sent Bearer {SECRET}"}).encode(), "application/json")
                elif mode == "echo-json-key":
                    self._send(401, json.dumps({"error": f"invalid api key {SECRET}"}).encode(), "application/json")
                elif mode.isdigit():
                    self._send(int(mode), b'{"error": "nope"}', "application/json", {"Retry-After": "0"})
                elif mode == "redirect":
                    self._send(
                        302, b"", "text/plain", {"Location": "https://elsewhere.example/v1/audio/transcriptions"}
                    )
                elif mode == "slow":
                    time.sleep(1.5)
                    self._send(200, b'{"text": "late"}', "application/json")
                else:
                    self._send(200, json.dumps({"text": f"{n} frames"}).encode(), "application/json")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def server():
    s = _Server()
    yield s
    s.close()


def _backend(url: str, **kw) -> OpenAIHTTPBackend:
    base, model = parse_openai_spec(f"{url}#tiny-test")
    kw.setdefault("timeout_s", 5.0)
    return OpenAIHTTPBackend(base, model, DecodeOptions(), backoff_s=0.0, api_key=SECRET, **kw)


def _clips(*frames: int) -> tuple[Clip, ...]:
    return tuple(
        Clip(id=f"c{n}", reference="x", source=ArraySource(np.full(n, 0.1, np.float32), 16000)) for n in frames
    )


@pytest.mark.parametrize("mode", ["echo-html", "echo-400", "echo-json-key", "echo-text-key"])
def test_echoed_key_is_redacted_everywhere(
    server: _Server, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASR_AUDIT_OPENAI_API_KEY", SECRET)
    server.fail = {200: mode}
    backend = _backend(server.url, max_retries=0)
    with pytest.raises(BackendError) as info:
        backend.transcribe([np.zeros(200, np.float32)])
    assert SECRET not in str(info.value) and SECRET[3:] not in str(info.value)
    assert "Bearer" not in str(info.value) or "Bearer ***" in str(info.value)
    with Store(tmp_path / "s.sqlite") as st:
        out = transcribe_corpus(backend, Corpus("mem", "test", "mem", _clips(100, 200)), st, batch_size=2)
    assert [r.clip_id for r in out.records] == ["c100"] and [f.clip_id for f in out.failures] == ["c200"]
    assert SECRET not in out.failures[0].reason
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() not in raw


def test_one_failed_clip_does_not_resend_the_batch(server: _Server, tmp_path: Path) -> None:
    server.fail = {200: "500"}
    backend = _backend(server.url, max_retries=2)
    with Store(tmp_path / "s.sqlite") as st:
        out = transcribe_corpus(backend, Corpus("mem", "test", "mem", _clips(100, 200, 300)), st, batch_size=3)
    assert sorted(r.clip_id for r in out.records) == ["c100", "c300"]
    assert [f.clip_id for f in out.failures] == ["c200"] and "after 3 attempts" in out.failures[0].reason
    assert server.requests.count(100) == 1 and server.requests.count(300) == 1  # never billed twice
    assert server.requests.count(200) == 3  # one chain of max_retries + 1, as the message says


def test_partial_batch_error_carries_the_good_texts(server: _Server) -> None:
    server.fail = {200: "404"}
    with pytest.raises(PartialBatchError) as info:
        _backend(server.url).transcribe([np.zeros(100, np.float32), np.zeros(200, np.float32)])
    assert info.value.texts == ["100 frames", None] and "HTTP 404" in (info.value.reasons[1] or "")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 422])
def test_non_retryable_4xx_is_sent_once(server: _Server, status: int) -> None:
    server.fail = {100: str(status)}
    with pytest.raises(BackendError, match=f"HTTP {status}"):
        _backend(server.url, max_retries=3).transcribe([np.zeros(100, np.float32)])
    assert server.requests == [100]


@pytest.mark.parametrize("status", [408, 429, 503])
def test_transient_status_is_retried_per_policy(server: _Server, status: int) -> None:
    server.fail = {100: str(status)}
    with pytest.raises(BackendError, match=f"HTTP {status} .* after 3 attempts"):
        _backend(server.url, max_retries=2).transcribe([np.zeros(100, np.float32)])
    assert server.requests == [100, 100, 100]


def test_redirect_is_reported_as_a_redirect(server: _Server) -> None:
    server.fail = {100: "redirect"}
    with pytest.raises(BackendError, match="HTTP 302 redirect .* to https://elsewhere.example") as info:
        _backend(server.url).transcribe([np.zeros(100, np.float32)])
    assert "non-JSON" not in str(info.value) and "fix:" in str(info.value)
    assert server.requests == [100]


def test_timeout_is_configurable(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_AUDIT_OPENAI_TIMEOUT_S", "0.3")
    server.fail = {100: "slow"}
    backend = _backend(server.url, max_retries=0, timeout_s=None)
    assert backend.timeout_s == 0.3
    t0 = time.perf_counter()
    with pytest.raises(BackendError, match="Timeout"):
        backend.transcribe([np.zeros(100, np.float32)])
    assert time.perf_counter() - t0 < 1.4
    monkeypatch.delenv("ASR_AUDIT_OPENAI_TIMEOUT_S")
    assert _backend(server.url, timeout_s=None).timeout_s == 120.0


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf", "nan"])
def test_bad_timeout_env_is_a_config_error(server: _Server, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("ASR_AUDIT_OPENAI_TIMEOUT_S", value)
    with pytest.raises(ConfigError, match="ASR_AUDIT_OPENAI_TIMEOUT_S.*fix:"):
        _backend(server.url, timeout_s=None)


def test_cli_transcribe_never_prints_or_stores_the_echoed_key(
    server: _Server, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from asr_audit.data import LIBRIVOX_MANIFEST

    monkeypatch.setenv("ASR_AUDIT_OPENAI_API_KEY", SECRET)
    server.fail = dict.fromkeys(range(1, 16000 * 40), "echo-html")  # every clip: an echoing proxy page
    _code, out, err = run_cli(
        "transcribe",
        "--model",
        f"openai:{server.url}#tiny-test",
        "--corpus",
        LIBRIVOX_MANIFEST,
        "--out",
        tmp_path / "preds",
        "--store",
        tmp_path / "s.sqlite",
        "--limit",
        "2",
    )
    assert "Traceback" not in err
    assert SECRET not in out + err and "non-JSON" in err
    raw = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert SECRET.encode() not in raw


def test_run_report_never_holds_the_echoed_key(
    server: _Server,
    tmp_path: Path,
    run_cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """results.json, tables/failures.csv, report.html and the store of a `run` whose server echoes headers."""
    pytest.importorskip("jinja2")
    from asr_audit.data import LIBRIVOX_MANIFEST

    monkeypatch.setenv("ASR_AUDIT_OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ASR_AUDIT_OPENAI_TIMEOUT_S", "10")
    server.fail = dict.fromkeys(range(1, 16000 * 40), "echo-html")
    spec = tmp_path / "audit.toml"
    spec.write_text(
        f'title = "echo"\noutput = "{tmp_path / "out"}"\nstore = "{tmp_path / "s.sqlite"}"\n'
        f'[[corpus]]\nname = "librivox"\nspec = "{LIBRIVOX_MANIFEST}"\nlimit = 2\n'
        f'[[model]]\nname = "echo"\nspec = "openai:{server.url}#tiny-test"\n'
    )
    _code, out, err = run_cli("run", spec, "--no-progress")
    assert "Traceback" not in err and SECRET not in out + err
    written = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert {"out/results.json", "out/report.html", "out/tables/failures.csv"} <= set(written), sorted(written)
    assert b"non-JSON" in written["out/tables/failures.csv"]
    assert not [name for name, data in written.items() if SECRET.encode() in data or SECRET[3:].encode() in data]
