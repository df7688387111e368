"""Golden files: every JSON, CSV and terminal table the prediction-file verbs write, byte for byte.

Inputs are small and fixed: the first :data:`N_CLIPS` clips of the VoxPopuli fixture
(``tests/fixtures/voxpopuli``, five models) plus a model that wrote nothing (its accept-ref is
undefined), copied into a temporary folder. Each case runs the
CLI in-process and compares every output with ``tests/report/golden/<case>/<file>``. Machine-
dependent text (the temporary folder, package versions) is replaced by placeholders first.

Covered: ``refdis`` (JSON, CSV, table; presets anchor with leave-one-out and paper without),
``switch-rate`` (JSON, CSV, table; on the VoxPopuli clips, where every switch rate is undefined,
and on twelve synthetic Mister / Mr clips, where two are defined), ``coverage`` (table) and ``run`` on a prediction-file-only
spec (``results.json`` and every ``tables/*.csv``; no model inference).

A failing case means an output changed. If the change is intended, regenerate the files and
review the diff before committing it (and list the change in ``CHANGELOG.md``)::

    ASR_AUDIT_UPDATE_GOLDEN=1 PYTHONPATH=src python3 -m pytest -q tests/report/test_golden.py
    git diff tests/report/golden
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"
VOXPOPULI = Path(__file__).parents[1] / "fixtures" / "voxpopuli"
UPDATE = os.environ.get("ASR_AUDIT_UPDATE_GOLDEN", "") not in ("", "0")
N_CLIPS = 25
PANEL = "whisper-base.en,whisper-small.en,whisper-tiny.en,wav2vec2-base-960h"
WIDTH = 200  # the CLI's console width when stdout is not a terminal


@pytest.fixture()
def preds(tmp_path: Path) -> Path:
    """The first N_CLIPS clips of every VoxPopuli fixture file, and a model that wrote nothing."""
    out = Path("preds")
    (tmp_path / out).mkdir()
    for src in sorted(VOXPOPULI.glob("*.jsonl")):
        lines = src.read_text(encoding="utf-8").splitlines(keepends=True)[:N_CLIPS]
        (tmp_path / out / src.name).write_text("".join(lines), encoding="utf-8")
    # a model that wrote nothing: no edit can be judged on it, so its accept-ref is undefined (n = 0)
    silent = [{**json.loads(line), "pred_text": ""} for line in lines]
    (tmp_path / out / "silent.jsonl").write_text("".join(json.dumps(r) + "\n" for r in silent), encoding="utf-8")
    return out


@pytest.fixture()
def cli(run_cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """``run_cli`` in ``tmp_path`` (inputs named by relative paths) with the console at a fixed width,
    so tables wrap the same on every machine."""
    from asr_audit import cli as cli_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli_module.console, "width", WIDTH)
    monkeypatch.setattr(cli_module.err_console, "width", WIDTH)
    return run_cli


def _normalize(text: str, tmp: Path) -> str:
    """A placeholder for the temporary folder, wherever an absolute path still shows."""
    return text.replace(str(tmp), "<TMP>")


def _check(case: str, name: str, text: str) -> None:
    path = GOLDEN / case / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    assert path.is_file(), f"{path} is missing; regenerate with ASR_AUDIT_UPDATE_GOLDEN=1 (see the module docstring)"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (
        f"{case}/{name} differs from its golden file; if intended, regenerate with "
        "ASR_AUDIT_UPDATE_GOLDEN=1 and review `git diff tests/report/golden`"
    )


def _check_files(case: str, out: Path, tmp: Path, names: list[str]) -> None:
    for name in names:
        _check(case, name, _normalize((out / name).read_text(encoding="utf-8"), tmp))


@pytest.mark.parametrize(
    ("case", "flags"),
    [
        ("refdis-anchor-loo", ("--preset", "anchor")),
        ("refdis-paper-noloo", ("--preset", "paper", "--no-loo")),
    ],
)
def test_refdis_outputs(case: str, flags: tuple[str, ...], preds: Path, tmp_path: Path, cli) -> None:
    out = Path("out")
    code, stdout, err = cli(
        "refdis", "--preds", preds, "--panel", PANEL, *flags, "--json", out / "refdis.json", "--csv", out / "refdis.csv"
    )
    assert code == 0, err
    _check(case, "table.txt", _normalize(stdout, tmp_path))
    _check_files(case, tmp_path / out, tmp_path, ["refdis.json", "refdis.csv"])


@pytest.fixture()
def convention_preds(tmp_path: Path) -> Path:
    """Twelve synthetic clips whose references alternate Mister / Mr: a model that copies the
    reference's spelling (switch above chance) and one that always writes Mr (below chance)."""
    out = Path("conventions")
    (tmp_path / out).mkdir()
    refs = {f"c{i:02d}": f"Thank you, {'Mister' if i % 2 else 'Mr'} President, item {i}." for i in range(12)}
    for name, hyp in (("copy", lambda t: t), ("habit", lambda t: t.replace("Mister", "Mr"))):
        lines = [json.dumps({"id": c, "text": t, "pred_text": hyp(t)}) for c, t in refs.items()]
        (tmp_path / out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("case", ["switch-rate-vox", "switch-rate-synthetic"])
def test_switch_rate_outputs(case: str, preds: Path, convention_preds: Path, tmp_path: Path, cli) -> None:
    out = Path("out")
    folder = preds if case == "switch-rate-vox" else convention_preds
    code, stdout, err = cli(
        "switch-rate", "--preds", folder, "--json", out / "switch.json", "--csv", out / "switch.csv"
    )
    assert code == 0, err
    _check(case, "table.txt", _normalize(stdout, tmp_path))
    _check_files(case, tmp_path / out, tmp_path, ["switch.json", "switch.csv"])
    rows = json.loads((tmp_path / out / "switch.json").read_text())["rows"]
    assert any(r["switch"] is None for r in rows)  # undefined: "—" in the table, null in JSON, empty in CSV
    if case == "switch-rate-synthetic":
        assert any(r["switch"] is not None for r in rows)


def test_coverage_table(preds: Path, tmp_path: Path, cli) -> None:
    code, stdout, err = cli("coverage", "--preds", preds)
    assert code == 0, err
    _check("coverage", "table.txt", _normalize(stdout, tmp_path))


SPEC = """
title = "golden"
seed = 3
output = "out"
store = "store.sqlite"
[[corpus]]
name = "vox"
predictions = "{preds}"
panel = {panel}
[probes.refdis]
preset = "anchor"
resamples = 200
[probes.switch_rate]
min_per_arm = 2
"""


def test_run_prediction_spec_outputs(preds: Path, tmp_path: Path, cli) -> None:
    spec = tmp_path / "audit.toml"
    spec.write_text(SPEC.format(preds=tmp_path / preds, panel=json.dumps(PANEL.split(","))), encoding="utf-8")
    code, _, err = cli("run", spec, "--no-progress")
    assert code == 0, err
    out = tmp_path / "out"
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    results["asr_audit_version"] = "<VERSION>"
    results["versions"] = dict.fromkeys(results.get("versions", {}), "<VERSION>")
    text = json.dumps(results, indent=2, ensure_ascii=False) + "\n"
    _check("run-predictions", "results.json", re.sub(r'"[^"]*' + re.escape(str(tmp_path)), '"<TMP>', text))
    tables = sorted(p.name for p in (out / "tables").glob("*.csv"))
    assert tables, "the run wrote no table"
    _check("run-predictions", "tables.txt", "".join(f"{n}\n" for n in tables))
    _check_files("run-predictions", out / "tables", tmp_path, tables)
