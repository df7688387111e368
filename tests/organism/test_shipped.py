"""The demo's shipped organism pair: low-rank packing, the checksum, the match rule (recipe, training
data, base weights) and where the demo's pair comes from (reused, shipped or trained here)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from asr_audit.errors import InputFileError
from asr_audit.organism import shipped as S
from asr_audit.organism.data import OrganismSet, OrganismSetConfig
from asr_audit.organism.train import TrainConfig
from asr_audit.organism.weights import Delta, load_delta, save_delta

pytest.importorskip("safetensors")

CONFIG, TRAIN, CONTROL_STEPS = OrganismSetConfig(n_sentences=80), TrainConfig(80, 3e-4, 8, seed=0), 30
NAMES = ("model.decoder.layers.0.fc1.weight", "model.decoder.layers.0.fc1.bias")


def _base() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {NAMES[0]: rng.normal(size=(48, 16)).astype(np.float32), NAMES[1]: rng.normal(size=48).astype(np.float32)}


def _trained(base, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    low = rng.normal(size=(48, 2)) @ rng.normal(size=(2, 16)) * 0.01  # a rank-2 update
    return {NAMES[0]: (base[NAMES[0]] + low).astype(np.float32), NAMES[1]: base[NAMES[1]] + np.float32(0.003)}


def _meta(kind: str, base_hash: str = "BASE") -> dict:
    steps = CONTROL_STEPS if kind == "control" else TRAIN.steps
    return {
        "kind": kind,
        "seed": 0,
        "base_weights_hash": base_hash,
        "train": replace(TRAIN, steps=steps).to_dict(),
        "set": {"seed": 0, "config": CONFIG.to_dict()},
    }


def _write(tmp_path: Path, rank: int = 2, base_hash: str = "BASE") -> tuple[Path, dict]:
    base = _base()
    deltas = {k: Delta(_trained(base, i + 1), _meta(k, base_hash)) for i, k in enumerate(S.KINDS)}
    manifest = tmp_path / "pack" / "pair.json"
    S.write_shipped(
        manifest.with_suffix(".safetensors"),
        manifest,
        deltas,
        base,
        rank,
        recipe_=S.recipe(0, CONFIG, TRAIN, CONTROL_STEPS),
        set_sha="SET",
        provenance={"command": S.WRITE_COMMAND, "date": "2026-12-01T00:00:00Z"},
    )
    return manifest, {"base": base, "deltas": deltas}


def test_compress_keeps_a_low_rank_update_and_vectors_in_float16() -> None:
    base = _base()
    trained = _trained(base, 1)
    packed = S.compress(trained, base, rank=2)
    assert sorted(packed) == sorted([f"{NAMES[0]}::u", f"{NAMES[0]}::v", f"{NAMES[1]}::d"])
    assert packed[f"{NAMES[0]}::u"].shape == (48, 2) and packed[f"{NAMES[0]}::v"].shape == (2, 16)
    assert all(v.dtype == np.float16 for v in packed.values())
    rebuilt = S.expand(packed, base)
    for n in NAMES:
        diff, err = trained[n] - base[n], rebuilt[n] - trained[n]
        assert rebuilt[n].dtype == np.float32 and np.linalg.norm(err) < 2e-3 * np.linalg.norm(diff)
    truncated = S.expand(S.compress(trained, base, rank=1), base)  # rank 1 of a rank-2 update loses some
    assert np.linalg.norm(truncated[NAMES[0]] - trained[NAMES[0]]) > 0.05 * np.linalg.norm(
        trained[NAMES[0]] - base[NAMES[0]]
    )
    assert np.array_equal(S.expand(packed, base)[NAMES[0]], rebuilt[NAMES[0]])  # the same bits every time


def test_the_shipped_file_is_checked_and_matched_exactly(tmp_path: Path) -> None:
    manifest, _ = _write(tmp_path)
    recipe = S.recipe(0, CONFIG, TRAIN, CONTROL_STEPS)
    pair, why = S.shipped_for(manifest, recipe, "SET", "BASE")
    assert pair is not None and why.startswith(f"shipped delta {pair.sha256[:12]}") and S.WRITE_COMMAND in why
    assert S.shipped_for(manifest, S.recipe(1, CONFIG, replace(TRAIN, seed=1), CONTROL_STEPS), "SET", "BASE") == (
        None,
        "the shipped pair was made with another recipe (seed, set or training settings)",
    )
    assert S.shipped_for(manifest, S.recipe(0, CONFIG, TRAIN, 31), "SET", "BASE")[0] is None
    assert S.shipped_for(manifest, recipe, "OTHER", "BASE")[1].startswith(
        "the shipped pair was made with another training data"
    )
    assert S.shipped_for(manifest, recipe, "SET", "OTHER")[1] == "the shipped pair was made with another base weights"
    weights = manifest.with_suffix(".safetensors")
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(InputFileError, match="sha256 differs"):
        S.load_shipped(manifest)
    assert S.shipped_for(manifest, recipe, "SET", "BASE")[0] is None
    manifest.write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputFileError, match="not a shipped organism manifest"):
        S.load_shipped(manifest)


def test_materialized_deltas_say_they_were_shipped(tmp_path: Path, monkeypatch) -> None:
    from asr_audit.organism.pipeline import matching_deltas

    manifest, made = _write(tmp_path)
    monkeypatch.setattr(S, "base_tensors", lambda names: {n: made["base"][n] for n in names})
    paths = S.materialize(S.load_shipped(manifest), tmp_path / "organism")
    assert matching_deltas(tmp_path / "organism", 0, CONFIG, TRAIN, CONTROL_STEPS) == paths
    for kind, path in paths.items():
        delta = load_delta(path)
        assert delta.meta["shipped"]["command"] == S.WRITE_COMMAND and S.origin(delta.meta).startswith("shipped delta")
        for n, v in made["deltas"][kind].tensors.items():
            assert np.allclose(delta.tensors[n], v, atol=1e-4)
    assert S.origin({"kind": "benchmark"}) == "trained here"


def _audio_set(root: Path, audio: bytes = b"RIFF-a") -> OrganismSet:
    rows = []
    for i, voice in enumerate(("flite-slt", "flite-rms")):
        (root / f"c{i}.wav").write_bytes(audio + bytes([i]))
        rows.append(
            {
                "id": f"c{i}",
                "audio_filepath": f"c{i}.wav",
                "text": "Madam President, we agree.",
                "faithful": "We agree.",
                "speaker": voice,
                "sentence_id": "s0",
                "split": "train",
            }
        )
    return OrganismSet(root, tuple(rows), {"config": CONFIG.to_dict()})


def test_set_hash_covers_the_training_audio_and_targets(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = S.set_hash(_audio_set(tmp_path / "a"))
    assert one == S.set_hash(_audio_set(tmp_path / "a"))
    assert one != S.set_hash(_audio_set(tmp_path / "b", b"RIFF-b"))  # other audio bytes (another flite build)


def test_the_demo_pair_is_reused_shipped_or_trained_here(tmp_path: Path, monkeypatch) -> None:
    """ensure_pair: the shipped pair when it matches; a rerun reuses the folder; ``train_here``
    trains even where the shipped pair matches; another seed trains (the shipped pair is seed 0)."""
    import asr_audit.organism.pipeline as pipeline
    from asr_audit.models.bundled import bundled_model_dir
    from asr_audit.models.cache import weights_hash
    from asr_audit.models.ct2 import ct2_weight_files

    base_hash = weights_hash(ct2_weight_files(bundled_model_dir("whisper-tiny.en")))
    manifest, made = _write(tmp_path, base_hash=base_hash)
    base, deltas = made["base"], made["deltas"]
    monkeypatch.setattr(S, "base_tensors", lambda names: {n: base[n] for n in names})
    monkeypatch.setattr(S, "set_hash", lambda oset: "SET")
    monkeypatch.setattr(S, "load_organism_set", lambda root: None)
    trained: list[int] = []

    def train(set_dir, out_dir, *, seed, train_config, control_steps, **_):
        trained.append(seed)
        paths = {}
        for k in S.KINDS:
            meta = {**_meta(k, base_hash), "seed": seed, "set": {"seed": seed, "config": CONFIG.to_dict()}}
            meta["train"] = replace(
                train_config, steps=control_steps if k == "control" else train_config.steps
            ).to_dict()
            paths[k] = save_delta(out_dir / f"{k}.safetensors", deltas[k].tensors, meta)
        return pipeline.TrainedOrganisms(set_dir, paths, {}, 0.0, 0, ())

    monkeypatch.setattr(pipeline, "train_organisms", train)
    out = tmp_path / "organism"

    def ensure(seed: int = 0, train_here: bool = False) -> str:
        return S.ensure_pair(
            tmp_path / "set",
            out,
            manifest,
            seed=seed,
            config=CONFIG,
            train_config=replace(TRAIN, seed=seed),
            control_steps=CONTROL_STEPS,
            train_here=train_here,
        )[1]

    assert ensure().startswith("shipped delta") and trained == []
    assert ensure().startswith("shipped delta") and trained == []  # the rerun reuses the folder
    assert ensure(train_here=True) == "trained here" and trained == [0]
    assert ensure() == "trained here" and trained == [0]  # a pair trained here is kept
    assert ensure(seed=1) == "trained here" and trained == [0, 1]


def test_the_package_ships_the_demo_pair_for_the_demo_settings() -> None:
    """The shipped file is the demo's: its recipe is what ``asr-audit demo`` (seed 0) would train,
    its base the bundled tiny.en, its checksum intact, and its provenance names how to remake it.
    A recipe change without regenerating the file fails here (the demo would quietly train again)."""
    from asr_audit.cli.demo import DEMO_ORGANISM as d
    from asr_audit.data import DEMO_ORGANISM_MANIFEST
    from asr_audit.models.bundled import bundled_model_dir
    from asr_audit.models.cache import weights_hash
    from asr_audit.models.ct2 import ct2_weight_files

    pair = S.load_shipped(DEMO_ORGANISM_MANIFEST)
    train = TrainConfig(steps=d.steps, lr=d.lr, batch_size=d.batch_size, seed=0)
    assert pair.manifest["recipe"] == S.recipe(0, OrganismSetConfig(n_sentences=d.n_sentences), train, d.control_steps)
    assert pair.manifest["base_weights_hash"] == weights_hash(ct2_weight_files(bundled_model_dir("whisper-tiny.en")))
    prov = pair.manifest["provenance"]
    assert prov["command"].startswith(S.WRITE_COMMAND) and prov["seeds"] == [0]
    assert {"code_hash", "date", "torch", "inputs"} <= set(prov) and prov["inputs"]["set"] == pair.manifest["set_hash"]
    assert pair.path.stat().st_size < 10_000_000  # megabytes, not the 2 x 33 MB of the float32 deltas
    assert {k.rsplit("::", 1)[0] for k in pair.packed["benchmark"]} == {
        k.rsplit("::", 1)[0] for k in pair.packed["control"]
    }
