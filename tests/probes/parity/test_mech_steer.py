"""Parity of the steering probe ``mech``: ``asr-audit mech steer --json``, a one-probe spec
(``asr-audit run``, results.json's entry) and ``asr_audit.mech_steer`` give the same table on the
same model, corpus, direction and intervention (the bundled tiny.en rebuilt in PyTorch, two flite
clips; each door with its own store, so each decodes for itself)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from mech_set import TEST, write_set  # noqa: E402 - tests/support, after the skips

from asr_audit import api  # noqa: E402
from asr_audit.mech.directions import Direction, save_direction  # noqa: E402
from asr_audit.mechrun.steer import wer_on  # noqa: E402

MODEL = "whisper-tiny.en-pt"
SITE = "decoder.layers.2.out"
SPEC = """
title = "mech parity"
seed = 3
output = "out"
store = "spec.sqlite"
[[corpus]]
name = "calib-test"
spec = "{corpus}"
[[model]]
name = "{model}"
spec = "{model}"
[probes.mech]
model = "{model}"
direction = "d"
directions = "{dirs}"
mode = "{mode}"
n_random = 0
positions = "{positions}"
truth = "{truth}"
wer_field = "spoken"
"""


@pytest.fixture()
def one_tiny(tiny_pt, monkeypatch):
    """Every door's ``load_backend`` returns the one loaded tiny model (each door still decodes:
    each has its own store)."""
    import asr_audit.models.base as base

    monkeypatch.setattr(base, "load_backend", lambda spec, options=None, runtime=None: tiny_pt)
    return tiny_pt


def _direction(dirs: Path, width: int) -> None:
    """A fixed direction at a decoder site, with set B's mean (what mean ablation and clamping need)."""
    rng = np.random.default_rng(7)
    vector = rng.standard_normal(width)
    save_direction(Direction("d", SITE, vector, (vector / np.linalg.norm(vector))[None, :], {}, 0.1 * vector), dirs)


def test_the_verb_the_spec_and_the_api_give_the_same_steering_table(tmp_path: Path, run_cli, one_tiny) -> None:
    mode, positions = "clamp", "3:5"  # a clamp at two decoder positions: every option the doors parse differently
    write_set(tmp_path / "set")
    corpus, truth, dirs = tmp_path / "set" / "calib-test.jsonl", tmp_path / "set", tmp_path / "dirs"
    _direction(dirs, 384)  # tiny.en's width

    out = tmp_path / "verb.json"
    code, _, err = run_cli(
        "mech", "steer", "-m", MODEL, "-c", corpus, "--truth", truth, "--direction", "d", "--directions", dirs,
        "--mode", mode, "--n-random", "0", "--positions", positions, "--seed", "3", "--wer-field", "spoken",
        "--store", tmp_path / "verb.sqlite", "--json", out,
    )  # fmt: skip
    assert code == 0, err
    verb = json.loads(out.read_text())
    hypotheses = verb.pop("hypotheses")

    spec = tmp_path / "audit.toml"
    spec.write_text(SPEC.format(corpus=corpus, model=MODEL, dirs=dirs, truth=truth, mode=mode, positions=positions))
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (entry,) = [e for e in results["probes"] if e["probe"] == "mech"]

    run = api.mech_steer(
        corpus, MODEL, "d", directions=str(dirs), mode=mode, n_random=0, positions=positions, truth=str(truth),
        wer_field="spoken", seed=3, store=tmp_path / "api.sqlite",
    )  # fmt: skip

    assert entry["result"] == run.to_dict() == {"steer": {f"{MODEL} {mode}": verb}}
    arms = {a["label"]: a for a in verb["arms"]}
    assert list(arms)[0] == "clean" and len(arms) == 3 and arms["clean"]["accept_ref"]["n"] == len(TEST)
    assert all(a["intervention"]["positions"] == [int(p) for p in positions.split(":")] for a in verb["arms"][1:])
    # the WER is measured against what was said (wer_field), not the references with their omission
    spoken = {json.loads(x)["id"]: json.loads(x)["spoken"] for x in corpus.read_text().splitlines()}
    assert arms["clean"]["wer"] == pytest.approx(wer_on(hypotheses["clean"], spoken))
