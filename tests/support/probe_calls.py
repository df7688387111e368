"""Call a registered probe as the spec runner does, for tests of one probe's spec surface."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.options import Surface
from asr_audit.probes.core.probe import ProbeInputs, get_probe
from asr_audit.runner.probes import load_probes


def spec_probe(name: str, inputs: ProbeInputs, params: Mapping[str, Any]) -> dict[str, Any] | None:
    """``[probes.<name>]`` with ``params`` on ``inputs`` (errors named as in a spec file ``<spec>``)."""
    load_probes()
    return get_probe(name)(inputs, params, Surface.toml("<spec>", f"probes.{name}"))
