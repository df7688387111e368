"""The runner gives the battery the spec's ``[panel]`` (TEST-DOUBLE backends answering by clip id)."""

from __future__ import annotations

import pytest
from battery_null import NullModel, make_world

from asr_audit.errors import ConfigError
from asr_audit.runner.probes import ProbeContext


def _ctx(panel: tuple[str, ...]) -> ProbeContext:
    corpus, spoken = make_world(1, n_clips=30)
    models = {n: NullModel(n, corpus, spoken, 1, drop=0.3) for n in ("p1", "p2", "p3", "t1", "t2")}
    return ProbeContext(
        corpus="null",
        predictions=None,
        panel=panel,
        seed=0,
        normalizer="whisper",
        clips=corpus,
        backend=models.__getitem__,
        models=("t1", "t2"),
        store=None,
    )


def test_battery_mines_with_the_spec_panel() -> None:
    from asr_audit.runner.probes_battery import battery_probe

    out = battery_probe(_ctx(("p1", "p2", "p3", "t1")), {"conditions": ["noise:10db"], "resamples": 50, "study": False})
    assert out["models"] == ["t1", "t2"] and all(c["n"] > 0 for c in out["cells"])


def test_battery_without_panel_or_spoken_names_the_fix() -> None:
    from asr_audit.runner.probes_battery import battery_probe

    with pytest.raises(ConfigError, match=r"no panel was given .*fix: pass --panel .*the panel table.* or --spoken"):
        battery_probe(_ctx(()), {"conditions": ["noise:10db"], "resamples": 50, "study": False})
    # a [probes.battery] panel overrides the spec's
    out = battery_probe(
        _ctx(()), {"conditions": ["noise:10db"], "resamples": 50, "study": False, "panel": ["p1", "p2", "p3"]}
    )
    assert all(c["n"] > 0 for c in out["cells"])
