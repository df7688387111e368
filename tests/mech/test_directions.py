"""Directions: diff-in-means, paired SVD subspace, held-out AUC, controls, save / reload by name."""

from __future__ import annotations

import json

import numpy as np
import pytest

from asr_audit.errors import ConfigError, InputFileError
from asr_audit.mech.directions import (
    Direction,
    auc,
    diff_in_means,
    direction_from_sets,
    heldout_auc,
    load_direction,
    paired_subspace,
    random_direction,
    save_direction,
    shuffled_direction,
    split_pairs,
    vector_hash,
)


def _pairs(seed: int = 0, n: int = 40, width: int = 12, shift: float = 2.0):
    rng = np.random.default_rng(seed)
    b = rng.standard_normal((n, width))
    a = b + shift * np.eye(width)[3] + 0.1 * rng.standard_normal((n, width))
    return a, b


def test_diff_in_means_recovers_the_planted_axis() -> None:
    a, b = _pairs()
    d = diff_in_means(a, b)
    assert int(np.argmax(np.abs(d))) == 3 and d[3] > 1.5


def test_paired_subspace_is_orthonormal_and_oriented() -> None:
    a, b = _pairs()
    basis, s = paired_subspace(a, b, 3)
    assert np.allclose(basis @ basis.T, np.eye(3), atol=1e-10)
    assert basis[0, 3] > 0.9 and s[0] > s[1]
    with pytest.raises(ConfigError, match="rank k=99"):
        paired_subspace(a, b, 99)


def test_auc_and_heldout_separability() -> None:
    assert auc(np.array([3.0]), np.array([1.0, 2.0])) == 1.0
    assert auc(np.array([1.0]), np.array([1.0])) == 0.5
    a, b = _pairs(shift=4.0)
    fit, held = split_pairs(len(a), 0.5, np.random.default_rng(0))
    assert set(fit).isdisjoint(held) and len(fit) + len(held) == len(a)
    assert heldout_auc(a, b, fit, held) > 0.95
    noise_a, noise_b = _pairs(shift=0.0)
    assert heldout_auc(noise_a, noise_b, fit, held) < 0.8


def test_directions_and_controls_are_reproducible_from_a_seed() -> None:
    v = np.arange(1.0, 9.0)
    r1 = random_direction(8, 5.0, np.random.default_rng(7))
    r2 = random_direction(8, 5.0, np.random.default_rng(7))
    assert np.array_equal(r1, r2) and np.isclose(np.linalg.norm(r1), 5.0)
    assert not np.array_equal(r1, random_direction(8, 5.0, np.random.default_rng(8)))
    s = shuffled_direction(v, np.random.default_rng(1))
    assert np.isclose(np.linalg.norm(s), np.linalg.norm(v)) and sorted(s) == sorted(v)
    assert np.array_equal(
        split_pairs(20, 0.5, np.random.default_rng(3))[1], split_pairs(20, 0.5, np.random.default_rng(3))[1]
    )


def test_save_and_reload_by_name(tmp_path) -> None:
    a, b = _pairs()
    d = direction_from_sets("voice-a", "encoder.layers.1.out", a, b, k=2, provenance={"seed": 0})
    save_direction(d, tmp_path)
    back = load_direction("voice-a", tmp_path)
    assert back.hash == d.hash and back.k == 2 and back.provenance == {"seed": 0}
    assert np.allclose(back.rank(1).basis, d.basis[:1])
    with pytest.raises(InputFileError, match="saved: voice-a"):
        load_direction("nope", tmp_path)
    np.savez(tmp_path / "voice-a.npz", vector=d.vector * 2, basis=d.basis)
    with pytest.raises(InputFileError, match="do not match the hash"):
        load_direction("voice-a", tmp_path)
    with pytest.raises(ConfigError, match="direction name"):
        Direction("../x", "encoder.out", np.ones(2), np.ones((1, 2)))


def test_set_b_mean_is_kept_saved_and_old_files_keep_their_hash(tmp_path) -> None:
    a, b = _pairs()
    d = direction_from_sets("voice-m", "decoder.layers.2.out", a, b)
    assert d.has_mean_b and np.allclose(d.mean_b, b.mean(0)) and d.to_dict()["mean_b"]
    save_direction(d, tmp_path)
    back = load_direction("voice-m", tmp_path)
    assert np.allclose(back.mean_b, b.mean(0)) and back.hash == d.hash
    assert np.allclose(back.rank(1).mean_b, b.mean(0))
    old = Direction("old", d.site, d.vector, d.basis, {})  # saved before the mean was kept
    np.savez(tmp_path / "old.npz", vector=d.vector, basis=d.basis)
    old_hash = vector_hash(np.concatenate([d.vector, d.basis.ravel()]))  # the hash before the mean was kept
    assert old.hash == old_hash
    (tmp_path / "old.json").write_text(json.dumps({"format": "asr-audit-direction", **old.to_dict()}))
    assert not load_direction("old", tmp_path).has_mean_b
    with pytest.raises(ConfigError, match="set-B mean width"):
        Direction("bad", d.site, d.vector, d.basis, {}, np.ones(3))
