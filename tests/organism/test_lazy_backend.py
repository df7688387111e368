"""A lazy organism backend (the demo's): the same identity and transcripts as an eager one, and no
weights read until a transcript is needed, so a rerun answered by the store never loads the model."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.errors import BackendError
from asr_audit.models.base import DecodeOptions

pytestmark = pytest.mark.slow


def _delta(root, tensors):
    from asr_audit.models.bundled import bundled_model_dir
    from asr_audit.models.cache import weights_hash
    from asr_audit.models.ct2 import ct2_weight_files
    from asr_audit.organism.weights import save_delta

    base = weights_hash(ct2_weight_files(bundled_model_dir("whisper-tiny.en")))
    return save_delta(root / "benchmark.safetensors", tensors, {"base_weights_hash": base})


def test_lazy_backend_loads_on_first_use_and_matches_the_eager_one(tmp_path) -> None:
    pytest.importorskip("torch")
    from asr_audit.organism.backend import load_organism

    _delta(tmp_path, {"model.decoder.layer_norm.bias": np.full(384, 0.01, np.float32)})
    eager = load_organism("organism-benchmark", DecodeOptions(), root=tmp_path)
    lazy = load_organism("organism-benchmark", DecodeOptions(), root=tmp_path, lazy=True)
    assert lazy.identity() == eager.identity() and "torch_model" not in vars(lazy)
    t = np.arange(16000, dtype=np.float32) / 16000
    audio = [(0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)]
    assert lazy.transcribe(audio) == eager.transcribe(audio) and "torch_model" in vars(lazy)
    bias = lazy.torch_model.model.decoder.layer_norm.bias.detach().numpy()
    assert np.allclose(bias, 0.01)  # the delta was applied at load


def test_a_lazy_delta_that_does_not_fit_fails_at_first_use_and_stays_unloaded(tmp_path) -> None:
    pytest.importorskip("torch")
    from asr_audit.organism.backend import load_organism

    _delta(tmp_path, {"model.decoder.layer_norm.bias": np.zeros(7, np.float32)})
    lazy = load_organism("organism-benchmark", DecodeOptions(), root=tmp_path, lazy=True)
    for _ in range(2):  # never half loaded: every use raises until the delta is fixed
        with pytest.raises(BackendError, match="do not fit the base model"):
            lazy.transcribe([np.zeros(16000, np.float32)])
    assert "torch_model" not in vars(lazy)
