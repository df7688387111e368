"""Switch-rate statistics: copying, fixed habits, coin flips, pooling, undefined arms, invariants."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asr_audit.corpus.predfiles import PredictionSet, load_predictions
from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.ortho import CHANCE, switch_rate
from asr_audit.stats.intervals import clopper_pearson_lower

# slot name -> (family, arm A spelling, arm B spelling)
SLOTS = {
    "mr": ("mr", "Mister", "Mr"),
    "today": ("to_day", "to-day", "today"),
    "anyone": ("any_one", "any one", "anyone"),
}
TEMPLATES = {
    "mr": "Thank you, {} President, for the report number {}.",
    "today": "We vote {} on the budget item {}.",
    "anyone": "Does {} object to amendment {}?",
}


def make_refs(n_per_arm: int = 6) -> dict[str, tuple[str, str, str]]:
    """clip id -> (slot, arm role, reference text): n_per_arm clips per arm per slot."""
    refs = {}
    for slot, template in TEMPLATES.items():
        _, a, b = SLOTS[slot]
        for role, word in (("A", a), ("B", b)):
            for i in range(n_per_arm):
                refs[f"{slot}-{role}-{i:02d}"] = (slot, role, template.format(word, i))
    return refs


def write_models(
    tmp: Path, refs: dict[str, tuple[str, str, str]], models: dict[str, Callable[[str, str, str, int], str | None]]
) -> Path:
    """One JSONL per model; each model maps (slot, ref role, ref text, index) to a hypothesis."""
    for name, fn in models.items():
        with open(tmp / f"{name}.jsonl", "w", encoding="utf-8") as fh:
            for idx, (cid, (slot, role, text)) in enumerate(refs.items()):
                fh.write(
                    json.dumps({"audio_filepath": cid, "text": text, "pred_text": fn(slot, role, text, idx)}) + "\n"
                )
    return tmp


def habit(role: str) -> Callable[[str, str, str, int], str]:
    """Always writes arm ``role``, whatever the reference says."""

    def fn(slot: str, _ref_role: str, text: str, idx: int) -> str:
        _, a, b = SLOTS[slot]
        return TEMPLATES[slot].format(a if role == "A" else b, idx % 6)

    return fn


def copier(_slot: str, _role: str, text: str, _idx: int) -> str:
    return text


def alternator(slot: str, _role: str, _text: str, idx: int) -> str:
    """Writes arm A on even clips and arm B on odd ones: a coin flip independent of the reference."""
    _, a, b = SLOTS[slot]
    return TEMPLATES[slot].format(a if idx % 2 == 0 else b, idx % 6)


@pytest.fixture()
def pset(tmp_path: Path) -> PredictionSet:
    refs = make_refs()
    return load_predictions(
        write_models(
            tmp_path,
            refs,
            {
                "copy": copier,
                "habit-a": habit("A"),
                "habit-b": habit("B"),
                "coin": alternator,
                "lower": lambda s, r, t, i: t.lower(),
            },
        )
    )


def test_copy_model_scores_one_wherever_defined(pset: PredictionSet) -> None:
    res = switch_rate(pset, min_per_arm=5)
    rows = [r for r in res.rows + res.pooled if r.model == "copy"]
    defined = [r for r in rows if r.switch is not None]
    assert {r.family for r in defined} == {"mr", "to_day", "any_one", "honorific", "spacing"}
    assert all(r.switch == 1.0 for r in defined)
    assert all(r.reason and "0 eligible items" in r.reason for r in rows if r.switch is None)
    mr = res.row("copy", "mr")
    assert [(a.label, a.k, a.n) for a in mr.arms] == [("Mister", 6, 6), ("Mr", 6, 6)]
    # the interval of the minimum (issue 11, defect 6): the smaller exact one-sided 97.5% lower
    # bound over arms, and the smaller exact upper bound at 0.025 / 2 arms (Bonferroni)
    assert (mr.ci_low, mr.ci_high) == (clopper_pearson_lower(6, 6, 0.025), 1.0)
    assert mr.ci_low == pytest.approx(0.025 ** (1 / 6))  # closed form of the exact bound at k = n
    assert mr.ci_low is not None and mr.ci_low > CHANCE and mr.to_dict()["ci_above_chance"] is True
    assert mr.p_value == pytest.approx(0.5**6)


def test_case_does_not_matter(pset: PredictionSet) -> None:
    res = switch_rate(pset, families=["spacing", "honorific"])
    for fam in ("mr", "to_day", "any_one"):
        assert res.row("lower", fam).switch == 1.0


@pytest.mark.parametrize("model", ["habit-a", "habit-b"])
def test_fixed_habit_scores_zero(tmp_path: Path, model: str) -> None:
    # 8 items per arm: with 6, the exact Bonferroni upper bound of the minimum (0.518) cannot be
    # below chance; with 8 it is 1 - 0.0125 ** (1 / 8) = 0.42
    pset = load_predictions(write_models(tmp_path, make_refs(8), {model: habit(model[-1].upper())}))
    res = switch_rate(pset)
    for fam in ("mr", "to_day", "any_one", "honorific", "spacing"):
        row = res.row(model, fam)
        assert row.switch == 0.0
        assert row.ci_high is not None and row.ci_high < CHANCE
        habitual = "A" if model == "habit-a" else "B"
        # the limiting arm is the one the habit never writes, and the habitual arm is perfect
        assert {a.role: a.k / a.n for a in row.arms} == {habitual: 1.0, "B" if habitual == "A" else "A": 0.0}


def test_coin_flip_is_at_most_half(pset: PredictionSet) -> None:
    res = switch_rate(pset)
    for fam in ("mr", "to_day", "any_one", "spacing"):
        switch = res.row("coin", fam).switch
        assert switch is not None and switch <= CHANCE


def test_pooled_counts_are_sums_by_role(pset: PredictionSet) -> None:
    res = switch_rate(pset, families=["spacing"])
    for model in res.models:
        pooled = res.row(model, "spacing")
        members = [r for r in res.rows if r.model == model]
        for arm in pooled.arms:
            assert arm.n == sum(a.n for r in members for a in r.arms if a.role == arm.role)
            assert arm.k == sum(a.k for r in members for a in r.arms if a.role == arm.role)
        assert len(pooled.arms) == 2


def test_min_per_arm_makes_switch_undefined(pset: PredictionSet) -> None:
    res = switch_rate(pset, families=["mr"], min_per_arm=7)
    row = res.row("copy", "mr")
    assert row.switch is None and row.ci_low is None and row.limiting_arm is None
    assert "arm 'Mister' has 6 eligible items (< min_per_arm 7)" in (row.reason or "")
    with pytest.raises(ConfigError):
        switch_rate(pset, min_per_arm=0)


def test_missing_and_neither_are_ineligible(tmp_path: Path) -> None:
    refs = make_refs(5)

    def dropper(slot: str, role: str, text: str, idx: int) -> str | None:
        if idx % 3 == 0:
            return None  # no hypothesis at all
        if idx % 3 == 1:
            return "completely different words"  # no arm at the location
        return text

    res = switch_rate(load_predictions(write_models(tmp_path, refs, {"drop": dropper, "copy": copier})), min_per_arm=1)
    row = res.row("drop", "mr")
    assert row.n_items == 10
    assert row.n_missing + row.n_neither + row.n_eligible == row.n_items
    assert row.n_missing > 0 and row.n_neither > 0
    assert row.switch == 1.0
    statuses = {o.status for o in res.outcomes if o.model == "drop"}
    assert statuses == {"same", "neither", "missing"}


def test_unknown_model_and_family(pset: PredictionSet) -> None:
    with pytest.raises(ConfigError, match="available in .*coin"):
        switch_rate(pset, models=["nope"])
    with pytest.raises(ConfigError, match="unknown convention family 'nope'"):
        switch_rate(pset, families=["nope"])


def _permuted(pset: PredictionSet, order: list[int]) -> PredictionSet:
    files = tuple(pset.files[i] for i in order)
    return PredictionSet(files, pset.references, pset.dataset, pset.source, {f.model: f for f in files})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_model_order_changes_nothing(pset: PredictionSet, data: st.DataObject) -> None:
    base = switch_rate(pset, min_per_arm=3).to_dict()
    n = len(pset.files)
    order = data.draw(st.permutations(list(range(n))))
    subset_order = data.draw(st.permutations(sorted(pset.models)))
    again = switch_rate(_permuted(pset, order), min_per_arm=3, models=subset_order).to_dict()
    assert json.dumps(again, sort_keys=True) == json.dumps(base, sort_keys=True)


@settings(max_examples=30, deadline=None)
@given(choices=st.lists(st.sampled_from(["A", "B", "drop"]), min_size=36, max_size=36))
def test_switch_bounds_for_any_model(tmp_path_factory: pytest.TempPathFactory, choices: list[str]) -> None:
    """For arbitrary per-clip behaviour: 0 <= switch <= every arm's rate, CI brackets it."""
    refs = make_refs(6)
    tmp = tmp_path_factory.mktemp("arb")

    def arbitrary(slot: str, role: str, text: str, idx: int) -> str:
        pick = choices[idx]
        if pick == "drop":
            return "nothing here"
        _, a, b = SLOTS[slot]
        return TEMPLATES[slot].format(a if pick == "A" else b, idx)

    res = switch_rate(load_predictions(write_models(tmp, refs, {"m": arbitrary})), min_per_arm=1)
    for row in res.rows + res.pooled:
        if row.switch is None:
            assert any(a.n < 1 for a in row.arms)
            continue
        assert row.ci_low is not None and row.ci_high is not None
        assert 0.0 <= row.ci_low <= row.switch <= row.ci_high <= 1.0
        assert all(row.switch <= a.k / a.n for a in row.arms)
        assert row.switch in {a.k / a.n for a in row.arms}
