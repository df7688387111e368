"""The CTranslate2 backend on the bundled Whispers and real LibriVox speech."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.errors import BackendError, ConfigError, InputFileError
from asr_audit.models.base import TRANSCRIBE, DecodeOptions, available_backends, parse_spec

pytest.importorskip("ctranslate2")


def test_registry_lists_the_new_backends() -> None:
    names = {k.name: k for k in available_backends()}
    for name in ("ct2", "hf", "hf-ctc", "whisper-tiny.en", "whisper-base", "whisper-tiny.en-pt", "whisper-base-pt"):
        assert name in names
    assert names["whisper-tiny.en"].bundled and names["whisper-tiny.en"].capabilities == {TRANSCRIBE}
    assert names["whisper-tiny.en-pt"].capabilities == {"transcribe", "score", "sites"}
    assert parse_spec("whisper-tiny.en-pt") == ("whisper-tiny.en-pt", "")
    assert parse_spec("ct2:/models/x") == ("ct2", "/models/x")


def test_tiny_en_transcribes_librivox(tiny_ct2_librivox, librivox, wer) -> None:
    refs = librivox[1]
    hyps = tiny_ct2_librivox  # tiny_ct2.transcribe(all five clips), shared with the PyTorch parity test
    assert len(hyps) == len(refs)
    assert hyps[4] == "He might even have been made amiable himself."
    assert wer(refs, hyps) < 0.10  # measured 4.9 % (3 errors in 61 words)


def test_identity_and_batching(tiny_ct2, librivox, tiny_ct2_alone) -> None:
    ident = tiny_ct2.identity()
    assert ident.spec == "whisper-tiny.en" and len(ident.weights_hash) == 16
    assert ident.options == DecodeOptions()
    assert tiny_ct2.max_duration == 30.0
    audios = librivox[0][:3]
    assert tiny_ct2.transcribe(audios) == tiny_ct2_alone  # each clip decoded alone (models/conftest.py)


def test_bad_inputs_are_one_line_errors(tiny_ct2) -> None:
    with pytest.raises(BackendError, match="longer than the 30 s"):
        tiny_ct2.transcribe([np.zeros(16_000 * 31, np.float32)])
    with pytest.raises(BackendError, match="NaN"):
        tiny_ct2.transcribe([np.full(1600, np.nan, np.float32)])
    with pytest.raises(BackendError, match="mono"):
        tiny_ct2.transcribe([np.zeros((2, 1600), np.float32)])


def test_english_only_model_refuses_other_languages(tmp_path) -> None:
    from asr_audit.models.base import load_backend

    with pytest.raises(ConfigError, match="English-only"):
        load_backend("whisper-tiny.en", DecodeOptions(language="de"))
    with pytest.raises(InputFileError, match="no model.bin"):
        load_backend(f"ct2:{tmp_path}")


@pytest.mark.slow
def test_base_transcribes_librivox(base_ct2, base_ct2_librivox, librivox, wer) -> None:
    assert base_ct2.prompt == [50258, 50259, 50359, 50363]  # sot, en, transcribe, notimestamps
    # base_ct2.transcribe(all five clips), shared with the PyTorch parity test
    assert wer(librivox[1], base_ct2_librivox) < 0.04  # measured 1.6 % (1 error)


def test_threads_follow_the_affinity_mask_not_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process limited to one core (taskset, a container) gets one CTranslate2 thread, not one
    per core of the machine."""
    from asr_audit.models import base

    monkeypatch.setattr(base.os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(base.os, "cpu_count", lambda: 64)
    assert base.usable_cpus() == 1
    monkeypatch.delattr(base.os, "sched_getaffinity")
    assert base.usable_cpus() == 64
