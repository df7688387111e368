"""The three front doors of one probe on the same inputs, for the parity tests (tests/probes/parity/):
a one-probe spec run (its ``results.json`` entry) and a verb's ``--json``, both as JSON reads them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from asr_audit.report.tables import to_json
from asr_audit.runner.run import LocalExecutor, run_experiment
from asr_audit.runner.spec import load_spec


def toml_value(value: Any) -> str:
    """``value`` as TOML (strings, booleans, numbers, lists and inline tables of them)."""
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def spec_result(
    folder: Path, predictions: Path, panel: Sequence[str], probe: str, params: Mapping[str, Any], seed: int = 0
) -> dict[str, Any]:
    """``[probes.<probe>]`` with ``params`` on the prediction-file corpus ``predictions``: the result
    ``results.json`` holds for it (the spec is written into ``folder``; relative paths are read from there)."""
    folder.mkdir(parents=True, exist_ok=True)
    table = "\n".join(f"{k} = {toml_value(v)}" for k, v in params.items())
    spec = folder / "audit.toml"
    spec.write_text(
        f'seed = {seed}\noutput = "{folder / "out"}"\nstore = "{folder / "store.sqlite"}"\n'
        f'[[corpus]]\nname = "c"\npredictions = "{predictions}"\npanel = {toml_value(list(panel))}\n'
        f"[probes.{probe}]\n{table}\n"
    )
    outcome = run_experiment(load_spec(spec), None, LocalExecutor(False))
    assert not outcome.config_errors, outcome.config_errors
    entry = next(e for e in outcome.results["probes"] if e["probe"] == probe)
    return as_json(entry["result"])


def as_json(data: Any) -> Any:
    """``data`` as the project writes and reads it back (undefined numbers as null)."""
    return json.loads(to_json(data))
