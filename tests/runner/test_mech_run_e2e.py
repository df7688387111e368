"""``asr-audit run`` with a ``[probes.mech]`` probe on a real tiny model (the bundled tiny.en rebuilt
in PyTorch), end to end: real clips in two flite voices -> ``mech capture`` -> ``mech direction``
-> ``run``; the steering table lands in results.json and the report, a rerun is served from the
store byte for byte, and bad ``[probes.mech]`` values are one-line errors naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
sf = pytest.importorskip("soundfile")

from mech_set import TEST, VOICE_A, VOICE_B  # noqa: E402 - tests/support, after the skips
from mech_set import write_set as _write_set  # noqa: E402

from asr_audit.mech.directions import load_direction  # noqa: E402
from asr_audit.store.sqlite import Store  # noqa: E402

MODEL = "whisper-tiny.en-pt"
SITES = "decoder.layers.0.out,decoder.layers.1.out,decoder.layers.2.out,decoder.layers.3.out"

SPEC = """
title = "mech e2e"
seed = 0
output = "out"
store = "store.sqlite"
[[corpus]]
name = "held-out"
spec = "{corpus}"
[[model]]
name = "tiny"
spec = "{model}"
[probes.mech]
model = "tiny"
direction = "voice"
directions = "{dirs}"
mode = "mean-ablate"
n_random = 1
truth = "{truth}"
"""


@pytest.fixture()
def counted_tiny(tiny_pt, monkeypatch):
    """Every ``load_backend`` of the run and the ``mech`` verbs returns the one loaded tiny model,
    whose ``transcribe`` counts the clips it decodes (``counted_tiny.calls``)."""
    import asr_audit.models.base as base

    real = tiny_pt.transcribe

    def transcribe(audios):
        counted_tiny.calls += len(audios)
        return real(audios)

    def load_backend(spec, options=None, runtime=None):
        assert spec == MODEL
        return tiny_pt

    counted_tiny.calls = 0
    monkeypatch.setattr(tiny_pt, "transcribe", transcribe)
    monkeypatch.setattr(base, "load_backend", load_backend)
    return counted_tiny


def _rows(store: Path) -> int:
    s = Store(store)
    try:
        return s.count()
    finally:
        s.close()


def test_run_steers_on_a_real_model_and_a_rerun_is_served_from_the_store(tmp_path: Path, run_cli, counted_tiny) -> None:
    _write_set(tmp_path / "set")
    train, test = tmp_path / "set" / "calib-train.jsonl", tmp_path / "set" / "calib-test.jsonl"
    dirs = tmp_path / "dirs"
    for voice, cap in ((VOICE_A, "A"), (VOICE_B, "B")):
        code, _, err = run_cli(
            "mech", "capture", "-m", MODEL, "-c", train, "--speaker", voice, "--sites", SITES, "--pool", "mean",
            "-o", tmp_path / "caps" / cap,
        )  # fmt: skip
        assert code == 0, err
    code, _, err = run_cli(
        "mech", "direction", "--a", tmp_path / "caps" / "A", "--b", tmp_path / "caps" / "B", "--name", "voice",
        "--directions", dirs,
    )  # fmt: skip
    assert code == 0, err
    direction = load_direction("voice", dirs)
    assert counted_tiny.calls == 0  # captures are teacher-forced: nothing decoded yet

    spec = tmp_path / "audit.toml"
    spec.write_text(SPEC.format(corpus=test, model=MODEL, dirs=dirs, truth=tmp_path / "set"))
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    out = tmp_path / "out"
    results = json.loads((out / "results.json").read_text())
    (entry,) = [e for e in results["probes"] if e["probe"] == "mech"]
    assert entry["corpus"] == "held-out" and list(entry["result"]["steer"]) == ["tiny mean-ablate"]
    steer = entry["result"]["steer"]["tiny mean-ablate"]
    assert steer["model"]["name"] == "tiny" and steer["mode"] == "mean-ablate"
    assert steer["direction"]["hash"] == direction.hash and steer["direction"]["site"] == direction.site
    arms = {a["label"]: a for a in steer["arms"]}
    assert list(arms) == ["clean", "mean-ablate-k1", "random-0", "shuffled"]
    assert arms["clean"]["intervention"] is None
    assert arms["mean-ablate-k1"]["intervention"]["sites"] == [direction.site]
    for arm in arms.values():
        r = arm["accept_ref"]
        assert r["n"] == len(TEST) == arm["n_sites"] and 0 <= r["k"] <= r["n"]
        assert r["ci_low"] <= r["rate"] <= r["ci_high"] and r["rate"] == pytest.approx(r["k"] / r["n"])
        assert set(arm["flips"]) == {"ref_to_spoken", "spoken_to_ref"} and arm["n_failed"] == 0
        assert isinstance(arm["wer"], float) and arm["wer"] >= 0
    assert arms["clean"]["flips"] == {"ref_to_spoken": 0, "spoken_to_ref": 0}
    # each arm's rows are stored under their own key: clean (the run's transcription) + 3 arms
    assert _rows(tmp_path / "store.sqlite") == 4 * len(TEST)
    assert counted_tiny.calls == 4 * len(TEST)
    html = (out / "report.html").read_text()
    assert "Mechanism — held-out" in html and "mean-ablate-k1" in html and "random-0" in html

    # the clean arm is the plain model: its WER is the one `asr-audit transcribe` reports (from the store)
    code, _, err = run_cli("transcribe", "-m", MODEL, "-c", test, "--out", tmp_path / "preds",
                           "--store", tmp_path / "store.sqlite")  # fmt: skip
    assert code == 0, err
    from asr_audit.mechrun.steer import wer_on

    (pred,) = (tmp_path / "preds").glob("*.jsonl")
    hyps = {json.loads(x)["audio_filepath"]: json.loads(x)["pred_text"] for x in pred.read_text().splitlines()}
    refs = {json.loads(x)["audio_filepath"]: json.loads(x)["text"] for x in pred.read_text().splitlines()}
    assert arms["clean"]["wer"] == pytest.approx(wer_on(hyps, refs))

    # a rerun decodes nothing and writes byte-identical results
    first = (out / "results.json").read_bytes()
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    assert counted_tiny.calls == 4 * len(TEST) and _rows(tmp_path / "store.sqlite") == 4 * len(TEST)
    assert (out / "results.json").read_bytes() == first

    # bad [probes.mech] values: one line on stderr naming the field and the fix, exit 2
    text = spec.read_text()  # [probes.mech] is its last table: a line appended lands there
    bad = [
        (text.replace('direction = "voice"', 'direction = "nope"'), '[probes.mech] direction = "nope"', "saved: voice"),
        (text + 'site = "decoder.layers.9.out"\n', '[probes.mech] site = "decoder.layers.9.out"', "not a hook site"),
        (text + 'site = "decoder.layer3"\n', "[probes.mech] site", "not a hook-site name"),
        (text + 'alpha = "big"\n', "[probes.mech] alpha", "expected a number"),
        (text + "alpha = nan\n", "[probes.mech] alpha = nan", "not a finite number"),
    ]
    for toml, field, problem in bad:
        spec.write_text(toml)
        code, _, err = run_cli("run", spec, "--no-progress")
        line = err.strip()
        assert code == 2 and "\n" not in line, line
        assert field in line and problem in line and "fix:" in line, line
    assert counted_tiny.calls == 4 * len(TEST)  # the errors came before any steering
