"""A verb named in ``VERB_HOMES`` is served by importing its module alone, and that module registers
exactly the verbs the map gives it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _fresh(code: str) -> str:
    """stdout of ``code`` in a fresh interpreter importing this tree's package."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        check=True,
    )
    return out.stdout


def test_each_home_registers_exactly_its_verbs() -> None:
    code = """
import importlib, json
from asr_audit import cli
homes = {}
for verb, module in cli.VERB_HOMES.items():
    homes.setdefault(module, set()).add(verb)
before = set()
out = {}
for module in homes:
    importlib.import_module(module)
    names = {c.name or c.callback.__name__.replace("_", "-") for c in cli.app.registered_commands}
    out[module] = sorted(names - before)
    before = names
print(json.dumps([out, {m: sorted(v) for m, v in homes.items()}]))
"""
    registered, expected = json.loads(_fresh(code))
    assert registered == expected


def test_a_home_verb_imports_no_other_verb_module(tmp_path: Path) -> None:
    (tmp_path / "m1.jsonl").write_text('{"id": "a", "text": "x", "pred_text": "x"}\n')
    code = f"""
import sys
from asr_audit import cli
code = cli.main(["coverage", "--preds", {str(tmp_path)!r}])
others = [m for m in cli.VERB_MODULES if m in sys.modules and m not in cli.VERB_HOMES.values()]
print(code, others)
"""
    assert _fresh(code).strip().splitlines()[-1] == "0 []"
