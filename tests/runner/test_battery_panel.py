"""The battery probe takes the corpus's ``[panel]`` (TEST-DOUBLE backends answering by clip id)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from battery_null import NullModel, make_world

from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.probes.audio.probes import audio_inputs
from asr_audit.probes.battery.probe import BATTERY
from asr_audit.probes.battery.recipe import is_recipe
from asr_audit.probes.core.models import Transcribed
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.runner.run import local_pool
from asr_audit.store.transcribe import transcribe_corpus

SURFACE = Surface.toml("spec.toml", "probes.battery")


def _inputs(panel: tuple[str, ...]) -> ProbeInputs:
    corpus, spoken = make_world(1, n_clips=30)
    models = {n: NullModel(n, corpus, spoken, 1, drop=0.3) for n in ("p1", "p2", "p3", "t1", "t2")}
    inputs = audio_inputs(corpus, local_pool(loaded=models), None)
    return dataclasses.replace(inputs, models=("t1", "t2"), panel=panel)


def test_battery_mines_with_the_spec_panel() -> None:
    out = BATTERY(
        _inputs(("p1", "p2", "p3", "t1")), {"conditions": ["noise:10db"], "resamples": 50, "study": False}, SURFACE
    )
    assert out is not None
    assert out["models"] == ["t1", "t2"] and all(c["n"] > 0 for c in out["cells"])


def test_battery_without_panel_or_spoken_names_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"no panel was given .*fix: pass --panel .*the panel table.* or --spoken"):
        BATTERY(_inputs(()), {"conditions": ["noise:10db"], "resamples": 50, "study": False}, SURFACE)
    # a [probes.battery] panel overrides the spec's
    out = BATTERY(
        _inputs(()),
        {"conditions": ["noise:10db"], "resamples": 50, "study": False, "panel": ["p1", "p2", "p3"]},
        SURFACE,
    )
    assert out is not None and all(c["n"] > 0 for c in out["cells"])


@dataclasses.dataclass
class _Elsewhere:
    """A pool whose models run elsewhere (a test double of the Ray executor's): every call recorded, a
    backend loaded in this process (``get``) recorded, the transcription done by the local doubles."""

    local: Any
    calls: list[str] = dataclasses.field(default_factory=list)
    loads: list[str] = dataclasses.field(default_factory=list)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.local.names)

    def get(self, name: str) -> Any:
        self.loads.append(name)
        return self.local.get(name)

    def model(self, name: str, store: Any) -> Any:
        raise AssertionError("no model handle without the study")

    def transcribe(self, jobs: Mapping[Any, Iterable[Clip]], store: Any) -> dict[Any, Transcribed]:
        self.calls.append(" ".join(c.id for clips in jobs.values() for c in clips))
        assert all(is_recipe(c) for clips in jobs.values() for c in clips if "__" in c.id)
        return {
            n: Transcribed(transcribe_corpus(self.local.get(n), Corpus("battery", "test", "battery", tuple(c)), store))
            for n, c in jobs.items()
        }


def test_the_battery_through_a_pool_that_runs_elsewhere_matches_the_local_battery() -> None:
    """The remote path (recipes, every condition in one call) gives the local result, and loads no model here."""
    inputs = _inputs(("p1", "p2", "p3", "t1"))
    params = {"conditions": ["noise:10db", "donor:bench8s"], "resamples": 50, "study": False}
    local = BATTERY(inputs, params, SURFACE)
    pool = _Elsewhere(inputs.pool)
    got = BATTERY(dataclasses.replace(inputs, pool=pool), params, SURFACE)
    assert got == local and pool.loads == []
    calls = pool.calls
    assert len(calls) == 2 and "__" not in calls[0]  # the original audio, then both conditions at once:
    assert "__noise-white-10db" in calls[1] and "__splice-append-bench" in calls[1] and "__donor-only" in calls[1]
