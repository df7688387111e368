"""``asr-audit run`` end to end on real offline models: same numbers as the per-probe commands,
and a rerun does no inference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.data import LIBRIVOX_MANIFEST, VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL

pytestmark = pytest.mark.slow

SPEC = """
title = "e2e"
seed = 5
output = "out"
store = "store.sqlite"
[[corpus]]
name = "librivox"
spec = "{librivox}"
[corpus.probes.refdis]
min_panel = 2
loo = false  # a two-model panel cannot score its members leave-one-out
[[corpus]]
name = "vox"
predictions = "{vox}"
panel = {panel}
[[model]]
name = "tiny"
spec = "whisper-tiny.en"
[[model]]
name = "sphinx"
spec = "sphinx:en-us"
batch_size = 2
[panel]
models = ["tiny", "sphinx"]
[probes.refdis]
preset = "anchor"
resamples = 200
[probes.switch_rate]
min_per_arm = 1
"""


def test_run_matches_per_probe_commands_and_rerun_is_cached(tmp_path: Path, run_cli) -> None:
    spec = tmp_path / "audit.toml"
    spec.write_text(
        SPEC.format(librivox=LIBRIVOX_MANIFEST, vox=VOXPOPULI_EXAMPLES, panel=json.dumps(list(VOXPOPULI_PANEL)))
    )
    code, out, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    run1 = json.loads((tmp_path / "out" / "run.json").read_text())
    n_clips = sum(1 for line in LIBRIVOX_MANIFEST.read_text().splitlines() if line.strip())
    assert run1["computed"] == 2 * n_clips and run1["cached"] == 0
    assert (tmp_path / "out" / "report.html").is_file()
    by = {(e["probe"], e["corpus"]): e["result"] for e in results["probes"]}
    assert {("refdis", "vox"), ("switch_rate", "vox"), ("refdis", "librivox"), ("transcribe", "librivox")} <= set(by)

    # same numbers as `asr-audit refdis` on the prediction files
    code, _, err = run_cli(
        "refdis",
        "--preds",
        VOXPOPULI_EXAMPLES,
        "--panel",
        ",".join(VOXPOPULI_PANEL),
        "--preset",
        "anchor",
        "--seed",
        "5",
        "--resamples",
        "200",
        "--json",
        tmp_path / "r.json",
    )
    assert code == 0, err
    direct = json.loads((tmp_path / "r.json").read_text())
    assert by[("refdis", "vox")]["models"] == direct["models"]
    assert by[("refdis", "vox")]["edits"] == direct["edits"]
    # ... and as `asr-audit switch-rate`
    code, _, err = run_cli(
        "switch-rate", "--preds", VOXPOPULI_EXAMPLES, "--min-per-arm", "1", "--json", tmp_path / "s.json"
    )
    assert json.loads((tmp_path / "s.json").read_text())["rows"] == by[("switch_rate", "vox")]["rows"]

    # the audio corpus: `asr-audit transcribe` through the same store, then `asr-audit refdis` on its files
    code, _, err = run_cli(
        "transcribe",
        "--model",
        "whisper-tiny.en,sphinx:en-us",
        "--corpus",
        LIBRIVOX_MANIFEST,
        "--out",
        tmp_path / "preds",
        "--store",
        tmp_path / "store.sqlite",
    )
    assert code == 0, err
    files = sorted((tmp_path / "preds").glob("*.jsonl"))
    assert len(files) == 2
    wers = {m["model"]: m["wer"] for m in by[("transcribe", "librivox")]["models"]}
    assert wers["tiny"] < wers["sphinx"]

    # a rerun computes nothing and writes byte-identical results and tables
    first = (tmp_path / "out" / "results.json").read_bytes()
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    run2 = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run2["computed"] == 0 and run2["cached"] == 2 * n_clips
    assert (tmp_path / "out" / "results.json").read_bytes() == first


def test_shards_then_merge_give_the_same_store(tmp_path: Path, run_cli) -> None:
    spec = tmp_path / "audit.toml"
    spec.write_text(
        SPEC.format(librivox=LIBRIVOX_MANIFEST, vox=VOXPOPULI_EXAMPLES, panel=json.dumps(list(VOXPOPULI_PANEL)))
        .replace('spec = "whisper-tiny.en"', 'spec = "sphinx:en-us"\noptions = { language = "en" }')
        .replace('name = "tiny"', 'name = "tiny"')
    )
    for i in range(2):
        code, out, err = run_cli(
            "run", spec, "--shard", f"{i}/2", "--store", tmp_path / f"s{i}.sqlite", "--no-progress"
        )
        assert code == 0, err
    code, out, err = run_cli(
        "merge", "--into", tmp_path / "merged.sqlite", tmp_path / "s0.sqlite", tmp_path / "s1.sqlite"
    )
    assert code == 0, err
    code, _, err = run_cli("run", spec, "--store", tmp_path / "merged.sqlite", "--no-progress")
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "run.json").read_text())["computed"] == 0
