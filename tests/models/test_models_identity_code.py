"""Cache keys carry the decoding-code version and what a backend resolved when it loaded (defect 11)."""

from __future__ import annotations

import re

import pytest

from asr_audit.models.base import (
    BackendIdentity,
    BaseBackend,
    DecodeOptions,
    available_backends,
)


def test_code_entries_enter_the_key() -> None:
    base = BackendIdentity("whisper-tiny.en", "h", DecodeOptions(), (("code_version", "ct2-whisper/1"),))
    for other in [
        BackendIdentity("whisper-tiny.en", "h", DecodeOptions(), (("code_version", "ct2-whisper/2"),)),
        BackendIdentity(
            "whisper-tiny.en", "h", DecodeOptions(), (("code_version", "ct2-whisper/1"), ("compute_type", "float16"))
        ),
        BackendIdentity("whisper-tiny.en", "h", DecodeOptions()),
    ]:
        assert other.key != base.key
    assert base.to_dict()["code"] == {"code_version": "ct2-whisper/1"}


def _subclasses(cls: type[BaseBackend]) -> list[type[BaseBackend]]:
    out: list[type[BaseBackend]] = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_every_builtin_backend_versions_its_decoding_code() -> None:
    available_backends()  # imports every builtin backend module
    classes = [c for c in _subclasses(BaseBackend) if c.__module__.startswith("asr_audit.")]
    assert {c.__name__ for c in classes} >= {
        "CT2WhisperBackend",
        "TorchWhisperBackend",
        "HFCTCBackend",
        "SphinxBackend",
        "OpenAIHTTPBackend",
        "PredictionsBackend",
    }
    versions = {c.__name__: c.code_version for c in classes}
    assert all(re.fullmatch(r"[a-z0-9-]+/\d+", v) for v in versions.values()), versions
    assert len(set(versions.values())) == len(versions)  # no two backends share a version name


def test_ct2_key_carries_the_resolved_compute_type(tiny_ct2) -> None:
    ident = tiny_ct2.identity()
    code = dict(ident.code)
    assert code["code_version"] == "ct2-whisper/1"
    # "default" on this CPU machine runs float32; the same request on a GPU runs float16
    assert tiny_ct2.options.compute_type == "default" and code["compute_type"] == tiny_ct2._model.compute_type
    on_gpu = BackendIdentity(
        ident.spec, ident.weights_hash, ident.options, tuple(sorted({**code, "compute_type": "float16"}.items()))
    )
    assert on_gpu.key != ident.key


def test_pt_key_carries_the_converter_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from asr_audit.models import whisper_convert
    from asr_audit.models.hf import load_bundled_torch

    pt = load_bundled_torch("whisper-tiny.en", DecodeOptions())
    code = dict(pt.identity().code)
    assert code == {
        "code_version": "torch-whisper/1",
        "dtype": "float32",
        "converter": f"whisper_convert/{whisper_convert.CONVERTER_REVISION}",
    }
    monkeypatch.setattr(whisper_convert, "CONVERTER_VERSION", "whisper_convert/999")
    monkeypatch.setattr(whisper_convert, "converted_whisper_dir", lambda source: pt.model_dir)  # no reconversion
    assert load_bundled_torch("whisper-tiny.en", DecodeOptions()).identity().key != pt.identity().key
