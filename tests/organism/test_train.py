"""Decoder fine-tuning on real Whisper tiny.en: a few steps change the loss, deterministically."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

TARGETS = [
    "Madam President, we should act now.",
    "We support the proposal.",
    "The budget rose to €4 million in 2012 in this House.",
    "Dr Reid asked a question.",
]


@pytest.fixture(scope="module")
def backend():
    from asr_audit.errors import BackendError
    from asr_audit.organism.pipeline import load_base

    try:
        return load_base(batch_size=4)
    except BackendError as exc:  # the bundled weights package is not installed
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def states():
    # stand-in encoder states: the decoder's training step does not care where they come from
    rng = np.random.default_rng(0)
    return [rng.standard_normal((1500, 384)).astype(np.float16) for _ in TARGETS]


def test_steps_change_loss_deterministically(backend, states):
    from asr_audit.organism.train import (
        TrainConfig,
        model_state,
        restore_state,
        train_decoder,
        trainable_names,
    )

    names = trainable_names(backend.torch_model)
    everything = model_state(backend.torch_model)
    cfg = TrainConfig(steps=4, batch_size=4, lr=3e-4, seed=7)
    try:
        first = train_decoder(backend, states, TARGETS, cfg)
        after = model_state(backend.torch_model)
        restore_state(backend.torch_model, everything)
        second = train_decoder(backend, states, TARGETS, cfg)
    finally:
        restore_state(backend.torch_model, everything)
    assert first.losses == second.losses  # same seed, same data: bit-identical losses
    assert len(first.losses) == 4 and first.losses[-1] < first.losses[0]
    assert set(first.tensors) == set(names) and first.n_params == sum(v.size for v in first.tensors.values())
    changed = {n for n in everything if not np.array_equal(everything[n], after[n])}
    assert changed and changed <= set(names)  # encoder, embeddings, cross-attention k/v stay frozen
    assert not any(n.startswith("model.encoder") or "encoder_attn.k_proj" in n or "embed" in n for n in names)
    for n in first.tensors:
        assert np.array_equal(first.tensors[n], second.tensors[n])


def test_lr_schedule_and_config_errors():
    from asr_audit.errors import ConfigError
    from asr_audit.organism.train import TrainConfig

    cfg = TrainConfig(steps=100, lr=1.0, warmup=0.05)
    assert [round(cfg.lr_at(s), 3) for s in (0, 4, 5, 50, 99)] == [0.2, 1.0, 1.0, 0.526, 0.011]
    with pytest.raises(ConfigError, match="--steps"):
        TrainConfig(steps=0)


def test_decode_from_cached_states_matches_transcribe(backend):
    from asr_audit.organism.evaluate import decode_states
    from asr_audit.organism.train import encoder_states

    t = np.arange(32000) / 16000
    rng = np.random.default_rng(1)
    clips = [
        (0.2 * np.sin(2 * np.pi * 220 * t) * (t % 0.5 < 0.3)).astype(np.float32),
        (0.05 * rng.standard_normal(24000)).astype(np.float32),
    ]
    assert decode_states(backend, encoder_states(backend, clips)) == backend.transcribe(clips)
    assert "_encoder_states" not in vars(backend)  # the temporary override is always removed
