"""The demo's pair shares one encoder: a clip is encoded once for the organism and its control, and
each transcribes exactly as it does alone (same encoder states bit for bit, same transcripts)."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.models.base import DecodeOptions

pytestmark = pytest.mark.slow


def _pair_deltas(root):
    from asr_audit.models.bundled import bundled_model_dir
    from asr_audit.models.cache import weights_hash
    from asr_audit.models.ct2 import ct2_weight_files
    from asr_audit.organism.weights import save_delta

    base = weights_hash(ct2_weight_files(bundled_model_dir("whisper-tiny.en")))
    for kind, value in (("benchmark", 0.02), ("control", -0.02)):  # two different decoders, one encoder
        save_delta(
            root / f"{kind}.safetensors",
            {"model.decoder.layer_norm.bias": np.full(384, value, np.float32)},
            {"base_weights_hash": base},
        )


def _count_encodes(backend) -> list[int]:
    """Count the encoder's forward calls without a hook (a hook turns the memo off)."""
    encoder = backend.torch_model.model.encoder
    calls = [0]
    forward = encoder.forward

    def counted(*args, **kwargs):
        calls[0] += 1
        return forward(*args, **kwargs)

    encoder.forward = counted
    return calls


def test_the_pair_encodes_each_clip_once_and_transcribes_as_alone(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    sf = pytest.importorskip("soundfile")
    from asr_audit.data import LIBRIVOX
    from asr_audit.organism.backend import load_organism

    _pair_deltas(tmp_path)
    clips = []
    for path in sorted(LIBRIVOX.glob("*.flac"))[:2]:
        samples, sr = sf.read(path, dtype="float32")
        assert sr == 16_000
        clips.append(samples)

    def load(name, share):
        return load_organism(name, DecodeOptions(), root=tmp_path, share_encoder=share, batch_size=2)

    shared = {n: load(n, True) for n in ("organism-benchmark", "organism-control")}
    alone = {n: load(n, False) for n in ("organism-benchmark", "organism-control")}
    calls = {n: _count_encodes(b) for n, b in shared.items()}
    texts = {n: b.transcribe(clips) for n, b in shared.items()}
    assert calls == {"organism-benchmark": [1], "organism-control": [0]}  # the control read the organism's states
    assert texts == {n: b.transcribe(clips) for n, b in alone.items()}
    with torch.inference_mode():
        handed = shared["organism-control"]._encoder_states(clips)  # from its memo: the organism's tensors
        own = alone["organism-control"]._encoder_states(clips)
    assert torch.equal(handed, own)
    assert not shared["organism-benchmark"]._handoff.entries  # every state handed over was read, then dropped


def test_a_delta_that_touches_the_encoder_never_shares(tmp_path) -> None:
    pytest.importorskip("torch")
    from asr_audit.models.bundled import bundled_model_dir
    from asr_audit.models.cache import weights_hash
    from asr_audit.models.ct2 import ct2_weight_files
    from asr_audit.organism.backend import load_organism
    from asr_audit.organism.weights import save_delta

    base = weights_hash(ct2_weight_files(bundled_model_dir("whisper-tiny.en")))
    save_delta(
        tmp_path / "benchmark.safetensors",
        {"model.encoder.layer_norm.bias": np.zeros(384, np.float32)},
        {"base_weights_hash": base},
    )
    backend = load_organism("organism-benchmark", DecodeOptions(), root=tmp_path, lazy=True, share_encoder=True)
    assert backend._handoff is None
