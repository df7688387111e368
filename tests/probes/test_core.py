"""The probe contract (probes/core/probe.py): one object, three front doors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.probes.core.probe import FunctionProbe, ModelPool, ProbeInputs


class _Pool:
    names = ("a",)

    def get(self, name: str) -> str:
        return f"backend {name}"

    def model(self, name: str, store: Any) -> Any:
        return f"handle {name}"

    def transcribe(self, jobs: Mapping[Any, Any], store: Any) -> dict[Any, Any]:
        return {}


def test_a_function_probe_builds_checks_and_runs_in_order() -> None:
    calls: list[str] = []

    def options(values: Mapping[str, Any], surface: Surface) -> int:
        calls.append("options")
        return int(values.get("k", 1))

    def check(o: int, inputs: ProbeInputs, surface: Surface) -> None:
        calls.append("check")
        if o < 0:
            raise surface.error("k", o, "must be >= 0", "use 1")

    def run(inputs: ProbeInputs, o: int) -> dict[str, int]:
        calls.append("run")
        return {"k": o}

    p = FunctionProbe("t", ("k",), "test", options, run, check)
    inputs = ProbeInputs(corpus="c", predictions=None)  # type: ignore[arg-type]
    assert p(inputs, {"k": 3}, Surface.cli()) == {"k": 3}
    assert calls == ["options", "check", "run"]
    with pytest.raises(ConfigError, match=r"\[probes.t\] k = -1 must be >= 0"):
        p(inputs, {"k": -1}, Surface.toml("a.toml", "probes.t"))


def test_need_pool_refuses_a_prediction_file_corpus_in_one_line() -> None:
    inputs = ProbeInputs(corpus="vox", predictions=None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="corpus 'vox': probe lift runs the models on the corpus's audio"):
        inputs.need_pool("lift")
    pooled = ProbeInputs(corpus="vox", predictions=None, pool=_Pool(), clips=object())  # type: ignore[arg-type]
    assert pooled.need_pool("lift").get("a") == "backend a"
    assert isinstance(_Pool(), ModelPool)


def test_the_local_executor_is_a_model_pool() -> None:
    from asr_audit.runner.run import LocalExecutor

    assert isinstance(LocalExecutor(False), ModelPool)
