"""The runner gives the battery the spec's ``[panel]`` (TEST-DOUBLE backends answering by clip id)."""

from __future__ import annotations

import pytest
from battery_null import NullModel, make_world

from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.errors import ConfigError
from asr_audit.runner.probes import ProbeContext


def _ctx(panel: tuple[str, ...]) -> ProbeContext:
    corpus, spoken = make_world(1, n_clips=30)
    models = {n: NullModel(n, corpus, spoken, 1, drop=0.3) for n in ("p1", "p2", "p3", "t1", "t2")}
    return ProbeContext(
        corpus="null",
        predictions=PredictionSet(files=(), references={}),
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
    assert out is not None
    assert out["models"] == ["t1", "t2"] and all(c["n"] > 0 for c in out["cells"])


def test_battery_without_panel_or_spoken_names_the_fix() -> None:
    from asr_audit.runner.probes_battery import battery_probe

    with pytest.raises(ConfigError, match=r"no panel was given .*fix: pass --panel .*the panel table.* or --spoken"):
        battery_probe(_ctx(()), {"conditions": ["noise:10db"], "resamples": 50, "study": False})
    # a [probes.battery] panel overrides the spec's
    out = battery_probe(
        _ctx(()), {"conditions": ["noise:10db"], "resamples": 50, "study": False, "panel": ["p1", "p2", "p3"]}
    )
    assert out is not None
    assert all(c["n"] > 0 for c in out["cells"])


def test_the_battery_through_an_executor_transcriber_matches_the_local_battery() -> None:
    """The remote path (recipes, every condition in one call) gives the local result, and loads no model here."""
    import dataclasses

    from asr_audit.corpus.clips import Corpus
    from asr_audit.probes.battery.recipe import RemoteAnswer, is_recipe
    from asr_audit.runner.probes_battery import battery_probe
    from asr_audit.store.transcribe import transcribe_corpus

    ctx = _ctx(("p1", "p2", "p3", "t1"))
    params = {"conditions": ["noise:10db", "donor:bench8s"], "resamples": 50, "study": False}
    local = battery_probe(ctx, params)
    calls, loads = [], []

    def remote(jobs, store):
        calls.append(" ".join(c.id for clips in jobs.values() for c in clips))
        assert all(is_recipe(c) for n, clips in jobs.items() for c in clips if "__" in c.id)
        return {
            n: RemoteAnswer(transcribe_corpus(ctx.backend(n), Corpus("battery", "test", "battery", tuple(c)), store))
            for n, c in jobs.items()
        }

    def backend(name: str):
        loads.append(name)
        assert ctx.backend is not None
        return ctx.backend(name)

    got = battery_probe(dataclasses.replace(ctx, backend=backend, transcribe=remote), params)
    assert got == local and loads == []
    assert len(calls) == 2 and "__" not in calls[0]  # the original audio, then both conditions at once:
    assert "__noise-white-10db" in calls[1] and "__splice-append-bench" in calls[1] and "__donor-only" in calls[1]
