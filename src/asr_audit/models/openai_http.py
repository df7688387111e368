"""``openai:<base url>#<model>`` — any server speaking OpenAI's ``/v1/audio/transcriptions``.

Each clip is uploaded as a 16 kHz 16-bit mono WAV (multipart form: ``file``, ``model``,
``temperature=0``, ``response_format=json`` and ``language`` when set) with httpx. Connection
errors, timeouts, HTTP 408, 429 and 5xx are retried with exponential backoff (honouring
``Retry-After``), at most ``max_retries`` times per clip; any other 4xx fails the clip at once,
and a redirect is reported as one (its target named) rather than followed. When some clips of
a batch fail, the others' transcripts are kept (:class:`~asr_audit.errors.PartialBatchError`):
a successful clip is never sent — or billed — twice.

The per-request timeout is ``$ASR_AUDIT_OPENAI_TIMEOUT_S`` seconds (default 120); it does not
change outputs, so it is not part of the identity.

The API key comes from ``$ASR_AUDIT_OPENAI_API_KEY``, else ``$OPENAI_API_KEY`` (none: no
``Authorization`` header, as local servers need). It is sent only in that header: it is never
part of the spec, the identity or the store, and never appears in a message or log: every quote of
a server's words passes through :func:`asr_audit.redact.redact` (the key, ``Authorization``
headers and ``sk-...``-like tokens masked), since a proxy may echo the request headers back. URLs with
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

from asr_audit.errors import BackendError, ConfigError, PartialBatchError, require
from asr_audit.models.base import TRANSCRIBE, BaseBackend, DecodeOptions, register_backend
from asr_audit.redact import quote_server

KEY_ENV_VARS = ("ASR_AUDIT_OPENAI_API_KEY", "OPENAI_API_KEY")
TIMEOUT_ENV_VAR = "ASR_AUDIT_OPENAI_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 120.0
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})  # any other 4xx will not change on a resend
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
        raise ConfigError(
            f"openai spec 'openai:{arg}' names no model; fix: openai:<base url>#<model>, "
            "e.g. openai:http://127.0.0.1:8000#whisper-1"
        )
    parts = urlsplit(base.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"openai spec: {base!r} is not an http(s) URL; fix: e.g. openai:https://api.openai.com#whisper-1"
        )
    if parts.username or parts.password:
        raise ConfigError(
            "openai spec: the URL holds credentials; fix: remove them from the URL and set "
            f"${KEY_ENV_VARS[0]} instead (the key must not enter specs, stores or logs)"
        )
    if parts.query or parts.fragment:
        raise ConfigError(
            "openai spec: the base URL must not have a query string; fix: give scheme://host[:port][/path]"
        )
    return base.strip().rstrip("/"), model.strip()


def api_key_from_env() -> str | None:
    """The first non-empty key among :data:`KEY_ENV_VARS`."""
    return next((os.environ[v] for v in KEY_ENV_VARS if os.environ.get(v)), None)


def timeout_from_env() -> float:
    """``$ASR_AUDIT_OPENAI_TIMEOUT_S`` as seconds (> 0), else :data:`DEFAULT_TIMEOUT_S`."""
    raw = os.environ.get(TIMEOUT_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ConfigError(
            f"${TIMEOUT_ENV_VAR}={raw!r} is not a positive number of seconds; "
            f"fix: e.g. export {TIMEOUT_ENV_VAR}=300, or unset it for {DEFAULT_TIMEOUT_S:g} s"
        )
    return value


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
        timeout_s: float | None = None,
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
        self.timeout_s = timeout_from_env() if timeout_s is None else float(timeout_s)
        if not self.timeout_s > 0:
            raise ConfigError(f"openai backend timeout_s={timeout_s!r} must be > 0; fix: e.g. 120")
        self.max_retries = max_retries
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

    def _quote(self, text: str, limit: int = 160) -> str:
        return quote_server(text, limit, secrets=[self._api_key])

    def _one(self, audio: np.ndarray) -> str:
        """One clip's transcript: at most ``max_retries + 1`` requests, retrying only transient failures."""
        httpx = require("httpx", "http")
        data = {"model": self.model, "temperature": "0", "response_format": "json"}
        if self.options.language:
            data["language"] = self.options.language
        files = {"file": ("audio.wav", wav_bytes(audio), "audio/wav")}
        problem = "no attempt made"
        attempts = self.max_retries + 1
        for attempt in range(attempts):
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
            if 300 <= resp.status_code < 400:
                target = self._quote(resp.headers.get("location", "no Location header"), 200)
                raise BackendError(
                    f"{self.spec}: HTTP {resp.status_code} redirect from {self.endpoint} to {target}; "
                    "fix: put the final URL (scheme, host and path) in the spec"
                )
            if resp.status_code >= 400:
                raise BackendError(
                    f"{self.spec}: HTTP {resp.status_code} from {self.endpoint} "
                    f"({self._quote(resp.text)}); "
                    "fix: check the model name, the API key variable and the server log"
                )
            return self._parse(resp)
        raise BackendError(
            f"{self.spec}: {problem} after {attempts} attempts; "
            "fix: check that the server is up and reachable, then rerun to resume"
        )

    def _parse(self, resp) -> str:  # noqa: ANN001
        text = self._text(resp)
        if self._api_key and len(self._api_key) >= 6 and self._api_key in text:
            raise BackendError(
                f"{self.spec}: the server's transcript holds the API key (an echoing proxy?); not stored; "
                "fix: point the spec at the transcription server itself"
            )
        return text

    def _text(self, resp) -> str:  # noqa: ANN001
        if resp.headers.get("content-type", "").startswith("text/plain"):
            return resp.text.strip()
        try:
            body = resp.json()
        except ValueError:
            raise BackendError(
                f"{self.spec}: the server answered non-JSON ({self._quote(resp.text, 80)!r}); "
                "fix: point the spec at an OpenAI-compatible /v1/audio/transcriptions server"
            ) from None
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise BackendError(
                f"{self.spec}: the server's JSON has no 'text' string; "
                "fix: point the spec at an OpenAI-compatible server"
            )
        return body["text"].strip()

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        """One request chain per clip; a failed clip raises :class:`PartialBatchError` with the others' texts."""
        texts: list[str | None] = []
        reasons: list[str | None] = []
        for audio in audios:
            try:
                texts.append(self._one(audio))
                reasons.append(None)
            except BackendError as exc:
                texts.append(None)
                reasons.append(str(exc))
        if any(reasons):
            raise PartialBatchError(texts, reasons)
        return [t for t in texts if t is not None]

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
