"""lift through its three front doors — ``asr-audit lift --json``, ``[probes.lift]`` in a spec and
``asr_audit.api.lift`` — gives the same numbers, ``by_voice`` and ``skipped`` included (before issue 28
only a spec run had them); the corpus, the model and the shared store: tests/support/audio_parity.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from audio_parity import LIMIT, MANIFEST, as_json, spec_entry, store_rows, verb

from asr_audit import api

pytestmark = pytest.mark.slow

MODEL = "whisper-tiny.en-pt"
CASES: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "full spans, no gate": (["--spans", "full", "--gate-max-wer", "inf"], {"spans": "full", "gate_max_wer": "inf"}),
    "masked spans with decoys": (["--spans", "masked", "--decoys", "2"], {"spans": "masked", "decoys": 2}),
}


def _toml(values: dict[str, Any]) -> str:
    out = ""
    for k, v in values.items():
        out += f'{k} = "{v}"\n' if k == "spans" else f"{k} = {v}\n"
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_the_verb_the_spec_and_the_api_agree(case: str, tmp_path: Path, run_cli: Any) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    flags, values = CASES[case]
    if values["spans"] == "masked":
        pytest.importorskip("pocketsphinx")
    store = tmp_path / "store.sqlite"
    v = verb(run_cli, tmp_path / "verb.json", "lift", "--model", MODEL, "--store", store, *flags)
    rows = store_rows(store, "score")
    s = spec_entry(run_cli, tmp_path / "spec", MODEL, "lift", _toml(values), store)
    keywords: dict[str, Any] = {k: float(x) if x == "inf" else x for k, x in values.items()}
    a = as_json(api.lift(MANIFEST, [MODEL], store=store, limit=LIMIT, **keywords).to_dict())
    assert v == s == a
    assert store_rows(store, "score") == rows  # the spec and the API scored nothing the verb had not
    m = v["models"][0]
    assert m["model"] == MODEL and m["n"] >= 3 and "items_per_s" not in m and m["scored_rows"] > 0
    assert v["by_voice"] and {r["voice"] for r in v["by_voice"]} == {"flite-slt"} and v["skipped"] == []


def test_refdis_spans_read_the_same_file_through_every_door(tmp_path: Path, run_cli: Any) -> None:
    """``spans = "refdis"`` with ``refdis = PATH`` (a spec names the file relative to its folder; before
    issue 28 only the verb could)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import json

    from asr_audit.corpus.spec import load_corpus

    clip = load_corpus(MANIFEST).clips[1]  # "She paid 45 dollars for the old wooden chair."
    edit = {"clip_id": clip.id, "kind": "substitution", "ref_indices": [2, 3], "alt_text": "forty five dollars"}
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "refdis.json").write_text(
        json.dumps({"edits": [edit], "references": {clip.id: clip.reference}})
    )
    store = tmp_path / "store.sqlite"
    flags = ["--spans", "refdis", "--refdis", tmp_path / "spec" / "refdis.json"]
    v = verb(run_cli, tmp_path / "verb.json", "lift", "--model", MODEL, "--store", store, *flags)
    s = spec_entry(run_cli, tmp_path / "spec", MODEL, "lift", 'spans = "refdis"\nrefdis = "refdis.json"\n', store)
    assert v == s and v["models"][0]["n"] == 1
