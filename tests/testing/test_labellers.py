"""Simulated labellers (``testing/labellers.py``): a world's truth, and the bounded interval holding
the planted copy rate where the plain one on imperfect labels does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from asr_audit.probes.predfiles.verified import REFERENCE_RIGHT, REFERENCE_WRONG


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    from asr_audit.testing.labellers import make_world

    return make_world(np.random.default_rng(3), tmp_path_factory.mktemp("w"), n_clips=120, mishear_rate=0.4)


def test_the_world_has_both_kinds_of_edit(world) -> None:
    from asr_audit.testing.labellers import planted_rate

    labels = list(world.truth.values())
    assert labels.count(REFERENCE_WRONG) > 20 and labels.count(REFERENCE_RIGHT) > 5
    copier, honest = planted_rate(world, "copier-01"), planted_rate(world, "honest-06")
    assert copier is not None and honest is not None
    assert copier > 0.7 and honest < 0.05


def test_perfect_labels_need_no_bound(world) -> None:
    from asr_audit.testing.labellers import label_sample, trials

    lab = label_sample(np.random.default_rng(0), world, 1.0, n_sample=80, n_double=30)
    assert lab.n_agree == lab.n_double == 30
    got = trials(world, lab)
    assert got and all(t.covers("plain") and t.covers("bounded") for t in got)


def test_an_honest_better_listener_is_no_copier_under_noisy_labels(world) -> None:
    from asr_audit.testing.labellers import label_sample, trials

    covered = {"plain": 0, "bounded": 0}
    n = 0
    for j in range(6):
        lab = label_sample(np.random.default_rng(j), world, 0.8, n_sample=80, n_double=40)
        for t in trials(world, lab, ["honest-05", "honest-06"]):
            n += 1
            covered["plain"] += t.covers("plain")
            covered["bounded"] += t.covers("bounded")
            assert t.bounded[0] == 0.0  # copy_low: the mislabelled edits explain every "copy"
    assert covered["bounded"] == n and covered["plain"] < n / 2


def test_labelled_precision_is_exact_for_perfect_labels_and_zero_for_coin_flips() -> None:
    from asr_audit.probes.predfiles.verified import labelled_precision, labeller_accuracy
    from asr_audit.stats.intervals import wilson

    assert labelled_precision(labeller_accuracy(200, 200), wilson(60, 100)).rate == pytest.approx(1.0)
    assert labelled_precision(labeller_accuracy(10, 20), wilson(60, 100)).low == 0.0


def test_a_world_is_seeded(tmp_path: Path) -> None:
    from asr_audit.testing.labellers import make_world

    a = make_world(np.random.default_rng(5), tmp_path / "a", n_clips=40)
    b = make_world(np.random.default_rng(5), tmp_path / "b", n_clips=40)
    assert a.truth == b.truth and a.n_misheard == b.n_misheard
