"""A spec's prediction corpus read as people export their files (issue 29): ``columns = {...}``,
``id_from``, ``references``, ``fix_encoding``, ``min_id_overlap``, checked when the spec loads,
recorded in results.json, their repairs logged by the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from raw_exports import write_raw_exports

from asr_audit.errors import ConfigError
from asr_audit.runner.spec import load_spec

SPEC = """title = "raw exports"
output = "{out}"
store = "{store}"
[[corpus]]
name = "cv"
predictions = "{preds}"
id_from = "stem"
references = "normalized"
fix_encoding = true
panel = ["a", "b", "c"]
[probes.refdis]
resamples = 20
loo = false  # three panel models
"""


def _spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "audit.toml"
    path.write_text(text.format(out=tmp_path / "out", store=tmp_path / "s.sqlite", preds=tmp_path / "exports"))
    return path


def test_reading_fields_load_and_bad_ones_are_named(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path, SPEC.replace('id_from = "stem"', 'id_from = "stem"\ncolumns = {{ hyp = "asr" }}')))
    c = spec.corpora[0]
    read = c.read_options(spec.path, 0)
    assert read.columns == {"hyp": "asr"} and read.id_from == "stem" and read.fix_encoding
    assert spec.to_dict()["corpora"][0]["reading"]["id_from"] == "stem"
    with pytest.raises(ConfigError, match=r"audit.toml: \[corpus\[0\]\] id_from = \"name\" is not an id rule"):
        load_spec(_spec(tmp_path, SPEC.replace('id_from = "stem"', 'id_from = "name"')))
    with pytest.raises(ConfigError, match=r"\[corpus\[0\]\] columns = \{'file': 'x'\} names the role 'file'"):
        load_spec(_spec(tmp_path, SPEC.replace('id_from = "stem"', 'columns = {{ file = "x" }}')))


def test_a_run_on_raw_exports_logs_its_repairs(tmp_path: Path, run_cli) -> None:
    pytest.importorskip("ftfy")
    write_raw_exports(tmp_path / "exports")
    code, out, err = run_cli("run", _spec(tmp_path, SPEC), "--no-progress")
    assert code == 0, err
    logged = out + err
    assert "corpus 'cv': repaired: clip ids taken by --id-from stem: 450" in logged
    assert "corpus 'cv': repaired: references that differ but normalize equal" in logged
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["spec"]["corpora"][0]["reading"]["references"] == "normalized"
