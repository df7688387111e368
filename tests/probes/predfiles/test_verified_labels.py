"""People's labels as a verification: the stratified weighted sample, the combining rule, kappa."""

from __future__ import annotations

from collections import Counter

import pytest

from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.verified import REFERENCE_RIGHT, REFERENCE_WRONG, UNSURE, weighted_rate
from asr_audit.probes.predfiles.verified_labels import (
    cohen_kappa,
    combine,
    draw_sample,
    labels_verification,
    refdis_result_of,
    run_hash,
    with_labels,
)
from asr_audit.store.labels import CANT_TELL, NEITHER, PANEL, REFERENCE, LabelRow

# strata of different sizes and precisions
STRATA = {("substitution", "start"): (60, 0.9), ("deletion", "end"): (25, 0.4), ("insertion", "start"): (15, 0.2)}


def _edits() -> tuple[list[dict], dict[str, bool]]:
    edits, wrong = [], {}
    for (kind, pos), (n, share) in STRATA.items():
        for i in range(n):
            e = {
                "clip_id": f"{kind}{i:03d}",
                "kind": kind,
                "position": pos,
                "ref_indices": [0],
                "ref_tokens": [] if kind == "insertion" else ["a"],
                "alt_text": "" if kind == "deletion" else "b",
                "scored": ["m"],
                "verdicts": {"m": "ref" if i % 2 else "consensus"},
            }
            edits.append(e)
            wrong[f"{kind}{i:03d}"] = i < round(n * share)
    return edits, wrong


def test_sample_is_stratified_weighted_and_seeded() -> None:
    edits, _ = _edits()
    result = {"edits": edits}
    s = draw_sample(result, 20, seed=4)
    assert len(s) == 20 and len({x.key for x in s}) == 20
    by = Counter(x.stratum for x in s)
    assert by == {"substitution/start": 12, "deletion/end": 5, "insertion/start": 3}  # proportional
    for h in by:  # weights: stratum size over draws, summing to the stratum size
        total = {"substitution/start": 60, "deletion/end": 25, "insertion/start": 15}[h]
        assert sum(x.weight for x in s if x.stratum == h) == pytest.approx(total)
    assert [x.key for x in draw_sample(result, 20, seed=4)] == [x.key for x in s]
    assert [x.key for x in draw_sample(result, 20, seed=5)] != [x.key for x in s]
    everything = draw_sample(result, None, seed=0)
    assert len(everything) == 100 and {x.weight for x in everything} == {1.0}
    tiny = draw_sample(result, 3, seed=0)  # one per stratum at least, when n allows
    assert len({x.stratum for x in tiny}) == 3
    with pytest.raises(ConfigError, match="at least 1"):
        draw_sample(result, 0, seed=0)


def test_weighted_precision_is_unbiased_for_the_whole_edit_set() -> None:
    """Over many seeded samples the weighted miner precision averages to the whole set's (within
    four standard errors of the mean over samples)."""
    edits, wrong = _edits()
    edits_by_clip = {e["clip_id"]: e for e in edits}
    true = sum(wrong.values()) / len(wrong)
    weighted = []
    for seed in range(2000):
        s = draw_sample({"edits": edits}, 14, seed=seed)
        hits = [(wrong[x.edit["clip_id"]], x.weight) for x in s]
        weighted.append(weighted_rate(hits).rate)
        assert all(edits_by_clip[x.edit["clip_id"]] is x.edit for x in s)
    mean = sum(weighted) / len(weighted)
    se = (sum((w - mean) ** 2 for w in weighted) / (len(weighted) - 1) / len(weighted)) ** 0.5
    assert abs(mean - true) < 4 * se < 0.01


def test_combining_rule() -> None:
    assert combine([PANEL]) == REFERENCE_WRONG and combine([REFERENCE]) == REFERENCE_RIGHT
    assert combine([NEITHER]) == UNSURE and combine([CANT_TELL]) == UNSURE
    assert combine([PANEL, REFERENCE]) == UNSURE  # two annotators who disagree: unsure
    assert combine([PANEL, PANEL, REFERENCE]) == REFERENCE_WRONG  # a majority of three
    assert combine([PANEL, CANT_TELL]) == UNSURE


def test_kappa() -> None:
    same = cohen_kappa("a", "b", [(PANEL, PANEL), (REFERENCE, REFERENCE)] * 10)
    assert same.kappa == pytest.approx(1.0) and same.high == pytest.approx(1.0)
    chance = cohen_kappa(
        "a", "b", [(PANEL, PANEL), (PANEL, REFERENCE), (REFERENCE, PANEL), (REFERENCE, REFERENCE)] * 10
    )
    assert chance.low is not None and chance.high is not None
    assert chance.kappa == pytest.approx(0.0) and chance.low < 0 < chance.high
    assert cohen_kappa("a", "b", []).kappa is None
    assert cohen_kappa("a", "b", [(PANEL, PANEL)] * 5).kappa is None  # chance agreement is 1: undefined


def _row(i: int, annotator: str, key: str, choice: str, weight: float = 1.0) -> LabelRow:
    return LabelRow(i, annotator, float(i), key, "h", choice, weight)


def test_with_labels_scores_models_and_the_miner() -> None:
    from asr_audit.probes.predfiles.verified import edit_key

    edits, wrong = _edits()
    result = {"edits": edits, "models": [{"model": "m"}], "params": {}, "normalizer": {}}
    rows = []
    for i, e in enumerate(edits):
        choice = PANEL if wrong[e["clip_id"]] else REFERENCE
        rows.append(_row(2 * i, "a", edit_key(e), choice))
        rows.append(_row(2 * i + 1, "b", edit_key(e), choice if i % 10 else CANT_TELL))
    out = with_labels(result, rows, "labels.sqlite")
    v = out["verification"]
    assert v["source"] == "human labels" and v["annotators"] == ["a", "b"]
    assert v["miner_precision"]["n"] == 90  # the ten edits b could not tell are unsure
    assert set(v["miner_precision_by_kind"]) == {"substitution", "deletion", "insertion"}
    assert v["agreement"][0]["n"] == 100 and v["agreement"][0]["kappa"] < 1
    assert v["run_hash"] == run_hash(result) and v["labelled_runs"] == ["h"]
    m = out["models"][0]["verified"]
    assert m["n_eligible"] + m["hears_better_n"] == 90
    with pytest.raises(ConfigError, match="none of the 1 labelled edits"):
        with_labels(result, [_row(0, "a", "nope|substitution|0:1|a>b", PANEL)], "labels.sqlite")
    with pytest.raises(ConfigError, match="holds no labels"):
        with_labels(result, [], "labels.sqlite")
    assert labels_verification(rows[:1]).labels[rows[0].edit_key].label in (REFERENCE_WRONG, REFERENCE_RIGHT)


def test_refdis_result_of_a_run() -> None:
    r = {"probe": "refdis", "edits": []}
    assert refdis_result_of(r, None, "x") is r
    run = {"probes": [{"probe": "refdis", "corpus": "a", "result": r}, {"probe": "refdis", "corpus": "b", "result": r}]}
    with pytest.raises(ConfigError, match="several corpora"):
        refdis_result_of(run, None, "results.json")
    assert refdis_result_of(run, "b", "results.json") == r
    with pytest.raises(ConfigError, match="no refdis result for corpus 'c'"):
        refdis_result_of(run, "c", "results.json")


def test_labels_file_as_the_runs_verification_step(tmp_path) -> None:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.probes.predfiles.verified_labels import labels_verify, with_labels_summary
    from asr_audit.store.labels import LabelStore

    preds = load_predictions(VOXPOPULI_EXAMPLES)
    plain = run_refdis(preds, VOXPOPULI_PANEL, preset_params("anchor")).to_dict()
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        with pytest.raises(ConfigError, match="holds no labels"):
            labels_verify(path)
        for i, s in enumerate(draw_sample(plain, 15, seed=2)):
            store.add("ann", s.key, run_hash(plain), PANEL if i % 4 else REFERENCE, s.weight)
    verified = run_refdis(preds, VOXPOPULI_PANEL, preset_params("anchor"), verify=labels_verify(path)).to_dict()
    out = with_labels_summary(verified, path)
    assert out["verification"]["source"] == "human labels" and out["verification"]["miner_precision"]["n"] == 15
    for m in out["models"]:
        assert {"accept_ref", "hears_better", "wer_inflation", "wer_n_clips"} <= set(m["verified"])
    # the same numbers as labelling the finished result
    from asr_audit.probes.predfiles.verified_labels import read_labels

    after = with_labels(plain, read_labels(path), str(path))
    assert [m["verified"]["accept_ref"] for m in after["models"]] == [
        m["verified"]["accept_ref"] for m in out["models"]
    ]
