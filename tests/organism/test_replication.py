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
