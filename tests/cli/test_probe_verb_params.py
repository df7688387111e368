"""The probe verbs keep every flag (issue 28): each verb's parameters — flags, default, type,
required — equal a committed snapshot taken before the verbs were built from the options' flag
declarations (``tests/cli/probe_verb_params.json``). A flag renamed, dropped, re-defaulted or
re-typed fails here; the help wording is free to change (CHANGELOG says where it did).

Regenerate the snapshot only for an intended change of the command line:
``python tests/cli/test_probe_verb_params.py > tests/cli/probe_verb_params.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("probe_verb_params.json")
VERBS = (
    ("refdis",), ("coverage",), ("switch-rate",), ("masked",), ("lift",), ("continue",), ("battery",), ("gate",),
    ("mech", "capture"), ("mech", "direction"), ("mech", "steer"), ("mech", "patch"),
    ("calib", "build"), ("calib", "score"),
)  # fmt: skip


def _default(value: Any) -> Any:
    return value if value is None or isinstance(value, (bool, int, float, str)) else repr(value)


def _type(param: Any) -> str:
    """The parameter's type: typer >= 0.26 keeps its annotation (``str | None``), click its type's name."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        return str(descriptor.annotation).replace("typing.", "").replace("<class '", "").replace("'>", "")
    return str(param.type.name)


def verb_params() -> dict[str, list[dict[str, Any]]]:
    """Each probe verb's click parameters, sorted by flag (the order of --help and the Python
    parameter names are free)."""
    import typer

    from asr_audit.cli import _register, app

    _register()
    root = typer.main.get_command(app)
    out: dict[str, list[dict[str, Any]]] = {}
    for path in VERBS:
        command: Any = root
        for word in path:
            command = command.commands[word]
        params = [
            {
                "flags": sorted(p.opts),
                "negative": sorted(getattr(p, "secondary_opts", [])),
                "default": _default(p.default),
                "type": _type(p),
                "required": bool(p.required),
                "is_flag": bool(getattr(p, "is_flag", False)),
                "min": getattr(p, "min", None),
            }
            for p in command.params
        ]
        out[" ".join(path)] = sorted(params, key=lambda d: d["flags"])
    return out


def test_every_probe_verb_keeps_its_flags() -> None:
    assert verb_params() == json.loads(SNAPSHOT.read_text())


if __name__ == "__main__":
    json.dump(verb_params(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
