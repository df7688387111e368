"""CTranslate2 model.bin parsing and the rebuild into transformers' Whisper.

A tiny randomly initialised Whisper is converted with CTranslate2's own converter (float32,
float16, int8), then rebuilt by :mod:`asr_audit.models.whisper_convert`; the rebuilt weights
must equal the originals up to the storage precision, and both engines must decode alike.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from asr_audit.errors import InputFileError
from asr_audit.models.base import DecodeOptions

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
ctranslate2 = pytest.importorskip("ctranslate2")

from asr_audit.models.bundled import whisper_tiny_en_dir  # noqa: E402
from asr_audit.models.whisper_convert import (  # noqa: E402
    converted_whisper_dir,
    export_hf_whisper,
    load_ct2_array,
    read_ct2_index,
)


@pytest.fixture(scope="module")
def random_whisper(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    """A 2+2-layer, d_model 64 Whisper with the real tiny.en tokenizer, saved as a HF dir."""
    torch.manual_seed(0)
    eot, sot = 50256, 50257
    config = transformers.WhisperConfig(
        vocab_size=51864, num_mel_bins=80, d_model=64, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128,
        max_source_positions=1500, max_target_positions=448, decoder_start_token_id=sot,
        eos_token_id=eot, pad_token_id=eot, bos_token_id=eot, suppress_tokens=[], begin_suppress_tokens=[220, eot],
    )  # fmt: skip
    model = transformers.WhisperForConditionalGeneration(config).eval()
    with torch.no_grad():  # non-zero biases so that splitting them back is tested
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.normal_(0, 0.05)
    hf_dir = tmp_path_factory.mktemp("random-whisper-hf")
    model.save_pretrained(hf_dir)
    shutil.copy(whisper_tiny_en_dir() / "tokenizer.json", hf_dir / "tokenizer.json")
    return model, hf_dir


def _ct2(hf_dir: Path, out: Path, quantization: str) -> Path:
    ctranslate2.converters.TransformersConverter(str(hf_dir), copy_files=["tokenizer.json"]).convert(
        str(out), quantization=quantization
    )
    return out


@pytest.mark.parametrize("quantization,tol", [("float32", 0.0), ("float16", 2e-3), ("int8", None)])
def test_rebuilt_weights_equal_originals(random_whisper, tmp_path: Path, quantization: str, tol) -> None:
    model, hf_dir = random_whisper
    ct2_dir = _ct2(hf_dir, tmp_path / "ct2", quantization)
    rebuilt = transformers.WhisperForConditionalGeneration.from_pretrained(export_hf_whisper(ct2_dir, tmp_path / "hf"))
    ours, theirs = rebuilt.state_dict(), model.state_dict()
    assert set(ours) == set(theirs)
    for name, ref in theirs.items():
        if "k_proj.bias" in name:  # Whisper keys have no bias; torch keeps none either
            continue
        got = ours[name]
        assert got.shape == ref.shape, name
        if tol is None:  # int8: per-row scale, error at most half a quantisation step
            step = (
                ref.reshape(len(ref), -1).abs().amax(1).reshape((-1,) + (1,) * (ref.ndim - 1)) / 127
                if ref.ndim > 1
                else torch.full_like(ref, 1e-6)
            )
            assert bool(((got - ref).abs() <= step * 0.5 + 1e-6).all()), name
        else:
            assert torch.allclose(got, ref, atol=tol, rtol=tol), name


def test_both_engines_decode_the_random_model_alike(random_whisper, tmp_path: Path, librivox) -> None:
    from asr_audit.models.ct2 import CT2WhisperBackend
    from asr_audit.models.whisper_torch import TorchWhisperBackend

    _, hf_dir = random_whisper
    ct2_dir = _ct2(hf_dir, tmp_path / "ct2", "float32")
    options = DecodeOptions(max_new_tokens=12)
    ct2_backend = CT2WhisperBackend(ct2_dir, "ct2:random", options)
    pt_backend = TorchWhisperBackend(export_hf_whisper(ct2_dir, tmp_path / "hf"), "random-pt", options, "x")
    clips = librivox[0][:2]
    assert pt_backend.transcribe(clips) == ct2_backend.transcribe(clips)


def test_index_of_bundled_tiny_en() -> None:
    index = read_ct2_index(whisper_tiny_en_dir() / "model.bin")
    assert index.spec == "WhisperSpec"
    assert index.shape("encoder/conv1/weight") == (384, 80, 3)
    assert index.aliases["decoder/projection/weight"] == "decoder/embeddings/weight"
    emb = load_ct2_array(index, "decoder/projection/weight")
    assert emb.dtype == np.float16 and emb.shape == (51864, 384)


def test_truncated_or_foreign_file_is_a_one_line_error(tmp_path: Path) -> None:
    src = whisper_tiny_en_dir() / "model.bin"
    cut = tmp_path / "model.bin"
    with open(src, "rb") as fh:
        cut.write_bytes(fh.read(1_000_000))
    with pytest.raises(InputFileError, match="runs past the end"):
        read_ct2_index(cut)
    cut.write_bytes(b"\x02\x00\x00\x00garbage")
    with pytest.raises(InputFileError, match="unsupported CTranslate2 binary version 2"):
        read_ct2_index(cut)


def test_conversion_is_cached_by_source_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, random_whisper) -> None:
    import asr_audit.models.whisper_convert as wc

    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    ct2_dir = _ct2(random_whisper[1], tmp_path / "ct2", "float16")
    first = converted_whisper_dir(ct2_dir)
    assert (first / "model.safetensors").is_file() and first.parent == tmp_path / "cache" / "converted"

    def fail(*args: object) -> None:
        raise AssertionError("converted again although cached")

    monkeypatch.setattr(wc, "export_hf_whisper", fail)
    assert converted_whisper_dir(ct2_dir) == first


def test_export_draws_no_third_party_progress_bar(
    random_whisper: tuple[object, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Saving the rebuilt weights shows no "Writing model shards" bar of transformers (the demo's
    first run printed it between asr-audit's own lines), and the caller's setting comes back."""
    from transformers.utils import logging as hf_logging

    _, hf_dir = random_whisper
    ct2_dir = _ct2(hf_dir, tmp_path / "ct2", "float32")
    hf_logging.enable_progress_bar()
    capfd.readouterr()
    export_hf_whisper(ct2_dir, tmp_path / "hf")
    err = capfd.readouterr().err
    assert "Writing model shards" not in err and "it/s" not in err
    assert hf_logging.is_progress_bar_enabled()
