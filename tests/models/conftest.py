"""Fixtures for the model-backend tests: real LibriVox clips and session-scoped models."""

from __future__ import annotations

import os

import numpy as np
import pytest

from asr_audit.data import LIBRIVOX  # the five LibriVox clips shipped with the package (see its NOTICE.md)


@pytest.fixture(scope="session", autouse=True)
def _model_cache(tmp_path_factory: pytest.TempPathFactory):
    """Keep conversions, joined weights and hash memos of this test session in a temp dir."""
    old = os.environ.get("ASR_AUDIT_CACHE_DIR")
    os.environ["ASR_AUDIT_CACHE_DIR"] = str(tmp_path_factory.mktemp("asr-audit-cache"))
    yield
    if old is None:
        os.environ.pop("ASR_AUDIT_CACHE_DIR", None)
    else:
        os.environ["ASR_AUDIT_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def librivox() -> tuple[list[np.ndarray], list[str]]:
    """Five 16 kHz LibriVox clips (3-7 s) and their reference transcripts."""
    sf = pytest.importorskip("soundfile")
    audios, refs = [], []
    for line in (LIBRIVOX / "transcription.txt").read_text().splitlines():
        clip_id, text = line.split(" ", 1)
        text = text.lower()
        samples, sr = sf.read(LIBRIVOX / f"{clip_id}.flac", dtype="float32")
        if sr != 16_000:
            samples = pytest.importorskip("soxr").resample(samples, sr, 16_000)
        audios.append(samples)
        refs.append(text)
    return audios, refs


def corpus_wer(refs: list[str], hyps: list[str]) -> float:
    """Corpus WER after Whisper's English normalizer (kaldialign edit distance)."""
    import kaldialign
    from whisper_normalizer.english import EnglishTextNormalizer

    norm = EnglishTextNormalizer()
    errors = words = 0
    for ref, hyp in zip(refs, hyps):
        r, h = norm(ref).split(), norm(hyp).split()
        errors += kaldialign.edit_distance(r, h)["total"]
        words += len(r)
    return errors / words


@pytest.fixture(scope="session")
def wer():
    """The corpus-WER function (a fixture so test modules need no package imports)."""
    return corpus_wer


@pytest.fixture(scope="session")
def tiny_ct2():
    pytest.importorskip("ctranslate2")
    from asr_audit.models.base import DecodeOptions
    from asr_audit.models.bundled import bundled_model_dir
    from asr_audit.models.ct2 import CT2WhisperBackend

    return CT2WhisperBackend(bundled_model_dir("whisper-tiny.en"), "whisper-tiny.en", DecodeOptions())


@pytest.fixture(scope="session")
def tiny_pt():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from asr_audit.models.base import DecodeOptions
    from asr_audit.models.hf import load_bundled_torch

    return load_bundled_torch("whisper-tiny.en", DecodeOptions())


@pytest.fixture(scope="session")
def base_ct2():
    pytest.importorskip("ctranslate2")
    from asr_audit.models.base import load_backend

    return load_backend("whisper-base")


# A greedy decode is a pure function of the backend and the audio: the tests that need the same
# decode share it (one Whisper encoder pass costs seconds on a CPU) instead of repeating it.


@pytest.fixture(scope="session")
def tiny_ct2_librivox(tiny_ct2, librivox) -> list[str]:
    """whisper-tiny.en (CTranslate2) on the five LibriVox clips, in one call."""
    return tiny_ct2.transcribe(librivox[0])


@pytest.fixture(scope="session")
def tiny_ct2_alone(tiny_ct2, librivox) -> list[str]:
    """whisper-tiny.en (CTranslate2) on each of the first three LibriVox clips alone (a batch of one)."""
    return [tiny_ct2.transcribe([a])[0] for a in librivox[0][:3]]


@pytest.fixture(scope="session")
def base_ct2_librivox(base_ct2, librivox) -> list[str]:
    """whisper-base (CTranslate2) on the five LibriVox clips, in one call."""
    return base_ct2.transcribe(librivox[0])
