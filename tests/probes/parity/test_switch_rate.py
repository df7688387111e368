"""The switch rate through its three front doors — ``asr-audit switch-rate --json``,
``[probes.switch_rate]`` and ``asr_audit.api.switch_rate`` — gives the same numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from parity import as_json, spec_result

from asr_audit import api
from asr_audit.data import VOXPOPULI_EXAMPLES

CASES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "every family": ([], {}),
    "honorifics, the paper's denominator, two models": (
        ["--families", "honorific", "--denominator", "paper", "--min-per-arm", "2", "--models", "distil-small.en,whisper-tiny.en"],
        {"families": ["honorific"], "denominator": "paper", "min_per_arm": 2, "models": ["distil-small.en", "whisper-tiny.en"]},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_the_verb_the_spec_and_the_api_agree(case: str, tmp_path: Path, run_cli: Any) -> None:
    flags, params = CASES[case]
    out = tmp_path / "verb.json"
    code, _, err = run_cli("switch-rate", "--preds", VOXPOPULI_EXAMPLES, "--json", out, *flags)
    assert code == 0, err
    verb = json.loads(out.read_text())
    spec = spec_result(tmp_path / "spec", VOXPOPULI_EXAMPLES, (), "switch_rate", params)
    through_api = as_json(api.switch_rate(VOXPOPULI_EXAMPLES, **params).to_dict())
    assert verb == spec == through_api
    assert verb["rows"]
    if "models" in params:
        assert {r["model"] for r in verb["rows"]} == set(params["models"])
