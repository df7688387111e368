"""Switch-rate "above chance" keeps its level (issue 11, defect 6).

The switch is a minimum over arms; the old rule took the limiting arm's Wilson interval as the
interval of the minimum and, with a small arm at a true 0.5 beside a large arm at 0.8, called the
model "above chance" about 9% of the time instead of at most 2.5%. Now an intersection-union test
with exact one-sided binomial tests per arm decides it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from asr_audit.probes.predfiles import ortho
from asr_audit.probes.predfiles.ortho import Item, ItemOutcome

NOMINAL = 0.025  # the lower end of a two-sided 95% interval above 0.5
N_SIMS = 3000


def _flag_rate(sizes: tuple[int, int], rates: tuple[float, float], seed: int) -> float:
    """Share of simulated models (true arm rates ``rates``) whose row says "above chance"."""
    rng = np.random.default_rng(seed)
    items = [[Item("c", "mr", arm, i, i + 1, "x") for i in range(n)] for arm, n in enumerate(sizes)]
    labels = [("Mister", "A"), ("Mr", "B")]
    flagged = 0
    for _ in range(N_SIMS):
        outcomes = []
        for arm, (its, p) in enumerate(zip(items, rates)):
            same = rng.random(len(its)) < p
            outcomes += [
                (arm, ItemOutcome("m", it, "same" if s else "other", arm if s else 1 - arm, ""))
                for it, s in zip(its, same)
            ]
        row = ortho._score("m", "mr", "honorific", False, labels, outcomes, 5)
        flagged += bool(row.to_dict()["ci_above_chance"])
    return flagged / N_SIMS


@pytest.mark.parametrize(
    "sizes, rates",
    [
        ((5, 50), (0.5, 0.8)),  # the old rule: ~9%
        ((10, 100), (0.5, 0.8)),
        ((20, 20), (0.5, 1.0)),
        ((100, 100), (0.5, 0.8)),
        ((30, 30), (0.5, 0.5)),
    ],
)
def test_above_chance_rate_at_a_true_minimum_of_half_is_at_most_nominal(sizes, rates) -> None:
    rate = _flag_rate(sizes, rates, seed=sum(sizes))
    mc_error = math.sqrt(NOMINAL * (1 - NOMINAL) / N_SIMS)
    assert rate <= NOMINAL + 3 * mc_error, rate


def test_above_chance_has_power_when_every_arm_tracks_the_convention() -> None:
    assert _flag_rate((40, 40), (0.9, 0.9), seed=1) > 0.95


def test_interval_covers_the_minimum_and_matches_the_flag() -> None:
    switch, low, high, p = ortho.min_over_arms([(9, 10), (40, 50)])
    assert switch == 0.8 and low < 0.8 < high and (p <= ortho.ALPHA) == (low > 0.5)
    switch, low, high, p = ortho.min_over_arms([(5, 5), (50, 50)])  # 5/5 is not enough evidence
    assert switch == 1.0 and low < 0.5 and p > ortho.ALPHA


def test_paper_denominator_counts_items_where_the_model_wrote_neither_arm(run_cli, tmp_path) -> None:
    import json
    from pathlib import Path

    vox = Path(__file__).parents[2] / "fixtures" / "voxpopuli"
    rows = {}
    for denominator in ("eligible", "paper"):
        out = tmp_path / f"{denominator}.json"
        code, _, err = run_cli(
            "switch-rate", "--preds", vox, "--families", "mr", "--denominator", denominator, "--json", out
        )
        assert code == 0, err
        d = json.loads(out.read_text())
        assert d["params"]["denominator"] == denominator
        rows[denominator] = {r["model"]: r for r in d["rows"]}
    e, p = rows["eligible"]["distil-small.en"], rows["paper"]["distil-small.en"]
    mr_e, mr_p = e["arms"][1], p["arms"][1]
    assert (mr_e["k"], mr_e["n"], e["n_neither"]) == (4, 4, 3)
    assert (mr_p["k"], mr_p["n"]) == (4, 7)  # the 3 items where it wrote neither arm count as misses
    code, _, err = run_cli("switch-rate", "--preds", vox, "--denominator", "all")
    assert code == 2 and "--denominator 'all' is not one of eligible, paper; fix: use eligible" in err
    assert "Traceback" not in err


def test_spec_passes_the_denominator(tmp_path) -> None:
    from pathlib import Path

    from probe_calls import spec_probe

    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.core.probe import ProbeInputs

    preds = load_predictions(Path(__file__).parents[2] / "fixtures" / "voxpopuli")
    from asr_audit.probes.predfiles.ortho import SWITCH_RATE

    assert "denominator" in SWITCH_RATE.params
    ctx = ProbeInputs(corpus="vox", predictions=preds, panel=(), seed=0, normalizer="whisper")
    out = spec_probe("switch_rate", ctx, {"families": ["mr"], "denominator": "paper"})
    assert out is not None
    row = next(r for r in out["rows"] if r["model"] == "distil-small.en")
    assert out["params"]["denominator"] == "paper" and row["arms"][1]["n"] == 7
