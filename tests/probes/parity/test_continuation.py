"""continuation through its three front doors — ``asr-audit continue --json``, ``[probes.continuation]``
in a spec and ``asr_audit.api.continuation`` — gives the same numbers, ``skipped`` included (before
issue 28 only a spec run had it); the corpus, the model and the shared store:
tests/support/audio_parity.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from audio_parity import LIMIT, MANIFEST, as_json, spec_entry, store_rows, verb

from asr_audit import api

pytestmark = pytest.mark.slow

MODEL = "whisper-tiny.en-pt"


def test_the_verb_the_spec_and_the_api_agree(tmp_path: Path, run_cli: Any) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("pocketsphinx")
    store = tmp_path / "store.sqlite"
    flags = ["--hide-words", "2", "--extra-tokens", "4"]
    v = verb(run_cli, tmp_path / "verb.json", "continue", "--model", MODEL, "--store", store, *flags)
    rows = store_rows(store, "forced")
    table = "hide_words = 2\nextra_tokens = 4\n"
    s = spec_entry(run_cli, tmp_path / "spec", MODEL, "continuation", table, store)
    a = as_json(api.continuation(MANIFEST, [MODEL], store=store, limit=LIMIT, hide_words=2, extra_tokens=4))
    assert v == s == a
    assert store_rows(store, "forced") == rows  # the spec and the API decoded nothing the verb had not
    m = v["models"][0]
    assert m["model"] == MODEL and m["n_clips"] == LIMIT and v["skipped"] == []
    assert v["params"] == {"hide_words": 2, "extra_tokens": 4, "seed": 0}
