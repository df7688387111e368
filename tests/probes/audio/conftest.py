"""Fixtures for the audio-probe tests: TTS + LibriVox clips (fixtures/NOTICE.md), session-scoped models."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audio_probe_paths import FIXTURES, MANIFEST  # noqa: F401
from probe_fakes import ReferenceCopier


@pytest.fixture(scope="session")
def corpus():
    pytest.importorskip("soundfile")
    from asr_audit.corpus.spec import load_corpus

    return load_corpus(MANIFEST)


@pytest.fixture(scope="session")
def number_corpus(corpus):
    """The five TTS clips, each with one number."""
    return dataclasses.replace(corpus, clips=tuple(c for c in corpus if not c.id.startswith("librivox")))


@pytest.fixture(scope="session")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("probes-audio") / "store.sqlite3"


@pytest.fixture(scope="session")
def store(store_path: Path):
    from asr_audit.store.sqlite import Store

    st = Store(store_path)
    yield st
    st.close()


@pytest.fixture(scope="session")
def aligner():
    pytest.importorskip("pocketsphinx")
    from asr_audit.align import get_aligner

    return get_aligner("sphinx")


@pytest.fixture(scope="session")
def copier(corpus):
    from asr_audit.audio.io import load_audio

    return ReferenceCopier([(load_audio(c), c.reference) for c in corpus])


@pytest.fixture(scope="session")
def tiny_ct2():
    pytest.importorskip("ctranslate2")
    from asr_audit.models.base import load_backend

    return load_backend("whisper-tiny.en")


@pytest.fixture(scope="session")
def tiny_pt():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from asr_audit.models.base import load_backend

    return load_backend("whisper-tiny.en-pt")


@pytest.fixture(scope="session")
def masked_run(number_corpus, store, aligner, tiny_ct2, copier):
    """Silence-masked number recovery of whisper-tiny.en and the reference copier (computed once)."""
    from asr_audit.probes.audio.masked import MaskParams, run_masked
    from asr_audit.probes.core.models import LocalPool

    return run_masked(LocalPool.of([tiny_ct2, copier]), number_corpus, store, MaskParams(), aligner=aligner)
