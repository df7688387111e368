"""Attention isolation on a tiny randomly initialised Whisper: masking every decoder layer's
cross-attention outside a frame range equals decoding from the sliced encoder states."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from asr_audit.errors import ConfigError  # noqa: E402
from asr_audit.mech.isolate import frames_for, isolate_cross_attention  # noqa: E402


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    cfg = transformers.WhisperConfig(
        vocab_size=64,
        num_mel_bins=8,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        d_model=16,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_source_positions=30,
        max_target_positions=16,
        pad_token_id=0,
        decoder_start_token_id=1,
        eos_token_id=2,
    )
    return transformers.WhisperForConditionalGeneration(cfg).eval()


def _logits(model, enc, ids):
    with torch.inference_mode():
        return model(encoder_outputs=(enc,), decoder_input_ids=ids).logits


def test_mask_equals_slicing_and_hooks_are_removed(model) -> None:
    feats = torch.randn(1, 8, 60)
    with torch.inference_mode():
        enc = model.model.encoder(feats).last_hidden_state  # 30 frames
    ids = torch.tensor([[1, 5, 9, 11]])
    mods = [layer.encoder_attn for layer in model.model.decoder.layers]
    with isolate_cross_attention(mods, (4, 12)):
        masked = _logits(model, enc, ids)
    sliced = _logits(model, enc[:, 4:12], ids)
    full = _logits(model, enc, ids)
    assert torch.allclose(masked, sliced, atol=1e-5)
    assert not torch.allclose(masked, full, atol=1e-3)
    assert all(len(m._forward_pre_hooks) == 0 for m in mods)
    with pytest.raises(RuntimeError), isolate_cross_attention(mods, (0, 3)):
        raise RuntimeError("boom")
    assert all(len(m._forward_pre_hooks) == 0 for m in mods)
    assert torch.allclose(_logits(model, enc, ids), full)


def test_frames_for() -> None:
    assert frames_for(0.0, 0.02) == (0, 1)
    assert frames_for(1.0, 1.001) == (50, 51)
    assert frames_for(29.99, 31.0) == (1499, 1500)
    with pytest.raises(ConfigError):
        frames_for(1.0, 0.5)
