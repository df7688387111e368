"""WER inflation on shared bootstrap resamples: per-model results independent of the others."""

from __future__ import annotations


import numpy as np
import pytest

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.inflation import apply_edits, wer_inflation, wer_inflations
from asr_audit.probes.predfiles.refdis import preset_params
from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
from asr_audit.probes.predfiles.refdis_run import run_refdis
from asr_audit.testing.synthetic import make_prediction_set
from asr_audit.text.align import AlignmentCache, wer_counts
from asr_audit.text.normalize import get_normalizer


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    folder = tmp_path_factory.mktemp("synth")
    s = make_prediction_set(80, 6, rng=np.random.default_rng(11), folder=folder, missing_rate=0.05)
    return s, load_predictions(folder)


def scores(result) -> dict[str, dict]:  # noqa: ANN001
    return {s.model: s.to_dict() for s in result.scores}


def test_model_order_and_subset_change_no_model_result(synth) -> None:  # noqa: ANN001
    s, preds = synth
    panel = s.panel(4)
    params = preset_params("anchor", loo=False)
    base = scores(run_refdis(preds, panel, params, seed=3, n_resamples=300))
    shuffled = scores(run_refdis(preds, panel, params, models=list(reversed(preds.models)), seed=3, n_resamples=300))
    assert shuffled == base
    subset = preds.models[-2:]
    some = scores(run_refdis(preds, panel, params, models=subset, seed=3, n_resamples=300))
    assert {m: base[m] for m in subset} == some
    other_seed = scores(run_refdis(preds, panel, params, seed=4, n_resamples=300))
    m = subset[0]
    assert other_seed[m]["wer_inflation"] == base[m]["wer_inflation"]
    assert other_seed[m]["wer_inflation_ci_low"] != base[m]["wer_inflation_ci_low"]  # the seed is used


def test_wer_figures_equal_kaldialign_counts(synth) -> None:  # noqa: ANN001
    s, preds = synth
    panel = s.panel(4)
    result = run_refdis(preds, panel, preset_params("anchor", loo=False), n_resamples=50)
    clips = prepare_clips(preds, preds.models, get_normalizer("whisper"), True)
    for score in result.scores:
        m = score.model
        edits = result.mining.scored_edits(m)
        err = words = err_c = words_c = n = 0
        for c in clips:
            hyp = c.hyps.get(m)
            if hyp is None or not c.ref:
                continue
            fixed = apply_edits(c.ref, [e for e in edits if e.clip_id == c.clip_id])
            a, b = wer_counts(c.ref, hyp), wer_counts(fixed, hyp)
            err, words, err_c, words_c, n = err + a.errors, words + a.ref_len, err_c + b.errors, words_c + b.ref_len, n + 1
        inf = score.inflation
        assert (inf.n_clips, inf.n_words) == (n, words)
        assert inf.wer == pytest.approx(err / words) and inf.wer_corrected == pytest.approx(err_c / words_c)
        assert inf.inflation == pytest.approx(100 * (err_c / words_c - err / words))
        assert inf.ci_low <= inf.inflation <= inf.ci_high
    copier = result.score("copier-01").inflation
    assert copier.inflation > 0  # copying the reference's errors flatters its WER


def test_one_model_call_is_the_many_call(synth) -> None:  # noqa: ANN001
    s, preds = synth
    clips = prepare_clips(preds, preds.models, get_normalizer("whisper"), True)
    cache = AlignmentCache()
    many = wer_inflations(clips, {m: [] for m in preds.models}, cache, np.random.default_rng(1), 200)
    one = wer_inflation(clips, preds.models[2], [], cache, np.random.default_rng(1), 200)
    assert one == many[preds.models[2]]
    assert one.inflation == 0.0 and one.ci_low == one.ci_high == 0.0  # no edits: nothing to correct


def test_model_without_output(synth) -> None:  # noqa: ANN001
    _, preds = synth
    clips = prepare_clips(preds, preds.models, get_normalizer("whisper"), True)
    out = wer_inflations(clips, {"nobody": []}, AlignmentCache(), np.random.default_rng(0), 100)
    assert (out["nobody"].n_clips, out["nobody"].wer, out["nobody"].ci_high) == (0, 0.0, 0.0)
