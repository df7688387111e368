"""``openai:<base url>#<model>`` — any server speaking OpenAI's ``/v1/audio/transcriptions``.

Each clip is uploaded as a 16 kHz 16-bit mono WAV (multipart form: ``file``, ``model``,
``temperature=0``, ``response_format=json`` and ``language`` when set) with httpx. Connection
errors, timeouts, HTTP 429 and 5xx are retried with exponential backoff (honouring
``Retry-After``); other HTTP errors fail the clip at once.

The API key comes from ``$ASR_AUDIT_OPENAI_API_KEY``, else ``$OPENAI_API_KEY`` (none: no
``Authorization`` header, as local servers need). It is sent only in that header: it is never
part of the spec, the identity or the store, and never appears in a message or log. URLs with
embedded credentials are refused for the same reason.

A remote model's weights cannot be hashed; the identity records ``remote`` instead, so results
are cached per (URL, model name, options) — point a new URL or model name at a changed server.
"""

from __future__ import annotations

import io
import os
import time
import wave
from collections.abc import Sequence
from urllib.parse import urlsplit

import numpy as np

from asr_audit.errors import BackendError, ConfigError, require
from asr_audit.models.base import TRANSCRIBE, BaseBackend, DecodeOptions, register_backend

KEY_ENV_VARS = ("ASR_AUDIT_OPENAI_API_KEY", "OPENAI_API_KEY")
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
REMOTE_WEIGHTS = "remote"


def wav_bytes(samples: np.ndarray, sample_rate: int = 16_000) -> bytes:
    """16-bit PCM mono WAV bytes of float samples in [-1, 1] (clipped)."""
    pcm = np.round(np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0) * 32767.0).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def parse_openai_spec(arg: str) -> tuple[str, str]:
    """``'<base url>#<model>'`` -> (normalized base url, model).

    >>> parse_openai_spec("http://127.0.0.1:8000/#whisper-1")
    ('http://127.0.0.1:8000', 'whisper-1')
    """
    base, sep, model = arg.partition("#")
    if not sep or not model.strip():
        raise ConfigError(f"openai spec 'openai:{arg}' names no model; fix: openai:<base url>#<model>, "
                          "e.g. openai:http://127.0.0.1:8000#whisper-1")
    parts = urlsplit(base.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"openai spec: {base!r} is not an http(s) URL; fix: e.g. openai:https://api.openai.com#whisper-1")
    if parts.username or parts.password:
        raise ConfigError("openai spec: the URL holds credentials; fix: remove them from the URL and set "
                          f"${KEY_ENV_VARS[0]} instead (the key must not enter specs, stores or logs)")
    if parts.query or parts.fragment:
        raise ConfigError("openai spec: the base URL must not have a query string; fix: give scheme://host[:port][/path]")
    return base.strip().rstrip("/"), model.strip()


def api_key_from_env() -> str | None:
    """The first non-empty key among :data:`KEY_ENV_VARS`."""
    return next((os.environ[v] for v in KEY_ENV_VARS if os.environ.get(v)), None)


class OpenAIHTTPBackend(BaseBackend):
    """Transcription through an OpenAI-compatible HTTP server, one request per clip."""

    capabilities = frozenset({TRANSCRIBE})
    code_version = "openai-http/1"
    max_duration = None

    def __init__(
        self,
        base_url: str,
        model: str,
        options: DecodeOptions,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
    ) -> None:
        if options.beam_size != 1:
            raise ConfigError("openai backends decode as the server does; fix: leave beam_size at 1")
        super().__init__(f"openai:{base_url}#{model}", options, REMOTE_WEIGHTS)
        self.base_url, self.model = base_url, model
        path = "translations" if options.task == "translate" else "transcriptions"
        self.endpoint = f"{base_url}/audio/{path}" if base_url.endswith("/v1") else f"{base_url}/v1/audio/{path}"
        self._api_key = api_key if api_key is not None else api_key_from_env()
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self._client = None

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIHTTPBackend({self.spec!r})"

    def _http(self):  # noqa: ANN202
        if self._client is None:
            httpx = require("httpx", "http")
            self._client = httpx.Client(timeout=httpx.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s)))
        return self._client

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff_s * (2**attempt)
        if retry_after:
            try:
                delay = max(delay, float(retry_after))
            except ValueError:
                pass
        time.sleep(min(delay, self.max_backoff_s))

    def _one(self, audio: np.ndarray) -> str:
        httpx = require("httpx", "http")
        data = {"model": self.model, "temperature": "0", "response_format": "json"}
        if self.options.language:
            data["language"] = self.options.language
        files = {"file": ("audio.wav", wav_bytes(audio), "audio/wav")}
        problem = "no attempt made"
        for attempt in range(self.max_retries + 1):
            try:
                resp = self._http().post(self.endpoint, data=data, files=files, headers=self._headers())
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__} talking to {self.endpoint}"
                if attempt < self.max_retries:
                    self._wait(attempt, None)
                continue
            if resp.status_code in RETRY_STATUS:
                problem = f"HTTP {resp.status_code} from {self.endpoint}"
                if attempt < self.max_retries:
                    self._wait(attempt, resp.headers.get("retry-after"))
                continue
            if resp.status_code >= 400:
                detail = " ".join(resp.text.split())[:160]
                if self._api_key:
                    detail = detail.replace(self._api_key, "***")
                raise BackendError(f"{self.spec}: HTTP {resp.status_code} from {self.endpoint} ({detail}); "
                                   "fix: check the model name, the API key variable and the server log")
            return self._parse(resp)
        raise BackendError(f"{self.spec}: {problem} after {self.max_retries + 1} attempts; "
                           "fix: check that the server is up and reachable, then rerun to resume")

    def _parse(self, resp) -> str:  # noqa: ANN001
        if resp.headers.get("content-type", "").startswith("text/plain"):
            return resp.text.strip()
        try:
            body = resp.json()
        except ValueError:
            raise BackendError(f"{self.spec}: the server answered non-JSON ({resp.text[:80]!r}); "
                               "fix: point the spec at an OpenAI-compatible /v1/audio/transcriptions server") from None
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise BackendError(f"{self.spec}: the server's JSON has no 'text' string; "
                               "fix: point the spec at an OpenAI-compatible server")
        return body["text"].strip()

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        return [self._one(a) for a in audios]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


@register_backend(
    "openai",
    description="OpenAI-compatible /v1/audio/transcriptions server; openai:<base url>#<model>, "
    "key from $ASR_AUDIT_OPENAI_API_KEY or $OPENAI_API_KEY",
    capabilities=[TRANSCRIBE],
    extra="http",
)
def _make_openai(arg: str, options: DecodeOptions) -> OpenAIHTTPBackend:
    base, model = parse_openai_spec(arg)
    return OpenAIHTTPBackend(base, model, options)
