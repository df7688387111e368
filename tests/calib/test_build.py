"""Building a set with the real offline TTS engines: determinism, audio format, loadable manifests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import soundfile as sf

from asr_audit.calib.build import build_calibration, resolve_voice
from asr_audit.calib.generate import CalibConfig
from asr_audit.calib.truth import load_truth
from asr_audit.corpus.spec import load_corpus
from asr_audit.errors import ConfigError

VOICES = ["flite-slt", "flite-rms"]


def _need_flite() -> None:
    from asr_audit.audio.voices import available_voices

    if not set(VOICES) <= set(available_voices()):
        pytest.skip("flite voices slt/rms are not installed (apt-get install flite)")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_identical_files_and_audio(tmp_path: Path) -> None:
    _need_flite()
    from asr_audit.audio.voices import synthesize

    cfg = CalibConfig(n_sentences=3, error_rate=0.7, p_second=0.0)
    a = build_calibration(tmp_path / "a", cfg, ["slt", "rms"], seed=5)
    # the second build bypasses the TTS cache: the engines themselves must be deterministic
    b = build_calibration(tmp_path / "b", cfg, VOICES, seed=5, synthesize=lambda v, t: synthesize(v, t, cache=False))
    assert a.failures == b.failures == ()
    fa, fb = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert fa == fb
    assert {"calib-train.jsonl", "calib-test.jsonl", "truth.jsonl", "calib.json"} <= set(fa)
    assert sum(k.startswith("audio/") and k.endswith(".wav") for k in fa) == 6
    build_calibration(tmp_path / "c", cfg, VOICES, seed=6)
    assert _files(tmp_path / "c")["truth.jsonl"] != fa["truth.jsonl"]


def test_manifest_audio_and_truth_agree(tmp_path: Path) -> None:
    _need_flite()
    build_calibration(tmp_path, CalibConfig(n_sentences=4, test_fraction=0.5, p_second=0.0), VOICES, seed=1)
    truth = load_truth(tmp_path)
    assert len(truth.clips) == 8
    for split in ("train", "test"):
        corpus = load_corpus(tmp_path / f"calib-{split}.jsonl")
        assert len(corpus) == 4
        for clip in corpus:
            info = truth.clips[clip.id]
            data, sr = sf.read(clip.audio_path)
            assert sr == 16000 and data.ndim == 1 and abs(len(data) / sr - clip.duration) < 1e-3
            assert clip.reference == info.reference and clip.speaker in VOICES
    # the two voices of a sentence share its reference, speech and truth (the record is per sentence)
    by_sentence: dict[str, set[str]] = {}
    for c in truth.clips.values():
        by_sentence.setdefault(c.sentence_id, set()).add(c.reference + "|" + c.spoken)
    assert all(len(v) == 1 for v in by_sentence.values())
    meta = json.loads((tmp_path / "calib.json").read_text())
    assert meta["seed"] == 1 and meta["voices"] == VOICES and meta["clips_by_split"] == {"train": 4, "test": 4}


def test_voice_names_resolve_and_unknown_ones_list_the_valid(tmp_path: Path) -> None:
    _need_flite()
    assert resolve_voice("slt") == "flite-slt" and resolve_voice("espeak-en-us") == "espeak-en-us"
    with pytest.raises(ConfigError, match="available voices"):
        build_calibration(tmp_path, CalibConfig(n_sentences=2), ["no-such-voice"], seed=0)


def test_a_failing_voice_skips_its_clips_and_the_build_goes_on(tmp_path: Path, fake_tts) -> None:
    from asr_audit.audio.tts import SynthesisError

    def flaky(voice: str, text: str):
        if voice == "bad":
            raise SynthesisError("engine crashed")
        return fake_tts(voice, text)

    r = build_calibration(tmp_path, CalibConfig(n_sentences=3), ["good", "bad"], seed=0, synthesize=flaky)
    assert r.n_clips == 3 and len(r.failures) == 3 and "engine crashed" in r.failures[0][1]
    assert all(c.speaker == "good" for c in load_truth(tmp_path).clips.values())
