"""The synthetic prediction-set generator: deterministic, loadable, and its ground truth is findable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.refdis import preset_params
from asr_audit.probes.predfiles.refdis_run import run_refdis
from asr_audit.testing.synthetic import MIDDLE, SyntheticSet, make_prediction_set


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    a = make_prediction_set(60, rng=np.random.default_rng(7), folder=tmp_path / "a")
    b = make_prediction_set(60, rng=np.random.default_rng(7), folder=tmp_path / "b")
    make_prediction_set(60, rng=np.random.default_rng(8), folder=tmp_path / "c")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert a.planted == b.planted and a.spoken == b.spoken
    assert _files(tmp_path / "a") != _files(tmp_path / "c")
    assert len(_files(tmp_path / "a")) == 10


def test_files_load_and_match_the_ground_truth(tmp_path: Path) -> None:
    s = make_prediction_set(80, 5, rng=np.random.default_rng(3), folder=tmp_path, copy_shares=(1.0,), missing_rate=0.05)
    preds = load_predictions(tmp_path)
    assert sorted(preds.models) == sorted(s.models)
    assert s.honest == ("honest-01", "honest-02", "honest-03", "honest-04") and dict(s.copying) == {"copier-01": 1.0}
    assert list(preds.references) == list(s.clip_ids)
    n_missing = sum(preds.hypothesis(m, c) is None for m in s.models for c in s.clip_ids)
    assert 0 < n_missing < 0.15 * len(s.models) * len(s.clip_ids)
    assert s.planted, "80 clips at the default rates plant errors"
    for p in s.planted:
        ref = preds.references[p.clip_id]
        if p.written:  # what the reference writes is in it; a full copier reproduces it
            assert p.written.rstrip(".,") in ref
            assert p.copied_by == ("copier-01",)
        if p.kind.startswith("omitted"):
            assert p.spoken and not p.written and p.spoken in s.spoken[p.clip_id]
    # normalization has work to do: raw hypotheses differ from the references in surface form
    differ = sum(preds.hypothesis(m, c) not in (None, preds.references[c]) for m in s.honest for c in s.clip_ids)
    assert differ > 0.5 * len(s.honest) * len(s.clip_ids)


def test_bad_arguments_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="copying models"):
        make_prediction_set(5, 2, rng=np.random.default_rng(0), folder=tmp_path, copy_shares=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="copy shares"):
        make_prediction_set(5, 3, rng=np.random.default_rng(0), folder=tmp_path, copy_shares=(1.5,))


def _keys(planted: SyntheticSet) -> set[tuple[str, str, str]]:
    return {(p.clip_id, p.position, p.legacy_kind) for p in planted.planted}


def test_refdis_finds_planted_errors_and_flags_the_copier(tmp_path: Path) -> None:
    s = make_prediction_set(400, rng=np.random.default_rng(11), folder=tmp_path, copy_shares=(0.9, 0.5))
    result = run_refdis(load_predictions(tmp_path), s.panel(4), preset_params("anchor", loo=False), n_resamples=20)
    found = {(e.clip_id, e.position, e.legacy_kind) for e in result.edits}
    boundary = s.boundary_errors()
    recall = sum((p.clip_id, p.position, p.legacy_kind) in found for p in boundary) / len(boundary)
    spurious = [p for p in boundary if p.kind.startswith("spurious")]
    recall_spurious = sum((p.clip_id, p.position, p.legacy_kind) in found for p in spurious) / len(spurious)
    precision = len(found & _keys(s)) / len(found)
    assert recall >= 0.75, recall
    assert recall_spurious >= 0.9, recall_spurious
    assert precision >= 0.9, precision
    assert not any(e.position == MIDDLE for e in result.edits)  # the anchor preset mines boundaries only

    rate = {sc.model: sc.accept_ref.rate for sc in result.scores}
    honest_max = max(rate[m] for m in s.honest)
    assert honest_max < 0.15, rate
    assert rate["copier-01"] > honest_max + 0.5, rate
    assert rate["copier-01"] > rate["copier-02"] > honest_max + 0.2, rate


def test_paper_preset_also_finds_interior_substitutions(tmp_path: Path) -> None:
    s = make_prediction_set(300, rng=np.random.default_rng(5), folder=tmp_path, middle_error_rate=0.3)
    result = run_refdis(load_predictions(tmp_path), s.panel(4), preset_params("paper", loo=False), n_resamples=20)
    middle = [p for p in s.planted if p.position == MIDDLE]
    found = {(e.clip_id, e.ref_indices[0] > 0) for e in result.edits if e.position == MIDDLE}
    assert middle and sum((p.clip_id, True) in found for p in middle) >= 0.7 * len(middle)
