"""Redaction of secrets from any text that quotes a server's (or a user's) words.

A misbehaving proxy can echo request headers into its error page; a message that quotes that page
would carry ``Authorization: Bearer sk-...`` to stderr, the store's errors table, ``results.json``,
``tables/failures.csv`` and ``report.html``. Every path that quotes outside text passes it through
:func:`redact` first.

>>> redact("proxy says: Authorization: Bearer sk-abcdefghijklmnop1234 denied")
'proxy says: Authorization: *** denied'
>>> redact("token=abc123 key=sk-proj-0123456789abcdefXYZ")
'token=abc123 key=sk-***'
>>> redact("the value s3cr3t-value leaked", secrets=["s3cr3t-value"])
'the value *** leaked'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

MASK = "***"
# env variables whose values are secrets wherever they appear (the HTTP backends' API keys)
SECRET_ENV_VARS = ("ASR_AUDIT_OPENAI_API_KEY", "OPENAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
_MIN_SECRET = 6  # shorter configured values would mask ordinary words

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # a header line or JSON field: Authorization: Bearer xyz / "authorization": "Basic xyz"
    (
        re.compile(
            r"""(?i)(["']?(?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token)\s+)?[^\s"',;]+"""
        ),
        r"\1" + MASK,
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}"), r"\1 " + MASK),
    (re.compile(r"""(?i)((?:x-)?api[-_]?key["']?\s*[:=]\s*["']?)[^\s"',;]+"""), r"\1" + MASK),
    # OpenAI-style secret keys (sk-..., sk-proj-...) and Hugging Face tokens (hf_...)
    (re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{12,}"), "sk-" + MASK),
    (re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}"), "hf_" + MASK),
)


def configured_secrets() -> list[str]:
    """The secret values configured in this process's environment (see :data:`SECRET_ENV_VARS`)."""
    return [v for name in SECRET_ENV_VARS if len(v := os.environ.get(name, "").strip()) >= _MIN_SECRET]


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every configured or given secret, auth header and key-like token masked."""
    for secret in sorted(
        {s for s in (*secrets, *configured_secrets()) if s and len(s) >= _MIN_SECRET}, key=len, reverse=True
    ):
        text = text.replace(secret, MASK)
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def quote_server(text: str, limit: int = 160, secrets: Iterable[str | None] = ()) -> str:
    """A server's words for a one-line message: whitespace collapsed, redacted, then cut to ``limit``.

    Redaction runs before the cut, so a secret straddling the limit cannot survive half-masked.

    >>> quote_server("<h1>Bad\\n gateway</h1> Authorization: Bearer sk-0123456789abcdefgh", limit=40)
    '<h1>Bad gateway</h1> Authorization: ***'
    """
    return redact(" ".join(text.split()), secrets)[:limit]
