"""The battery and the courtesy study through their three front doors give the same numbers: the verb
(``asr-audit battery --json``), a one-probe spec (``asr-audit run``, the ``results.json`` entry) and
the Python API (``asr_audit.battery``), on two flite clips that say a courtesy the reference omits,
with the bundled offline whisper-tiny.en.

The three share one store, so the verb transcribes and the others read its transcripts back: what is
compared is everything the probe does with them (options, conditions, panel, normalizer, items,
intervals, differences, the study). A realized clip the spec or the API built differently would
have another audio hash, miss the store and be transcribed again: the store's counts say none was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ray_backends import build_courtesy_world

import asr_audit
from asr_audit.corpus.spec import load_corpus

MODEL = "whisper-tiny.en"
CASES: dict[str, tuple[str, list[str], dict[str, Any]]] = {
    # measure, conditions, other options as spec values (the verb's flags say the same); the refdis
    # case's spoken texts also change a word the audio does not (an item the model follows the reference on)
    "refdis": ("refdis", ["noise:10db", "reverb:0.6"], {"resamples": 50, "normalizer": "basic"}),
    "courtesy": ("courtesy", ["noise:10db", "truncate:1w0.25s"], {"resamples": 50}),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A two-clip manifest whose audio opens with a courtesy, and the spoken texts."""
    from asr_audit.audio.voices import available_voices

    if "flite-kal16" not in available_voices():
        pytest.skip("flite not installed")
    return build_courtesy_world(tmp_path_factory.mktemp("parity"), n=2)


def _misheard(spoken: Path, out: Path) -> Path:
    """``spoken`` with the last word of every text replaced by one the audio does not say."""
    rows = [json.loads(line) for line in spoken.read_text().splitlines()]
    out.write_text(
        "".join(json.dumps({**r, "spoken": r["spoken"].rsplit(" ", 1)[0] + " tomorrow."}) + "\n" for r in rows)
    )
    return out


def _verb(run_cli: Any, tmp: Path, man: Path, sp: Path, store: Path, case: str) -> dict[str, Any]:
    measure, conditions, extra = CASES[case]
    out = tmp / f"{case}-verb.json"
    code, _, err = run_cli(
        "battery",
        *("--model", MODEL, "--corpus", man, "--probe", measure, "--conditions", ",".join(conditions)),
        *("--spoken", sp, "--store", store, "--resamples", extra["resamples"], "--seed", 3),
        *("--normalizer", extra.get("normalizer", "whisper"), "--json", out),
    )
    assert code == 0, err
    return json.loads(out.read_text())


def _spec(run_cli: Any, tmp: Path, man: Path, sp: Path, store: Path, case: str) -> dict[str, Any]:
    measure, conditions, extra = CASES[case]
    table = "courtesy" if measure == "courtesy" else "battery"
    spec = tmp / f"{case}.toml"
    (tmp / "spoken.jsonl").write_text(sp.read_text())  # named relative to the spec's folder below
    spec.write_text(
        f'title = "parity"\nseed = 3\nnormalizer = "{extra.get("normalizer", "whisper")}"\n'
        f'output = "{tmp / (case + "-out")}"\n'
        f'[[corpus]]\nname = "{load_corpus(str(man)).name}"\nspec = "{man}"\n[[model]]\nname = "{MODEL}"\nspec = "{MODEL}"\n'
        f"[probes.{table}]\n"
        + ("" if table == "courtesy" else f'measure = "{measure}"\n')
        + f'conditions = {json.dumps(conditions)}\nspoken = "spoken.jsonl"\nresamples = {extra["resamples"]}\n'
    )
    code, _, err = run_cli("run", spec, "--store", store, "--no-progress")
    assert code == 0, err
    results = json.loads((tmp / (case + "-out") / "results.json").read_text())
    (entry,) = [e for e in results["probes"] if e["probe"] == table]
    return entry["result"]


def _api(man: Path, sp: Path, store: Path, case: str) -> dict[str, Any]:
    measure, conditions, extra = CASES[case]
    result = asr_audit.battery(
        str(man),
        [MODEL],
        conditions,
        store=store,
        seed=3,
        normalizer=extra.get("normalizer", "whisper"),
        measure=measure,
        spoken=str(sp),
        resamples=extra["resamples"],
    )
    return result.to_dict()


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_verb_spec_and_api_give_the_same_battery(run_cli, world, tmp_path: Path, case: str) -> None:
    from asr_audit.store.sqlite import open_store

    man, sp = world
    if case == "refdis":
        sp = _misheard(sp, tmp_path / "said.jsonl")
    store = tmp_path / "store.sqlite"
    verb = _verb(run_cli, tmp_path, man, sp, store, case)
    with open_store(store) as s:
        n_after_verb = s.count()
    spec = _spec(run_cli, tmp_path, man, sp, store, case)
    api = _api(man, sp, store, case)
    assert verb == spec == api
    with open_store(store) as s:
        assert s.count() == n_after_verb  # every realized clip had the verb's hash
    cells = {c["condition"]: c for c in verb["cells"]}
    assert set(cells) == {"original", *CASES[case][1]}
    if case == "refdis":  # per clip the opener (heard: 0) and the last word (the reference's: 1)
        assert cells["original"]["n"] == 4 and cells["original"]["k"] == 2, cells
    else:
        assert all(c["n"] == 2 for c in cells.values())
        assert {r["condition"] for r in verb["study"]} == {"full", "truncated", "attn-isolated", "translate"}
