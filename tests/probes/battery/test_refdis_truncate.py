"""The refdis judge on truncated windows: an opener kept is a consensus verdict even when the
neighbouring word was cut off; a recited window is a reference verdict."""

from __future__ import annotations

from asr_audit.probes.battery.battery import RefdisJudge, Unit
from asr_audit.probes.predfiles.refdis import preset_params


def _judge() -> RefdisJudge:
    ref = ("the", "committee", "approved")
    corr = ("thank", "you", "mr", "president", "the", "committee", "approved")
    raw = "Thank you, Mr President. The committee approved."
    return RefdisJudge({"c": ref}, {"c": corr}, {"c": raw}, lambda w: tuple(w.lower().strip(".,").split()),
                       preset_params("anchor"))


def test_span_units_map_to_spoken_words() -> None:
    (u,) = _judge().span_units("c")
    assert u.span == (0, 4) and u.key == "c#0"


def test_truncated_window_verdicts() -> None:
    j = _judge()
    u = Unit("c#0", "c", (0, 4))
    assert j.judge(u, ("thank", "you", "mr", "president"), "m") == {"c#0": 0}
    assert j.judge(u, ("thank", "you", "mr", "president", "the"), "m") == {"c#0": 0}
    assert j.judge(u, ("the",), "m") == {"c#0": 1}
    assert j.judge(u, None, "m") == {}
    # full clip: two-reference verdicts
    full = Unit("c", "c")
    assert j.judge(full, ("thank", "you", "mr", "president", "the", "committee", "approved"), "m") == {"c#0": 0}
    assert j.judge(full, ("the", "committee", "approved"), "m") == {"c#0": 1}
