"""WER inflation on shared bootstrap resamples: per-model results independent of the others."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.inflation import apply_edits, wer_inflation, wer_inflations
from asr_audit.probes.predfiles.refdis import ClipInput, Edit, mine_clip, preset_params
from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
from asr_audit.probes.predfiles.refdis_run import run_refdis
from asr_audit.testing.synthetic import make_prediction_set
from asr_audit.text.align import AlignmentCache, wer_counts
from asr_audit.text.normalize import get_normalizer


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("synth")
    s = make_prediction_set(80, 6, rng=np.random.default_rng(11), folder=folder, missing_rate=0.05)
    return s, load_predictions(folder)


def oracle_corrected(ref: tuple[str, ...], edits) -> tuple[str, ...]:
    """An independent corrected reference, from the edits' JSON form: every correction is a piece
    ``(position, rank, words)`` - an insertion before reference index ``position`` (rank 0), a
    replacement of ``ref[start:stop]`` (rank 1) - and every reference word not replaced is a piece
    of its own (rank 2); the pieces sorted by position and rank, concatenated."""
    pieces: list[tuple[int, int, list[str]]] = []
    covered: set[int] = set()
    for e in edits:
        d = e.to_dict()
        if d["kind"] == "insertion":
            pieces.append((d["ref_indices"][0], 0, d["alt_text"].split()))
            continue
        c = d.get("correction")
        start, stop, words = (
            (c["start"], c["stop"], c["tokens"])
            if c
            else (d["ref_indices"][0], d["ref_indices"][-1] + 1, d["alt_text"].split())
        )
        assert not covered & set(range(start, stop)), "overlapping corrections"
        covered |= set(range(start, stop))
        pieces.append((start, 1, list(words)))
    pieces += [(i, 2, [w]) for i, w in enumerate(ref) if i not in covered]
    return tuple(w for _, _, words in sorted(pieces, key=lambda p: p[:2]) for w in words)


def scores(result) -> dict[str, dict]:
    return {s.model: s.to_dict() for s in result.scores}


def test_model_order_and_subset_change_no_model_result(synth) -> None:
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


def test_wer_figures_equal_kaldialign_counts(synth) -> None:
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
            if not c.ref:
                continue
            answered = hyp is not None
            hyp = () if hyp is None else hyp  # a missing hypothesis deletes every reference word (issue 12 defect 7)
            fixed = oracle_corrected(c.ref, [e for e in edits if e.clip_id == c.clip_id])
            a, b = wer_counts(c.ref, hyp), wer_counts(fixed, hyp)
            err, words, err_c, words_c, n = (
                err + a.errors,
                words + a.ref_len,
                err_c + b.errors,
                words_c + b.ref_len,
                n + answered,
            )
        inf = score.inflation
        assert (inf.n_clips, inf.n_words) == (n, words)
        assert inf.wer == pytest.approx(err / words) and inf.wer_corrected == pytest.approx(err_c / words_c)
        assert inf.inflation == pytest.approx(100 * (err_c / words_c - err / words))
        assert inf.ci_low is not None and inf.ci_high is not None and inf.inflation is not None
        assert inf.ci_low <= inf.inflation <= inf.ci_high
    copier = result.score("copier-01").inflation
    assert copier.inflation is not None and copier.inflation > 0  # copying the reference's errors flatters its WER


def test_inflation_by_hand() -> None:
    """Two clips whose WERs are counted by hand; the one-model call equals the many-model call."""
    a = ClipInput(
        "a", ("madam", "president", "we", "agree"), {"m": ("we", "agree"), "n": ("madam", "president", "we", "agree")}
    )
    b = ClipInput("b", ("it", "is", "late"), {"m": ("it", "is", "late"), "n": ("it", "was", "late")})
    e = Edit(
        clip_id="a",
        kind="deletion",
        position="start",
        ref_tokens=("madam", "president"),
        ref_indices=(0, 1),
        alt_text="",
        n_panel_agree=3,
        n_panel=3,
        consensus_cer=1.0,
        miners=(),
        verdicts={},
        renderings={},
    )
    cache = AlignmentCache()
    many = wer_inflations([a, b], {"m": [e], "n": [e]}, cache, np.random.default_rng(1), 200)
    # m: 2 errors / 7 words against the references, 0 / 5 against the corrected ones
    assert (many["m"].wer, many["m"].wer_corrected) == (pytest.approx(2 / 7), 0.0)
    assert many["m"].inflation == pytest.approx(-100 * 2 / 7)
    # n (reads "madam president"): 1 / 7, then 3 / 5 - the corrected reference no longer flatters it
    assert (many["n"].wer, many["n"].wer_corrected) == (pytest.approx(1 / 7), pytest.approx(3 / 5))
    n_low, n_inflation, n_high = many["n"].ci_low, many["n"].inflation, many["n"].ci_high
    assert n_low is not None and n_inflation is not None and n_high is not None
    assert n_low <= n_inflation <= n_high
    one = wer_inflation([a, b], "n", [e], AlignmentCache(), np.random.default_rng(1), 200)
    assert one == many["n"]


def test_corrections_do_not_duplicate_words() -> None:
    """Issue 11, defect 7: a panel whose rendering replaces more reference words than the run
    (``and our firefighters`` -> ``fire fighters``, run ``and our``) must not leave
    ``firefighters`` behind (it gave "fire fighters firefighters")."""
    ref = "and our firefighters from many countries"
    hyps = {
        "p1": "fire fighters from many countries",
        "p2": "fire fighters from many countries",
        "p3": "firefighters from many countries",
    }
    clip = ClipInput("c", tuple(ref.split()), {m: tuple(h.split()) for m, h in hyps.items()})
    edits = mine_clip(clip, ["p1", "p2", "p3"], ["p1"], preset_params("anchor", loo=False), AlignmentCache())
    assert [(e.ref_tokens, e.alt_text) for e in edits] == [(("and", "our"), "fire fighters")]
    expected = ("fire", "fighters", "from", "many", "countries")
    assert oracle_corrected(clip.ref, edits) == expected
    assert apply_edits(clip.ref, edits) == expected


def test_voxpopuli_corrected_references_equal_the_oracle() -> None:
    from pathlib import Path

    vox = Path(__file__).parents[2] / "fixtures" / "voxpopuli"
    preds = load_predictions(vox)
    panel = ["wav2vec2-base-960h", "whisper-tiny.en", "whisper-base.en", "whisper-small.en"]
    clips = {c.clip_id: c for c in prepare_clips(preds, preds.models, get_normalizer("whisper"), True)}
    checked = 0
    for preset, loo in (("anchor", False), ("anchor", True), ("paper", True)):
        mining = run_refdis(preds, panel, preset_params(preset, loo=loo), n_resamples=10).mining
        for edits in [list(mining.edits), *map(list, mining.loo_edits.values())]:
            for cid in {e.clip_id for e in edits}:
                own = [e for e in edits if e.clip_id == cid]
                assert apply_edits(clips[cid].ref, own) == oracle_corrected(clips[cid].ref, own), cid
                checked += 1
    assert checked > 300
    fire = "20180612-0900-PLENARY-14-en_20180612-16:59:33_6"
    mining = run_refdis(preds, panel, preset_params("anchor", loo=False), n_resamples=10).mining
    own = [e for e in mining.edits if e.clip_id == fire]
    assert (
        " ".join(apply_edits(clips[fire].ref, own))
        == "fire fighters from many european countries to contain the emergency"
    )


def test_model_without_output(synth) -> None:
    _, preds = synth
    clips = prepare_clips(preds, preds.models, get_normalizer("whisper"), True)
    out = wer_inflations(clips, {"nobody": []}, AlignmentCache(), np.random.default_rng(0), 100)
    # issue 12 defect 7: no output is every word deleted (WER 1.0, coverage 0), never the best WER
    nobody = out["nobody"]
    assert (nobody.n_clips, nobody.wer, nobody.wer_corrected, nobody.coverage) == (0, 1.0, 1.0, 0.0)
    assert nobody.n_words == sum(len(c.ref) for c in clips)


def test_all_empty_references_leave_wer_undefined() -> None:
    clips = [ClipInput("a", (), {"m": ("x",)}), ClipInput("b", (), {"m": ()})]
    out = wer_inflations(clips, {"m": []}, AlignmentCache(), np.random.default_rng(0), 10)["m"]
    assert (out.wer, out.wer_corrected, out.inflation, out.coverage) == (None, None, None, None)


def test_partial_coverage_counts_missing_as_deletions() -> None:
    clips = [ClipInput("a", ("one", "two"), {"m": ("one", "two")}), ClipInput("b", ("three", "four"), {})]
    out = wer_inflations(clips, {"m": []}, AlignmentCache(), np.random.default_rng(0), 10)["m"]
    assert (out.wer, out.coverage, out.n_clips, out.n_words) == (0.5, 0.5, 1, 4)


def test_wer_interval_is_wers_own_bootstrap_on_the_same_resamples() -> None:
    """``wer_ci_low/high``: the clip bootstrap of WER alone with the same seed (the resamples the
    inflation interval uses), bracketing WER; the inflation interval is the one computed without it."""
    from asr_audit.stats.intervals import bootstrap_ratio_differences

    rng = np.random.default_rng(5)
    clips = []
    for i in range(40):
        ref = tuple(f"w{j}" for j in range(int(rng.integers(3, 12))))
        hyp = tuple(w if rng.random() > 0.2 else "x" for w in ref)
        clips.append(ClipInput(f"c{i}", ref, {"m": hyp}))
    cache = AlignmentCache()
    inf = wer_inflations(clips, {"m": []}, cache, np.random.default_rng(9), 400)["m"]
    err = np.array([[wer_counts(c.ref, c.hyps["m"] or ()).errors] for c in clips], dtype=float)
    words = np.array([[len(c.ref)] for c in clips], dtype=float)
    zeros = np.zeros_like(err)
    ((_, low, high),) = bootstrap_ratio_differences(err, words, zeros, zeros, np.random.default_rng(9), 400)
    assert (inf.wer_ci_low, inf.wer_ci_high) == (low, high)
    assert inf.wer_ci_low is not None and inf.wer_ci_high is not None and inf.wer is not None
    assert inf.wer_ci_low < inf.wer < inf.wer_ci_high
    ((_, i_low, i_high),) = bootstrap_ratio_differences(err, words, err, words, np.random.default_rng(9), 400)
    assert (inf.ci_low, inf.ci_high) == (100 * i_low, 100 * i_high)


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_apply_edits_equals_the_oracle_on_random_corrections(data: st.DataObject) -> None:
    """``apply_edits`` (the reference copied by slices between corrections) against the oracle, on
    random non-overlapping replacements (deletions, substitutions, ranges wider than the run),
    insertions at the edges and interior ones (two-reference mode), in random order."""
    n = data.draw(st.integers(0, 9))
    ref = tuple(f"r{i}" for i in range(n))
    cuts = sorted(data.draw(st.sets(st.integers(0, n), max_size=6)))
    common: dict[str, Any] = {
        "clip_id": "c",
        "n_panel_agree": 3,
        "n_panel": 3,
        "miners": (),
        "verdicts": {},
        "renderings": {},
    }
    edits, starts = [], set()
    for lo, hi in zip(cuts, cuts[1:]):
        if not data.draw(st.booleans()):
            continue
        words = tuple(data.draw(st.lists(st.sampled_from(["x", "y", "z"]), max_size=3)))
        run_stop = data.draw(st.integers(lo + 1, hi))  # the run; the correction may reach past it
        correction = None if run_stop == hi else (lo, hi, words)
        kind = "substitution" if words else "deletion"
        edits.append(
            Edit(
                kind=kind,
                position="middle",
                ref_tokens=ref[lo:run_stop],
                ref_indices=tuple(range(lo, run_stop)),
                alt_text=" ".join(words),
                consensus_cer=0.5,
                correction=correction,
                **common,
            )
        )
        starts.add(lo)
    covered = {i for e in edits for i in range(e.fix[0], e.fix[1])}
    anchors = [0, n, *(k for k in range(1, n) if k not in covered and k not in starts)]
    for anchor in data.draw(st.lists(st.sampled_from(anchors), max_size=3, unique=True)):
        words = tuple(data.draw(st.lists(st.sampled_from(["p", "q"]), min_size=1, max_size=2)))
        edits.append(
            Edit(
                kind="insertion",
                position="start" if anchor == 0 else "end",
                ref_tokens=(),
                ref_indices=(anchor,),
                alt_text=" ".join(words),
                consensus_cer=None,
                **common,
            )
        )
    edits = data.draw(st.permutations(edits))
    assert apply_edits(ref, edits) == oracle_corrected(ref, edits)
