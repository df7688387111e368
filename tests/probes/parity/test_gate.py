"""The regression gate through its front doors — ``asr-audit gate --json``, ``[probes.gate]`` in a spec,
and the probe object itself (the gate has no API function) — gives the same numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from parity import as_json, spec_result

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL
from asr_audit.options import Surface
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.probes.predfiles.gate import GATE

PANEL = list(VOXPOPULI_PANEL)
CASES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "defaults, no leave-one-out": (["--no-loo"], {"loo": False}),
    "paper, clusters, one measure": (
        ["--preset", "paper", "--measures", "wer", "--min-effect", "wer=0.25", "--cluster-pattern", r"^(\d)"],
        {"preset": "paper", "measures": ["wer"], "min_effect": {"wer": 0.25}, "cluster_pattern": r"^(\d)"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_verb_the_spec_and_the_probe_agree(case: str, tmp_path: Path, run_cli: Any) -> None:
    flags, params = CASES[case]
    models = {"candidate": "distil-small.en", "baseline": "whisper-tiny.en"}
    out = tmp_path / "verb.json"
    code, _, err = run_cli(
        "gate", "--preds", VOXPOPULI_EXAMPLES, "--panel", ",".join(PANEL), "--candidate", models["candidate"],
        "--baseline", models["baseline"], "--resamples", "300", "--json", out, *flags,
    )  # fmt: skip
    assert code in (0, 1, 2) and out.is_file(), err
    verb = json.loads(out.read_text())
    values = {**models, "resamples": 300, **params}
    spec = spec_result(tmp_path / "spec", VOXPOPULI_EXAMPLES, PANEL, "gate", values)
    inputs = ProbeInputs(corpus="vox", predictions=load_predictions(VOXPOPULI_EXAMPLES), panel=tuple(PANEL))
    direct = as_json(GATE(inputs, values, Surface.python("gate")))
    assert verb == spec == direct
    assert verb["tests"]
