"""The demo's spec is an ordinary experiment spec: it must pass the spec's load-time checks
(leave-one-out quorum, probe options) with and without audio, before any inference runs."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("audio", [True, False])
def test_demo_spec_passes_load_time_checks(tmp_path: Path, audio: bool) -> None:
    from asr_audit.cli.demo import demo_spec
    from asr_audit.runner.spec import parse_spec

    calib = tmp_path / "generated-benchmark"
    calib.mkdir()  # the demo builds it before the spec is read (its refdis `truth` must be a folder)
    spec = parse_spec(demo_spec(tmp_path / "out", audio=audio, calib_dir=calib if audio else None), "<demo spec>")
    names = [c.name for c in spec.corpora]
    assert names[-1] == "voxpopuli-examples"
    assert ("generated-parliament" in names) == audio


def test_demo_spec_audits_the_organism_on_the_generated_benchmark(tmp_path: Path) -> None:
    """With the trained pair, the organism and its control are tested models (never panel members)
    on every audio corpus; the battery's voice condition runs on the generated benchmark only, with
    the spoken text from its own manifest."""
    from asr_audit.cli.demo import BATTERY_VOICE, BENCHMARK_MANIFEST, ORGANISM_MODELS, demo_spec
    from asr_audit.runner.spec import parse_spec

    calib = tmp_path / "generated-benchmark"
    calib.mkdir()
    raw = demo_spec(tmp_path / "out", audio=True, calib_dir=calib, organism=True)
    spec = parse_spec(raw, "<demo spec>")
    names = [m.name for m in spec.models]
    assert all(o in names for o in ORGANISM_MODELS)
    assert not set(ORGANISM_MODELS) & set(raw["panel"]["models"])
    assert raw["probes"]["battery"]["conditions"] == [f"voice:{BATTERY_VOICE}"]
    by_name = {c["name"]: c for c in raw["corpus"]}
    assert by_name["generated-parliament"]["probes"]["battery"]["spoken"] == str(calib / BENCHMARK_MANIFEST)
    assert by_name["librivox"]["probes"]["battery"] == {"skip": True}
    # the generated benchmark's planted truth verifies its refdis edits: the organism is judged on them
    assert by_name["generated-parliament"]["probes"]["refdis"]["truth"] == str(calib)
    assert by_name["voxpopuli-examples"]["probes"]["battery"] == {"skip": True}
    without = demo_spec(tmp_path / "out", audio=True, calib_dir=calib, organism=False)
    assert not set(ORGANISM_MODELS) & {m["name"] for m in without["model"]}


def test_demo_organism_is_reused_only_when_trained_with_the_demo_settings(tmp_path: Path) -> None:
    """``matching_deltas``: the pair in the demo's folder is reused when its metadata names the same
    seed, set configuration and training configuration; any difference means training again."""
    from dataclasses import replace

    import numpy as np

    pytest.importorskip("safetensors")
    from asr_audit.organism.data import OrganismSetConfig
    from asr_audit.organism.pipeline import matching_deltas
    from asr_audit.organism.train import TrainConfig
    from asr_audit.organism.weights import save_delta

    config, train = OrganismSetConfig(n_sentences=80), TrainConfig(steps=80, lr=3e-4, batch_size=8, seed=0)
    assert matching_deltas(tmp_path, 0, config, train, 30) is None  # nothing trained yet
    for kind, steps in (("benchmark", 80), ("control", 30)):
        meta = {
            "kind": kind,
            "seed": 0,
            "train": replace(train, steps=steps).to_dict(),
            "set": {"seed": 0, "config": config.to_dict()},
        }
        save_delta(tmp_path / f"{kind}.safetensors", {"w": np.zeros(2, dtype=np.float32)}, meta)
    found = matching_deltas(tmp_path, 0, config, train, 30)
    assert found is not None and sorted(found) == ["benchmark", "control"]
    assert matching_deltas(tmp_path, 1, config, train, 30) is None
    assert matching_deltas(tmp_path, 0, config, replace(train, steps=81), 30) is None
    assert matching_deltas(tmp_path, 0, config, train, 31) is None
    assert matching_deltas(tmp_path, 0, OrganismSetConfig(n_sentences=81), train, 30) is None


def test_demo_spec_scores_the_spanish_benchmark_with_one_model_and_no_refdis(tmp_path: Path) -> None:
    """The Spanish mini-benchmark is a prediction-file corpus of the one multilingual model: WER and
    the switch rate in Spanish run on it, refdis (which needs a panel of two) does not; the WER probe
    runs on no other corpus, and without the Spanish folder the spec is the demo's as before."""
    from asr_audit.cli.demo import SPANISH_CORPUS, SPANISH_MODEL, SPANISH_SENTENCES, demo_spec
    from asr_audit.runner.spec import parse_spec

    calib, spanish = tmp_path / "generated-benchmark", tmp_path / SPANISH_CORPUS
    calib.mkdir()
    raw = demo_spec(tmp_path / "out", audio=True, calib_dir=calib, organism=True, spanish_dir=spanish)
    spec = parse_spec(raw, "<demo spec>")
    names = [c.name for c in spec.corpora]
    assert names == ["librivox", "generated-parliament", SPANISH_CORPUS, "voxpopuli-examples"]
    es = next(c for c in spec.corpora if c.name == SPANISH_CORPUS)
    assert es.predictions == str(spanish / "predictions") and es.panel == (SPANISH_MODEL,)
    assert es.probes["refdis"] == {"skip": True} and es.probes["wer"] == {"skip": False, "language": "es"}
    assert es.probes["switch_rate"] == {"language": "es"}
    assert raw["probes"]["wer"] == {"skip": True}
    assert len(SPANISH_SENTENCES) == 8
    without = demo_spec(tmp_path / "out", audio=True, calib_dir=calib, organism=True)
    assert SPANISH_CORPUS not in [c["name"] for c in without["corpus"]] and "wer" not in without["probes"]
    no_audio = demo_spec(tmp_path / "out", audio=False, spanish_dir=spanish)
    assert SPANISH_CORPUS not in [c["name"] for c in no_audio["corpus"]] and "wer" not in no_audio["probes"]


def test_spanish_sentences_write_each_convention_both_ways_often_enough_to_score() -> None:
    """Honorific and percent: at least ``min_per_arm`` (3) reference items on each arm, or the
    switch rate is undefined by construction."""
    from collections import Counter

    from asr_audit.cli.demo import SPANISH_SENTENCES, demo_spec
    from asr_audit.probes.predfiles.conventions import get_family
    from asr_audit.probes.predfiles.ortho import find_occurrences

    min_per_arm = demo_spec(Path("out"), audio=False)["probes"]["switch_rate"]["min_per_arm"]
    for family in ("senor", "percent_es"):
        fam = get_family(family, "es")
        arms = Counter(fam.arms[o.arm].role for s in SPANISH_SENTENCES for o in find_occurrences(s, fam))
        assert min(arms["A"], arms["B"]) >= min_per_arm, (family, arms)
