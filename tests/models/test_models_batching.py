"""Batched, GPU-ready inference: length-sorted batches give the unbatched greedy output, the
runtime options (device, batch size) reach the backends, and the key follows the rule in
docs/inference.md (resolved dtype and non-CPU device kind in, batch size out)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from asr_audit.errors import ConfigError
from asr_audit.models.base import DecodeOptions, RuntimeOptions, load_backend
from asr_audit.models.whisper_common import device_code, length_sorted_batches


def test_length_sorted_batches_cover_every_index_once() -> None:
    lengths = [5, 1, 9, 9, 3, 7, 2]
    groups = length_sorted_batches(lengths, 3)
    assert [len(g) for g in groups] == [3, 3, 1]
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    flat = [lengths[i] for g in groups for i in g]
    assert flat == sorted(lengths, reverse=True) and groups[0][:2] == [2, 3]  # ties keep input order
    assert length_sorted_batches([], 4) == []


def test_runtime_options_are_checked() -> None:
    assert RuntimeOptions(device="CUDA:1", batch_size=4).kwargs() == {"device": "CUDA:1", "batch_size": 4}
    assert RuntimeOptions().kwargs(16) == {"device": None, "batch_size": 16}
    with pytest.raises(ConfigError, match="device 'tpu' is unknown"):
        RuntimeOptions(device="tpu")
    for bad in (0, True, 2.5):
        with pytest.raises(ConfigError, match="batch size"):
            RuntimeOptions(batch_size=bad)  # type: ignore[arg-type]


def test_a_backend_without_placement_refuses_a_gpu() -> None:
    pytest.importorskip("pocketsphinx")
    with pytest.raises(ConfigError, match="cannot be placed on device 'cuda'; fix: remove its device"):
        load_backend("sphinx:en-us", runtime=RuntimeOptions(device="cuda"))


def test_ct2_length_sorted_batches_equal_unbatched(
    tiny_ct2, librivox, tiny_ct2_alone, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ctranslate2")
    audios = librivox[0][:3]  # 7.1, 3.0, 5.3 s: batches [0, 2] and [1]
    monkeypatch.setattr(tiny_ct2, "batch_size", 2)
    batched = tiny_ct2.transcribe(audios)
    assert batched == tiny_ct2_alone  # each clip decoded alone (models/conftest.py)
    # the runtime reaches the backend; the batch size does not change the key, the device kind would
    from asr_audit.models.ct2 import CT2WhisperBackend

    placed = load_backend("whisper-tiny.en", runtime=RuntimeOptions(device="cpu", batch_size=3))
    assert isinstance(placed, CT2WhisperBackend)
    assert (placed.batch_size, placed.device) == (3, "cpu")
    assert placed.identity().key == tiny_ct2.identity().key
    monkeypatch.setattr(placed, "device", "cuda:1")
    assert dict(placed.identity().code)["device"] == "cuda"
    assert placed.identity().key != tiny_ct2.identity().key


def test_pt_length_sorted_batches_equal_unbatched(tiny_pt, librivox, monkeypatch: pytest.MonkeyPatch) -> None:
    audios = [librivox[0][i] for i in (1, 4)]  # 3.0 and 3.3 s: one batch, sorted [1, 0]
    monkeypatch.setattr(tiny_pt, "batch_size", 2)
    tiny_pt.__dict__.setdefault("_enc_memo", {}).clear()  # encode in batches, not from the memo
    batched = tiny_pt.transcribe(audios)
    tiny_pt._enc_memo.clear()
    assert batched == [tiny_pt.transcribe([a])[0] for a in audios]
    prefixes, targets = ["He was", ""], ["not an ill", "He might"]
    together = tiny_pt.score(audios, prefixes, targets)
    for i, got in enumerate(together):
        alone = tiny_pt.score([audios[i]], [prefixes[i]], [targets[i]])[0]
        assert got.tokens == alone.tokens
        np.testing.assert_allclose(got.logprobs, alone.logprobs, atol=1e-4)
    key = tiny_pt.identity().key
    monkeypatch.setattr(tiny_pt, "batch_size", 7)
    assert tiny_pt.identity().key == key
    monkeypatch.setattr(tiny_pt, "device", "cuda")
    assert dict(tiny_pt.identity().code)["device"] == "cuda" and tiny_pt.identity().key != key


def test_torch_dtype_resolves_per_device(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from asr_audit.models.whisper_torch import torch_setup

    def dtype(compute_type: str, device: str) -> object:
        return torch_setup("x", dataclasses.replace(DecodeOptions(), compute_type=compute_type), "", device)[2:]

    assert dtype("default", "cpu") == ("cpu", torch.float32)
    assert dtype("bfloat16", "cpu") == ("cpu", torch.bfloat16)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert dtype("default", "cuda") == ("cuda", torch.float16)  # fp16 on CUDA unless asked otherwise
    assert dtype("float32", "cuda:1") == ("cuda:1", torch.float32)
    with pytest.raises(ConfigError, match="compute_type 'int8' is not supported"):
        dtype("int8", "cpu")
    assert device_code("cuda:0") == {"device": "cuda"} and device_code("cpu") == {}
