"""asr_audit.redact: secrets masked, ordinary text (file names, paths) untouched."""

from __future__ import annotations

import pytest

from asr_audit.redact import quote_server, redact

KEY = "sk-proj-AbCdEf0123456789xyz"


@pytest.mark.parametrize(
    "text",
    [
        f"Authorization: Bearer {KEY}",
        f'{{"authorization": "Bearer {KEY}"}}',
        f"authorization={KEY}",
        f"proxy-authorization: Basic {KEY}",
        f"x-api-key: {KEY}",
        f'"api_key": "{KEY}"',
        f"your key {KEY} is invalid",
        f"Bearer {KEY}",
        "token hf_abcdefghijklmnopqrstuvwxyz0123 expired",
    ],
)
def test_secrets_are_masked(text: str) -> None:
    out = redact(text)
    assert KEY not in out and KEY[8:] not in out and "hf_abcdefghijklmnopqrstuvwxyz0123" not in out
    assert "***" in out


def test_configured_values_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "local-key-42abc")
    assert redact("server says local-key-42abc is wrong") == "server says *** is wrong"
    assert redact("plain", secrets=["plain-but-long"]) == "plain"


@pytest.mark.parametrize(
    "text",
    [
        "tables/refdis-task-abcdefghijklmnopq.csv",
        "/data/disk-0123456789abcdef/clip.flac: could not decode",
        "MODEL_whisper-tiny.en_DATASET_librivox_test.jsonl",
        "HTTP 404 from http://127.0.0.1:8000/v1/audio/transcriptions",
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == text


def test_quote_redacts_before_cutting() -> None:
    body = "x" * 70 + f" Authorization: Bearer {KEY}"
    out = quote_server(body, limit=90)
    assert KEY[:6] not in out[70:] or "***" in out
    assert "AbCdEf" not in out
