"""Compact delta files: exact round trip, clear errors on foreign files and mismatched bases."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.errors import BackendError, InputFileError
from asr_audit.organism.weights import apply_delta, load_delta, save_delta


def test_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(0)
    tensors = {
        "model.decoder.layers.0.fc1.weight": rng.standard_normal((8, 4)).astype(np.float32),
        "model.decoder.layer_norm.bias": rng.standard_normal(4).astype(np.float32),
    }
    meta = {"kind": "benchmark", "base_weights_hash": "abc", "losses": [1.5, 0.25], "train": {"seed": 3}}
    path = save_delta(tmp_path / "d.safetensors", tensors, meta)
    delta = load_delta(path)
    assert set(delta.tensors) == set(tensors)
    for name, value in tensors.items():
        assert delta.tensors[name].dtype == np.float32
        assert np.array_equal(delta.tensors[name], value)
    assert delta.meta == meta and delta.base_hash == "abc"


def test_missing_and_foreign_files(tmp_path):
    with pytest.raises(InputFileError, match="organism train"):
        load_delta(tmp_path / "absent.safetensors")
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"not a safetensors file")
    with pytest.raises(InputFileError, match="junk.safetensors"):
        load_delta(junk)
    import safetensors.numpy

    other = tmp_path / "other.safetensors"
    safetensors.numpy.save_file({"x": np.zeros(2, np.float32)}, str(other))
    with pytest.raises(InputFileError, match="not an organism delta"):
        load_delta(other)


def test_apply_checks_base_hash_and_shapes(tmp_path):
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(3, 2))
    good = {"0.weight": np.ones((2, 3), np.float32)}
    delta = load_delta(save_delta(tmp_path / "d.safetensors", good, {"base_weights_hash": "h1"}))
    with pytest.raises(BackendError, match="retrain"):
        apply_delta(model, delta, "h2")
    apply_delta(model, delta, "h1")
    assert torch.equal(model[0].weight, torch.ones(2, 3))
    bad = load_delta(
        save_delta(tmp_path / "b.safetensors", {"0.weight": np.ones((3, 3), np.float32)}, {"base_weights_hash": "h1"})
    )
    with pytest.raises(BackendError, match="do not fit"):
        apply_delta(model, bad, "h1")
