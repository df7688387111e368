"""The README's snippets run (issue 11, defect 3: its example spec used to score every panel
model on 0 edits and print "+0.0 [+0.0, +0.0]").

Offline, a snippet's audio corpus and models are swapped for the shipped VoxPopuli example
predictions (same panel size and probe settings); ``preds/`` in commands is that folder.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
import tomllib

from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL

README = Path(__file__).parents[1] / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), flags=re.S)


def _spec_blocks() -> list[str]:
    return [b for b in _blocks("toml") if "[[corpus]]" in b]


def test_readme_has_a_spec_and_a_refdis_command() -> None:
    assert _spec_blocks()
    assert any("asr-audit refdis" in b for b in _blocks("bash"))


@pytest.mark.parametrize("i", range(len(_spec_blocks())))
def test_readme_spec_is_valid(i: int, tmp_path: Path) -> None:
    from asr_audit.runner.spec import load_spec

    path = tmp_path / "audit.toml"
    path.write_text(_spec_blocks()[i])
    spec = load_spec(path)
    assert spec.corpora and spec.panel


def _offline(text: str, tmp_path: Path) -> str:
    """The spec with its corpora replaced by the VoxPopuli example predictions and its panel's
    names by as many of their models (panel size and every probe setting kept)."""
    data = tomllib.loads(text)
    n = len(data["panel"]["models"])
    assert n <= len(VOXPOPULI_PANEL)
    lines = [
        f"title = {json.dumps(data.get('title', 'readme'))}",
        f"seed = {data.get('seed', 0)}",
        f"output = {json.dumps(str(tmp_path / 'out'))}",
        f"store = {json.dumps(str(tmp_path / 'store.sqlite'))}",
        "[[corpus]]",
        'name = "vox"',
        f"predictions = {json.dumps(str(VOXPOPULI_EXAMPLES))}",
        "[panel]",
        f"models = {json.dumps(list(VOXPOPULI_PANEL[:n]))}",
    ]
    for probe, params in data.get("probes", {}).items():
        lines.append(f"[probes.{probe}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in params.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("i", range(len(_spec_blocks())))
def test_readme_spec_scores_every_panel_model(i: int, tmp_path: Path, run_cli) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(_offline(_spec_blocks()[i], tmp_path))
    code, _, err = run_cli("run", path, "--no-progress")
    assert code == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    refdis = [e["result"] for e in results["probes"] if e["probe"] == "refdis"]
    assert refdis
    for r in refdis:
        for m in r["models"]:
            assert m["n_eligible"] > 0 and m["accept_ref"] is not None, m


def test_readme_refdis_commands_run(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(VOXPOPULI_EXAMPLES, tmp_path / "preds")
    monkeypatch.chdir(tmp_path)
    commands = [
        c
        for b in _blocks("bash")
        for c in b.replace("\\\n", " ").splitlines()
        if c.strip().startswith("asr-audit refdis")
    ]
    assert commands
    for c in commands:
        args = shlex.split(c.split("#")[0])[1:]
        code, out, err = run_cli(*args)
        assert code == 0, err
        assert "accept-ref" in out
    json_out = tmp_path / "refdis.json"
    if json_out.exists():  # the README's numbers: leave-one-out scores every panel member on > 0 edits
        d = json.loads(json_out.read_text())
        assert all(m["n_eligible"] > 0 for m in d["models"])
    # the claim next to the command: --no-loo finds the published 31 edits, every model at 0
    code, _, err = run_cli(
        "refdis",
        "--preds",
        "preds",
        "--panel",
        ",".join(VOXPOPULI_PANEL),
        "--preset",
        "anchor",
        "--no-loo",
        "--json",
        "published.json",
    )
    d = json.loads(Path("published.json").read_text())
    assert code == 0 and d["n_edits"] == 31 and all(m["n_ref"] == 0 for m in d["models"])


def test_too_small_panel_for_leave_one_out_is_refused(tmp_path: Path, run_cli) -> None:
    """The README's old examples: a two- or three-model panel with min_panel = 2 and leave-one-out
    (three is refused too: two voters are no consensus)."""
    spec = _offline(_spec_blocks()[0], tmp_path).replace(
        f"models = {json.dumps(list(VOXPOPULI_PANEL[:4]))}", f"models = {json.dumps(list(VOXPOPULI_PANEL[:3]))}"
    )
    assert json.dumps(list(VOXPOPULI_PANEL[:3])) in spec
    path = tmp_path / "audit.toml"
    path.write_text(spec)
    code, _, err = run_cli("run", path, "--no-progress")
    assert code == 2 and "leave-one-out" in err and "loo = false" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    three = ",".join(VOXPOPULI_PANEL[:3])
    # only panel members to score: none could be judged (issue 29 lets a run with an outside model go on)
    code, _, err = run_cli(
        "refdis", "--preds", VOXPOPULI_EXAMPLES, "--panel", three, "--min-panel", "3", "--models", three
    )
    assert code == 2 and "fix: name at least 4 panel members, name a model outside the panel" in err
    code, _, err = run_cli(
        "refdis",
        "--preds",
        VOXPOPULI_EXAMPLES,
        "--panel",
        ",".join(VOXPOPULI_PANEL[:3]),
        "--min-panel",
        "3",
        "--no-loo",
    )
    assert code == 0, err
