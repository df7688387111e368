"""The probes ``asr-audit run`` can run: the modules that register them, and the spec's checks.

Every probe is one :class:`~asr_audit.probes.core.probe.Probe` object, registered in
:data:`~asr_audit.probes.core.probe.PROBES` by the module that defines it; the verb, the spec and
the API call the same object (CONTRIBUTING.md, "Adding a probe"). The runner sits above every
layer, so it names those modules here (:data:`PROBE_MODULES`) and imports them before it looks a
probe up. A spec's ``[probes.<name>]`` table is checked when the spec is loaded: unknown fields
(:func:`validate_probe_params`) and every corpus's values (:func:`validate_probe_options`, which
builds the probe's options record, so a bad value fails before any inference). Every probe also
takes ``skip = true`` (typically as a per-corpus override) to leave a corpus out.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from asr_audit.options import Surface
from asr_audit.probes.core.probe import PROBES, get_probe, validate_params

# modules whose import registers probe objects (a new probe module is added here)
PROBE_MODULES: tuple[str, ...] = (
    "asr_audit.probes.predfiles.ortho",
    "asr_audit.probes.predfiles.wer",
    "asr_audit.probes.predfiles.gate",
    "asr_audit.probes.audio.refdis_probe",
    "asr_audit.probes.audio.probes",
    "asr_audit.probes.battery.probe",
    "asr_audit.calib.probe",
    "asr_audit.mechrun.probe",
)


def load_probes() -> None:
    """Import every module that registers a probe (:data:`PROBE_MODULES`)."""
    for module in PROBE_MODULES:
        importlib.import_module(module)


def available_probes() -> list[str]:
    """Every registered probe's name."""
    load_probes()
    return PROBES.names()


def validate_probe_params(spec_path: str, name: str, params: Mapping[str, Any]) -> None:
    """Unknown parameters are errors naming the spec file (``spec_path``) and field."""
    load_probes()
    validate_params(spec_path, name, params)


def validate_probe_options(
    name: str,
    params: Mapping[str, Any],
    surface: Surface,
    panel: Sequence[str] | None = None,
    corpus: str | None = None,
) -> None:
    """Build ``name``'s options record from ``params`` (one corpus's values), so a bad value fails
    when the spec is loaded, named as the TOML field it came from.

    A record that depends on the panel has ``check_panel(n_panel, surface, corpus)``: it is
    called with ``panel`` (the corpus's panel), unless the corpus skips the probe, so a panel too
    small for the options (refdis's leave-one-out quorum) is refused before any inference."""
    load_probes()
    options = get_probe(name).options_from({k: v for k, v in params.items() if k != "skip"}, surface)
    check_panel = getattr(options, "check_panel", None)
    if check_panel is not None and panel is not None and not params.get("skip"):
        check_panel(len(panel), surface, corpus)
