"""The replication table: every planned seed shown, pass / miss / not run / other code, and the rate."""

from __future__ import annotations

from asr_audit.organism.replication import replication_rate, replication_table, seed_rows

FROZEN = {"evaluation_seeds": {"memorizer": [311, 312, 313], "donor": [321]}, "provenance": {"code_hash": "abc"}}


def _rec(statuses, section="1 memorizer", code="abc", commit="c0ffee"):
    targets = [
        {"section": section, "claim": f"t{i}", "status": s, "met": {"met": True, "NOT met": False}.get(s)}
        for i, s in enumerate(statuses)
    ]
    other = {"section": "3 miner", "claim": "m", "status": "unverified", "met": None}  # other sections ignored
    return {"targets": [*targets, other], "provenance": {"code_hash": code, "commit": commit}}


def test_every_planned_seed_is_a_row():
    records = {
        ("memorizer", 311): _rec(["met", "met"]),
        ("memorizer", 312): _rec(["met", "NOT met", "undefined"]),
        ("memorizer", 313): _rec(["met", "met"], code="zzz"),  # ran other code: not a replication
    }
    rows = seed_rows(FROZEN, records)
    assert [(r.part, r.seed, r.outcome) for r in rows] == [
        ("memorizer", 311, "pass"),
        ("memorizer", 312, "miss"),
        ("memorizer", 313, "other code"),
        ("donor", 321, "not run"),
    ]
    assert rows[1].n_met == 1 and rows[1].missed == ("t1 (NOT met)", "t2 (undefined)")
    assert rows[0].code == "frozen" and rows[2].code == "c0ffee"
    assert replication_rate(rows, "memorizer") == (1, 2, 3)
    assert replication_rate(rows, "donor") == (0, 0, 1)
    table = replication_table(rows)
    assert "memorizer: replicated on 1 of 2 seeds run with the frozen code (3 planned)" in table
    assert "| donor     | 321  | not run" in table


def test_a_record_without_targets_of_its_section_is_a_miss():
    rows = seed_rows(FROZEN, {("donor", 321): _rec(["met"], section="1 memorizer")})
    assert rows[-1].outcome == "miss" and rows[-1].n_targets == 0


def test_frozen_code_with_another_recipe_is_not_a_replication():
    """The code hash cannot see a command-line setting: a run with other steps or set settings is
    'other recipe', not a pass, and says how it differs."""
    frozen = {
        **FROZEN,
        "recipes": {"memorizer": {"train": {"steps": 200, "lr": 5e-4}, "set_config": {"masked_variants": 16}}},
    }

    def run(steps, variants):
        rec = _rec(["met", "met"])
        trained = {"train": {"steps": steps, "lr": 5e-4, "seed": 311}}
        rec["memorizer"] = {"train": {"memorizer": trained}, "set": {"config": {"masked_variants": variants}}}
        return rec

    rows = seed_rows(
        frozen, {("memorizer", 311): run(200, 16), ("memorizer", 312): run(112, 16), ("memorizer", 313): run(200, 8)}
    )
    assert [r.outcome for r in rows[:3]] == ["pass", "other recipe", "other recipe"]
    assert rows[1].missed == ("memorizer: steps 112, frozen 200",)
    assert rows[2].missed == ("set configuration differs from the frozen set_config",)
    assert replication_rate(rows, "memorizer") == (1, 1, 3)
