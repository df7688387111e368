"""sphinx:en-us on the LibriVox fixture clips."""

from __future__ import annotations

import pytest
from audio_fixtures import LIBRIVOX, librivox_refs

from asr_audit.audio.io import load_audio
from asr_audit.corpus.clips import Clip
from asr_audit.errors import ConfigError
from asr_audit.models.base import DecodeOptions, available_backends, load_backend

pytest.importorskip("pocketsphinx")


@pytest.fixture(scope="module")
def sphinx():
    return load_backend("sphinx:en-us")


def _audio(name: str):
    return load_audio(Clip(id=name, reference="", audio_path=str(LIBRIVOX / f"{name}.flac")))


def test_registered_with_capabilities() -> None:
    kinds = {k.name: k for k in available_backends()}
    assert kinds["sphinx"].capabilities == frozenset({"transcribe"}) and kinds["sphinx"].extra == "sphinx"


def test_transcribes_and_is_order_independent(sphinx) -> None:
    import kaldialign

    names = ["0880", "0930"]
    forward = sphinx.transcribe([_audio(n) for n in names])
    backward = sphinx.transcribe([_audio(n) for n in reversed(names)])[::-1]
    assert forward == backward
    refs = librivox_refs()
    for name, hyp in zip(names, forward):
        ref = refs[name].lower().split()
        assert kaldialign.edit_distance(ref, hyp.split())["total"] / len(ref) < 0.6, hyp
    assert "might even have been made" in forward[1]


def test_a_batch_shared_with_worker_processes_gives_the_serial_transcripts(monkeypatch: pytest.MonkeyPatch) -> None:
    """PocketSphinx holds the GIL, so a batch with enough audio is shared out to worker processes: the
    transcripts are bit-identical to decoding each clip alone in this process."""
    from asr_audit.models import sphinx as sphinx_module

    monkeypatch.setattr(sphinx_module, "usable_cpus", lambda: 3)  # two workers, wherever this runs
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    # the threshold lowered so that three short clips (12 s) are shared out, one to each process:
    # what is checked is the sharing, not the threshold's value
    monkeypatch.setattr(sphinx_module, "PARALLEL_MIN_SECONDS", 4.0)
    audios = [_audio(n) for n in ("0880", "0890", "0930")]
    backend = sphinx_module.SphinxBackend("en-us", DecodeOptions())
    try:
        shared = backend.transcribe(audios)
        assert backend._pool is not None and backend._pool[1] == 2  # the workers did take part
        alone = [backend.transcribe([a])[0] for a in audios]  # one clip: this process only
    finally:
        backend.close()
    assert shared == alone and all(shared)


def test_identity_is_stable_and_has_weights_hash(sphinx) -> None:
    ident = sphinx.identity()
    assert ident.spec == "sphinx:en-us" and len(ident.weights_hash) == 16
    assert load_backend("sphinx:en-us").identity().key == ident.key
    assert sphinx.max_duration == 30.0


def test_rejects_unknown_model_and_language() -> None:
    with pytest.raises(ConfigError, match="valid: en-us"):
        load_backend("sphinx:fr-fr")
    with pytest.raises(ConfigError, match="English only"):
        load_backend("sphinx:en-us", DecodeOptions(language="de"))
