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


def _r(v, lo, hi, n=150):
    return {"rate": v, "ci_low": lo, "ci_high": hi, "n": n}


def test_miner_rows_read_the_file_or_say_not_run():
    (absent,) = miner_target(None, "benchmarks/results/miner-validity.json")
    assert absent.met is None and absent.status == "not run" and "miner-validity.json" in absent.detail
    # bare rates: one point, read as the recommended one; the others are not in the file
    rows = miner_target({"precision": _r(0.95, 0.91, 0.98), "recall": _r(0.85, 0.81, 0.9)}, "x")
    assert [t.claim.split(",")[0] for t in rows] == ["precision >= 0.9", "recall >= 0.8"] * 3
    assert [t.status for t in rows] == ["not run"] * 4 + ["met", "met"]
    assert "recommended point" in rows[4].claim and rows[4].n == 150


def test_miner_is_judged_on_the_interval_bound_not_the_point():
    # recall 0.85 with its interval starting at 0.79: under the target's bound, so not met
    rows = miner_target({"precision": _r(0.97, 0.94, 0.99), "recall": _r(0.85, 0.79, 0.92)}, "x")
    assert (rows[4].met, rows[5].met) == (True, False)
    assert rows[5].status == "NOT met"


def _file(**extra):
    """The layout benchmarks/miner_precision.py --out wrote before issue 27: rates under "pooled"."""
    seeds = [
        {"seed": 201, "precision": _r(0.97, 0.90, 1.0, 31), "recall": _r(0.71, 0.55, 0.88, 42)},
        {"seed": 202, "precision": _r(0.97, 0.91, 1.0, 35), "recall": _r(0.94, 0.86, 1.0, 36)},
    ]
    return {
        "min_confidence": 0.4,
        "pooled": {"precision": _r(0.973, 0.94, 0.99, 149), "recall": _r(0.853, 0.79, 0.92, 170), "met": True},
        "per_seed": seeds,
        "baselines": {"anchor": {"precision": _r(1.0, 0.97, 1.0, 135), "recall": _r(0.79, 0.72, 0.86, 170)}},
        **extra,
    }


def test_miner_rows_at_every_operating_point_with_each_seed():
    rows = miner_target(_file(), "m.json")
    default_p, default_r, demo_p, demo_r, rec_p, rec_r = rows
    assert "tool's default" in default_p.claim and default_p.met is True and default_r.met is False
    assert "per seed: not in the file" in default_p.detail
    assert demo_p.status == demo_r.status == "not run"  # the file has no paper baseline
    assert rec_p.met is True and rec_r.met is False
    assert "seeds with low >= 0.8: 1/2" in rec_r.detail and "201: 0.71 (low 0.55)" in rec_r.detail
    # the layout written since issue 27: "points", read as is
    points = {"points": {"demo": {"pooled": {"precision": _r(0.93, 0.88, 0.97), "recall": _r(0.85, 0.8, 0.9)}}}}
    rows = miner_target(points, "m.json")
    assert [t.status for t in rows] == ["not run", "not run", "NOT met", "met", "not run", "not run"]


def test_a_stale_or_unverified_file_is_never_met():
    stale = miner_target(_file(), "m.json", ("stale", "code changed since it was written"))
    assert [t.status for t in stale] == ["stale", "stale", "not run", "not run", "stale", "stale"]
    assert all(t.met is None for t in stale)
    assert stale[0].value == 1.0 and "code changed" in stale[0].detail  # the value is kept, not judged
    unverified = miner_target(_file(), "m.json", ("unverified", "no provenance record"))
    assert {t.status for t in unverified if t.value is not None} == {"unverified"}


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


def _mech_files(arm_high=0.08, control_low=-0.02, toward_low=0.8, n_edits=90):
    from asr_audit.mechrun.measures import interval_rule

    wer = {"gated x": {"change": 0.0, "low": 0.0, "high": 0.004, "clips_changed": 0, "n_clips": 51}}
    moved = {"gated random-0 x": {"change": 0.0, "low": control_low, "high": 0.02, "n_sites": 92}}
    arms = [
        {"label": "clean", "accept_ref": {"rate": 1.0, "ci_low": 0.96, "ci_high": 1.0, "n": 92}},
        {"label": "gated x", "accept_ref": {"rate": 0.05, "ci_low": 0.02, "ci_high": arm_high, "n": 92}},
        {"label": "gated random-0 x", "accept_ref": {"rate": 1.0, "ci_low": 0.96, "ci_high": 1.0, "n": 92}},
    ]
    a = {"arms": arms, "wer_change_faithful_sentences": wer, "accept_ref_change": moved}
    steer = {"fresh-gate-A": a, "fresh-gate-B": {"wer_change": wer}, "fresh-gate-C": {"wer_change": wer}}
    steer["fresh-gate-D"] = {**a, "effect_share": 0.9}
    confirm = {"steer": steer, "interval_rule": interval_rule(steer), "provenance": {"code_hash": "abc"}}
    row = {"kind": "all", "n": n_edits, "median_full": 0.9, "median_patched": 0.1, "toward_audio": 0.95,
           "median_change": -0.7, "change_low": -0.8, "change_high": -0.6, "toward_low": toward_low,
           "toward_high": 0.98}  # fmt: skip
    table = [
        {**row, "condition": "encoder.out <- voice flite-rms"},
        {**row, "condition": "decoder.layers.3.out <- base model"},
    ]
    return confirm, {"fresh-patch": {"table": table}}


def test_mechanism_targets_judge_interval_bounds_and_freshness():
    from asr_audit.organism.validity import mechanism_targets

    fresh = {"confirm": ("fresh", ""), "patch": ("fresh", "")}
    rows = mechanism_targets(*_mech_files(), "results", fresh, "abc")
    assert [t.section for t in rows] == ["4 mechanism"] * len(rows) and len(rows) == 1 + 3 + 2 + 2
    assert all(t.met for t in rows) and "run on the pre-registered code" in rows[0].detail
    missed = mechanism_targets(*_mech_files(arm_high=0.25, control_low=-0.12, n_edits=40), "results", fresh, "abc")
    assert [t.met for t in missed] == [False, True, True, True, False, False, False, False]
    # a stale file keeps its values but is never met; absent files are "not run"
    stale = mechanism_targets(*_mech_files(), "results", {"confirm": ("stale", "code changed"), "patch": ("fresh", "")})
    assert [t.status for t in stale][:6] == ["stale"] * 6 and stale[-1].status == "met"
    rerun = mechanism_targets(*_mech_files(), "results", fresh, "other")
    assert "rerun on code later than the pre-registration" in rerun[0].detail
    (none,) = mechanism_targets(None, None, "results")
    assert none.status == "not run" and none.met is None


def test_mechanism_targets_mark_the_follow_up_and_edits_with_nothing_to_move():
    from asr_audit.organism.validity import mechanism_targets

    confirm, patch = _mech_files()
    patch["fresh-patch"]["edits"] = [{"p_full": 0.0}, {"p_full": 0.0}, {"p_full": 0.9}]
    written = {"fresh-patch-written": {"table": patch["fresh-patch"]["table"], "edits": [{"p_full": 0.9}]}}
    fresh = {"confirm": ("fresh", ""), "patch": ("fresh", ""), "written": ("stale", "code changed")}
    rows = mechanism_targets(confirm, patch, "results", fresh, "abc", written)
    assert len(rows) == 10 and "2 of 3 edits had P(ref) < 0.01 before patching" in rows[6].detail
    assert all("not pre-registered" in t.claim for t in rows[8:]) and [t.status for t in rows[8:]] == ["stale"] * 2
    assert "nothing to move" not in rows[8].detail
