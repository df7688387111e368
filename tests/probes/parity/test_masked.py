"""masked through its three front doors — ``asr-audit masked --json``, ``[probes.masked]`` in a spec and
``asr_audit.api.masked`` — gives the same numbers: one probe object, one options record (the corpus,
the model and the shared store: tests/support/audio_parity.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from audio_parity import LIMIT, MANIFEST, as_json, spec_entry, store_rows, verb

from asr_audit import api

pytestmark = pytest.mark.slow

MODEL = "whisper-tiny.en"
# (verb flags, the same as spec values / API keywords)
CASES: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "defaults: numbers silenced": ([], {}),
    "words, noise fill, looser gate": (
        ["--kind", "word", "--method", "noise", "--gate-max-wer", "0.5", "--pad", "0.02"],
        {"kind": "word", "method": "noise", "gate_max_wer": 0.5, "pad": 0.02},
    ),
}


def _toml(values: dict[str, Any]) -> str:
    return "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in values.items())


@pytest.mark.parametrize("case", list(CASES))
def test_the_verb_the_spec_and_the_api_agree(case: str, tmp_path: Path, run_cli: Any) -> None:
    pytest.importorskip("pocketsphinx")
    pytest.importorskip("ctranslate2")
    flags, values = CASES[case]
    store = tmp_path / "store.sqlite"
    v = verb(run_cli, tmp_path / "verb.json", "masked", "--model", MODEL, "--store", store, *flags)
    rows = store_rows(store)
    s = spec_entry(run_cli, tmp_path / "spec", MODEL, "masked", _toml(values), store)
    a = as_json(api.masked(MANIFEST, [MODEL], store=store, limit=LIMIT, **values).to_dict())
    assert v == s == a
    assert store_rows(store) == rows  # the spec and the API computed nothing the verb had not
    assert v["n_recipes"] >= 3 and [m["model"] for m in v["models"]] == [MODEL]
    assert all(i["model"] == MODEL for i in v["items"])


def test_recipes_exported_by_the_verb_replay_through_the_spec(tmp_path: Path, run_cli: Any) -> None:
    """``--recipes-out`` / ``recipes_in``: the spec (a path relative to its folder) re-applies the verb's
    masks without aligning, and gets the verb's result."""
    pytest.importorskip("pocketsphinx")
    pytest.importorskip("ctranslate2")
    store = tmp_path / "store.sqlite"
    recipes = tmp_path / "spec" / "masks.jsonl"
    recipes.parent.mkdir()
    out = tmp_path / "verb.json"
    v = verb(run_cli, out, "masked", "--model", MODEL, "--store", store, "--recipes-out", recipes)
    s = spec_entry(run_cli, tmp_path / "spec", MODEL, "masked", 'recipes_in = "masks.jsonl"\n', store)
    assert s == v and recipes.read_text().count("\n") == v["n_recipes"]
