"""Call a registered probe as the spec runner does, for tests of one probe's spec surface."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.options import Surface
from asr_audit.probes.core.probe import ProbeInputs, get_probe
from asr_audit.runner.probes import load_probes


def spec_probe(name: str, inputs: ProbeInputs, params: Mapping[str, Any]) -> dict[str, Any]:
    """``[probes.<name>]`` with ``params`` on ``inputs`` (errors named as in a spec file ``<spec>``);
    the probe must apply to the corpus (a ``None`` result fails the test)."""
    load_probes()
    out = get_probe(name)(inputs, params, Surface.toml("<spec>", f"probes.{name}"))
    assert out is not None, f"probe {name} did not apply to corpus {inputs.corpus!r}"
    return out
