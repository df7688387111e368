"""End to end on real offline models: audio says the spoken text, and a real panel's consensus
recovers the planted boundary errors.

Builds 3 sentences x 2 flite voices with errors on every sentence (start and end only), then
transcribes them with whisper-tiny.en, whisper-base and PocketSphinx through the store.
"""

from __future__ import annotations

import pytest

from asr_audit.calib.build import build_calibration
from asr_audit.calib.generate import CalibConfig
from asr_audit.calib.score import score_miner
from asr_audit.calib.truth import load_truth

pytestmark = pytest.mark.slow
PANEL = ("whisper-tiny.en", "whisper-base", "sphinx:en-us")


@pytest.fixture(scope="module")
def transcribed(tmp_path_factory):
    from asr_audit.audio.voices import available_voices
    from asr_audit.corpus.manifests import read_manifest
    from asr_audit.errors import AuditError
    from asr_audit.models.base import load_backend
    from asr_audit.store import Store, write_predictions
    from asr_audit.store.transcribe import transcribe_corpus

    if not {"flite-slt", "flite-rms"} <= set(available_voices()):
        pytest.skip("flite voices are not installed")
    root = tmp_path_factory.mktemp("calib-real")
    cfg = CalibConfig(
        n_sentences=3,
        error_rate=1.0,
        test_fraction=0.0,
        p_second=0.0,
        positions=(("start", 1.0), ("end", 1.0)),
        word_error_rate=0.2,
    )
    build_calibration(root / "set", cfg, ["slt", "rms"], seed=2)
    corpus = read_manifest(root / "set" / "calib-train.jsonl")
    preds = root / "preds"
    with Store(root / "store.sqlite") as store:
        for spec in PANEL:
            try:
                backend = load_backend(spec)
            except AuditError as exc:
                pytest.skip(f"{spec} is not available offline: {exc}")
            out = transcribe_corpus(backend, corpus, store)
            assert not out.failures
            write_predictions(preds / f"{spec.replace(':', '-')}.jsonl", out.records, include_time=False)
    return root / "set", preds


def _wer(pairs) -> float:
    from asr_audit.text.align import corpus_wer
    from asr_audit.text.normalize import get_normalizer

    norm = get_normalizer("whisper")
    return corpus_wer((norm(r).split(), norm(h).split()) for r, h in pairs)


def test_honest_whisper_transcribes_the_speech_not_the_reference(transcribed) -> None:
    from asr_audit.corpus.predfiles import load_predictions

    corpus, preds = transcribed
    truth = load_truth(corpus)
    hyps = load_predictions(preds).file("whisper-tiny.en").rows
    error_clips = {t.clip_id for t in truth.errors()}
    assert len(error_clips) == 6
    vs_spoken = _wer((truth.clips[c].spoken, hyps[c].hypothesis) for c in error_clips)
    vs_ref = _wer((truth.clips[c].reference, hyps[c].hypothesis) for c in error_clips)
    print(f"whisper-tiny.en on error clips: WER vs spoken {vs_spoken:.3f}, vs reference {vs_ref:.3f}")
    assert vs_spoken < 0.5 * vs_ref
    assert vs_ref - vs_spoken > 0.05


def test_real_panel_recovers_planted_boundary_errors(transcribed) -> None:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    corpus, preds = transcribed
    pset = load_predictions(preds)
    panel = [p.replace(":", "-") for p in PANEL]
    result = run_refdis(pset, panel, preset_params("anchor", loo=False), models=panel, n_resamples=1)
    s = score_miner(load_truth(corpus), result, clip_ids=pset.clip_ids)
    print(
        f"real panel, anchor: precision {s.precision.k}/{s.precision.n}, "
        f"boundary recall {s.recall_boundary.k}/{s.recall_boundary.n}, conventions mined {s.conventions_mined.k}"
    )
    assert s.recall_boundary.n >= 6
    assert s.recall_boundary.rate >= 0.75
    assert s.precision.n >= 5 and s.precision.rate >= 0.8
    assert s.conventions_mined.k == 0
