"""The refdis judge on truncated windows: an opener kept is a consensus verdict even when the
neighbouring word was cut off; a recited window is a reference verdict."""

from __future__ import annotations

from asr_audit.probes.battery.battery import RefdisJudge, Unit
from asr_audit.probes.predfiles.refdis import preset_params


def _judge() -> RefdisJudge:
    ref = ("the", "committee", "approved")
    corr = ("thank", "you", "mr", "president", "the", "committee", "approved")
    raw = "Thank you, Mr President. The committee approved."
    return RefdisJudge(
        {"c": ref}, {"c": corr}, {"c": raw}, lambda w: tuple(w.lower().strip(".,").split()), preset_params("anchor")
    )


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


class _SameWords:
    """TEST DOUBLE answering by clip id: the same words for the same speech in every condition —
    the whole sentence on a whole clip, the words a truncation keeps on a truncated one."""

    spec = "same-words"
    max_duration = None
    capabilities = frozenset({"transcribe"})

    def identity(self):
        from asr_audit.models.base import BackendIdentity, DecodeOptions

        return BackendIdentity(self.spec, "0", DecodeOptions())

    def transcribe_ids(self, clip_ids):
        return [
            "thank you president the" if "trunc" in c else "thank you president the committee approved"
            for c in clip_ids
        ]

    def transcribe(self, audios):
        raise AssertionError("answers by clip id")


def test_truncation_difference_pairs_arms_judged_by_one_rule() -> None:
    """A model that writes "thank you president" for "thank you mr president" whatever the audio:
    two-reference verdicts call it 'ref' (1) on the whole clip, the window rule 'consensus' (0) on
    the truncated one; paired across the two rules it showed a truncation effect of -1."""
    import numpy as np

    from asr_audit.corpus.clips import ArraySource, Clip, Corpus
    from asr_audit.probes.battery.battery import BatteryOptions, run_battery
    from asr_audit.probes.battery.conditions import parse_conditions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.runner.run import local_pool

    spoken = "Thank you, Mr President. The committee approved."
    x = (0.1 * np.sin(2 * np.pi * 220 * np.arange(32000) / 16000)).astype(np.float32)
    corpus = Corpus(
        "t", "test", "t", (Clip("c", "The committee approved.", source=ArraySource(x, 16000), duration=2.0),)
    )
    words = [(w, 0.1 + 0.25 * i, 0.3 + 0.25 * i) for i, w in enumerate(spoken.split())]
    options = BatteryOptions(
        conditions=parse_conditions(["truncate:1w0.25s"]),
        models=("m",),
        resamples=50,
        study=False,
        mining=preset_params("anchor", loo=False),  # the public code's exact verdicts
    )
    res = run_battery(
        local_pool(loaded={"m": _SameWords()}),
        corpus,
        None,
        options,
        spoken={"c": spoken},
        timings=lambda clip, text: words,
    )
    assert res.cell("m", "original").accept_ref == 1.0  # two-reference verdict on the whole clip
    assert res.cell("m", "truncate:1w0.25s").accept_ref == 0.0  # window rule on the cut clip
    (d,) = res.differences
    assert d["baseline"] == "original (window rule)" and d["n_items"] == 1 and d["estimate"] == 0.0
    assert any("window rule" in n for n in res.notes)
