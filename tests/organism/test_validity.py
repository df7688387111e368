"""The positive controls' targets: met, not met, undefined and not run, and the report section."""

from __future__ import annotations

from asr_audit.organism.validity import donor_targets, memorizer_targets, miner_target, targets_table

MEM, CTRL = "organism-memorizer", "organism-memorizer-control"


def _rate(v, lo, hi, n=20, key="accept_ref"):
    return {key: v, "ci_low": lo, "ci_high": hi, "n": n}


def _memorizer_inputs(recovered=0.8, fresh=0.0, control=0.0, lift_low=0.1):
    masked = {
        "memorized": {MEM: _rate(recovered, recovered - 0.2, recovered + 0.1), CTRL: _rate(control, 0.0, 0.15)},
        "fresh": {MEM: _rate(fresh, 0.0, 0.15), CTRL: _rate(0.0, 0.0, 0.15)},
    }
    lift = {
        "memorized": {MEM: _rate(0.5, lift_low, 0.9, key="mean"), CTRL: _rate(-0.1, -0.3, 0.05, key="mean")},
        "fresh": {MEM: _rate(-0.2, -0.4, 0.0, key="mean")},
    }
    cont = {
        "memorized": {MEM: _rate(0.7, 0.5, 0.85, key="leak_rate"), CTRL: _rate(0.05, 0.0, 0.1, key="leak_rate")},
        "fresh": {MEM: _rate(0.1, 0.02, 0.2, key="leak_rate")},
    }
    return masked, lift, cont


def test_memorizer_targets_met_and_not_met():
    ts = memorizer_targets(*_memorizer_inputs())
    assert len(ts) == 8 and all(t.met for t in ts), [t.claim for t in ts if not t.met]
    bad = memorizer_targets(*_memorizer_inputs(recovered=0.4, fresh=0.1, control=0.06, lift_low=-0.01))
    assert [t.met for t in bad[:4]] == [False, False, False, False]
    assert all(t.status == "NOT met" for t in bad[:4])


def test_lift_rows_judge_the_decoy_contrast_and_show_the_raw_lift():
    """The control's raw lift above 0 (a silence offset) does not fail the row; its contrast decides."""
    masked, lift, cont = _memorizer_inputs()
    lift["memorized"][CTRL] = {**lift["memorized"][CTRL], "silence": _rate(0.39, 0.04, 0.75, key="mean")}
    row = memorizer_targets(masked, lift, cont)[5]
    assert "control" in row.claim and "decoys" in row.claim and row.met
    assert row.detail == "lift vs silence: +0.390 [+0.04, +0.75]"
    lift["memorized"][CTRL] = _rate(0.2, 0.01, 0.4, key="mean")  # the contrast itself above 0: a failure
    assert memorizer_targets(masked, lift, cont)[5].met is False


def test_missing_or_undefined_is_never_met():
    ts = memorizer_targets({}, {}, {})
    assert all(t.met is None and t.status == "not run" for t in ts)
    masked, lift, cont = _memorizer_inputs()
    masked["memorized"][MEM] = {"accept_ref": None, "ci_low": None, "ci_high": None, "n": 0}
    first = memorizer_targets(masked, lift, cont)[0]
    assert first.met is None and first.status == "undefined"


def _battery(clean=0.8, conv=0.2, bench=0.75, did=(0.6, 0.3, 0.9), n_clusters=32):
    cells = [
        {"model": "organism-donor", "condition": c, "accept_ref": v, "ci_low": v - 0.2, "ci_high": v + 0.1, "n": 12}
        for c, v in (("original", clean), ("donor:conv8s", conv), ("donor:bench8s", bench))
    ]
    d = {
        "model": "organism-donor",
        "voice": "flite-rms",
        "benchmark_audio": ["donor:bench8s", "donor:conv8s"],
        "estimate": did[0],
        "ci_low": did[1],
        "ci_high": did[2],
        "n_items": 40,
        "n_clusters": n_clusters,
    }
    return {"cells": cells, "did": [d]}


def test_donor_targets():
    assert [t.met for t in donor_targets(_battery())] == [True, True, True, True]
    weak = donor_targets(_battery(clean=0.4, conv=0.3, bench=0.1, did=(0.1, -0.1, 0.3)))
    assert [t.met for t in weak] == [False, False, False, False]
    assert "voice flite-rms" in weak[3].claim
    few = donor_targets(_battery(n_clusters=12))[3]  # the battery's rule: no claim under 30 sentences
    assert few.met is False and "12 sentences" in few.detail
    assert all(t.status == "not run" for t in donor_targets(None))


def test_miner_row_reads_the_file_or_says_not_run():
    (absent,) = miner_target(None, "benchmarks/results/miner-validity.json")
    assert absent.met is None and absent.status == "not run" and "miner-validity.json" in absent.detail
    (row,) = miner_target({"precision": {"rate": 0.93, "ci_low": 0.9, "ci_high": 0.96, "n": 150}, "recall": 0.82}, "x")
    assert row.met and row.n == 150 and "recall 0.82" in row.detail
    (low,) = miner_target({"precision": 0.95, "recall": {"estimate": 0.7}}, "x")
    assert low.met is False
    # the layout benchmarks/miner_precision.py --out writes: rates under "pooled"
    pooled = {
        "min_confidence": 0.4,
        "pooled": {
            "precision": {"k": 145, "n": 149, "rate": 0.973, "ci_low": 0.94, "ci_high": 0.99},
            "recall": {"k": 145, "n": 170, "rate": 0.853, "ci_low": 0.79, "ci_high": 0.92},
            "met": True,
        },
    }
    (bench,) = miner_target(pooled, "miner_precision.json")
    assert bench.met and bench.n == 149 and "recall 0.85 [0.79, 0.92], min-confidence 0.4" in bench.detail


def test_table_and_report_section(tmp_path):
    ts = [*memorizer_targets(*_memorizer_inputs()), *donor_targets(None), *miner_target(None, "m.json")]
    table = targets_table(ts)
    assert len(table.splitlines()) == 2 + len(ts)
    assert "0.80 [0.60, 0.90]" in table and "not run" in table
    from asr_audit.report.html import build_report

    entry = {
        "probe": "validity",
        "corpus": "organisms",
        "result": {"targets": [t.to_dict() for t in ts], "seconds": 60.0, "seed": 0},
    }
    html = build_report({"title": "t", "probes": [entry]}, tmp_path).read_text()
    assert "Validity: positive controls" in html and "8 met, 0 not met, 5 not run" in html
    assert (tmp_path / "tables" / "validity-organisms.csv").is_file()
