"""The calibration benchmark in Spanish, French and German (``calib build --language``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from asr_audit.calib import build as build_mod
from asr_audit.calib.build import build_calibration, generate_sentences
from asr_audit.calib.generate import CONVENTION, CalibConfig
from asr_audit.calib.languages import calib_normalizer, french_words, german_words, spanish_words
from asr_audit.calib.truth import load_truth
from asr_audit.errors import ConfigError
from asr_audit.store.export import PredictionRecord, write_predictions
from asr_audit.text.normalize import get_normalizer

PANEL = ["honest-a", "honest-b", "honest-c"]

WORDS = {"es": spanish_words, "fr": french_words, "de": german_words}


@pytest.mark.parametrize("language", ["es", "fr", "de"])
def test_spoken_numbers_read_back_as_their_digits(language: str) -> None:
    """The language's normalizer (text2num) reads every spelled count back as the number."""
    normalize = get_normalizer(calib_normalizer(language))
    rng = np.random.default_rng(7)
    numbers = [*range(10, 130), *(int(n) for n in rng.integers(130, 1_000_000, 300))]
    wrong = [(n, WORDS[language](n)) for n in numbers if normalize(WORDS[language](n)) != str(n)]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("language", ["es", "fr", "de"])
def test_every_convention_is_acoustically_identical_after_normalization(language: str) -> None:
    """A record convention (digits, %, Sr., M., Dr.) normalizes to what the speaker said; errors do not."""
    sents = generate_sentences(CalibConfig(n_sentences=120, language=language), np.random.default_rng(3))
    items = [it for group in sents.items for it in group]
    conventions = [it for it in items if it["kind"] == CONVENTION]
    assert len(conventions) > 150 and {it["detail"] for it in conventions} >= {"count", "year", "percent", "honorific"}
    assert [it for it in conventions if it["ref_norm"] != it["spoken_norm"]] == []
    errors = [it for it in items if it["kind"] != CONVENTION]
    assert len(errors) > 40 and all(it["ref_norm"] != it["spoken_norm"] for it in errors)


def test_english_config_record_is_unchanged_and_languages_are_checked() -> None:
    assert "language" not in CalibConfig().to_dict()
    assert CalibConfig(language="fr").to_dict()["language"] == "fr"
    with pytest.raises(ConfigError, match="no calibration vocabulary for language 'it'"):
        CalibConfig(language="it")


def test_spanish_set_end_to_end(tmp_path: Path, fake_tts, run_cli, monkeypatch) -> None:
    """Build through the CLI (fake TTS), then mine it with an exact panel: the set's own normalizer
    (basic-es) finds every planted boundary error and flags no convention."""
    monkeypatch.setattr(build_mod, "resolve_voice", lambda v: v)
    monkeypatch.setattr("asr_audit.audio.voices.synthesize", fake_tts)
    out = tmp_path / "es"
    code, _, err = run_cli(
        "calib", "build", "--out", out, "--language", "es-ES", "--n-sentences", "80", "--voices", "v1",
        "--error-rate", "0.6",
    )  # fmt: skip
    assert code == 0, err
    meta = json.loads((out / "calib.json").read_text(encoding="utf-8"))
    assert meta["config"]["language"] == "es" and meta["normalizer"] == "basic-es"
    first = json.loads((out / "calib-train.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["language"] == "es"
    preds = tmp_path / "preds"
    clips = load_truth(out).clips.values()
    for model in PANEL:  # honest and exact: each says what was spoken
        recs = [PredictionRecord(c.clip_id, c.reference, c.spoken, None) for c in clips]
        write_predictions(preds / f"{model}.jsonl", recs, include_time=False)
    code, _, err = run_cli("calib", "score", "--corpus", out, "--preds", preds, "--panel", ",".join(PANEL),
                           "--json", tmp_path / "s.json")  # fmt: skip
    assert code == 0, err
    d = json.loads((tmp_path / "s.json").read_text())
    assert d["recall_boundary"]["n"] >= 30 and d["recall_boundary"]["rate"] == 1.0
    assert d["precision"]["rate"] == 1.0


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_voices_speak_the_sets_language(tmp_path: Path) -> None:
    from asr_audit.audio.voices import synthesize, voices_for_language

    assert {"espeak-es", "espeak-fr", "espeak-de"} <= {
        v for lang in ("es", "fr", "de") for v in voices_for_language(lang)
    }
    samples, sr = synthesize("espeak-de", "Herr Präsident, vielen Dank.", cache=False)
    assert sr == 16000 and len(samples) > sr // 2
    with pytest.raises(ConfigError, match=r"espeak-en-us speaks en, the set is 'es'; fix: use --voices espeak-es"):
        build_calibration(tmp_path / "x", CalibConfig(n_sentences=2, language="es"), ["espeak-en-us"], 0)


def test_a_registered_voice_declares_its_language() -> None:
    from asr_audit.audio import voices as voices_mod

    with voices_mod.VOICES.temporary():
        voices_mod.register_voices(
            {"voices": {"clone-es": {"engine": "command", "command": "tts {text} {out}", "language": "es-ES"}}}
        )
        voice = voices_mod.get_voice("clone-es")
        assert voice.language == "es" and voice.to_dict()["language"] == "es"
        assert "language" not in voices_mod.get_voice("espeak-en-us").to_dict()  # English cache keys unchanged
        build_mod.check_voice_languages(["clone-es"], "es")
        with pytest.raises(ConfigError, match="clone-es speaks es, the set is 'fr'"):
            build_mod.check_voice_languages(["clone-es"], "fr")
