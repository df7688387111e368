"""scripts/install.sh picks the Python it installs into (issue 30): a virtual environment as it
is, a PEP 668 externally managed Python through a project environment with `asr-audit` linked onto
PATH, and the CPU build of PyTorch without hanging on an unreachable index. Run in its --dry-run
mode, which prints the plan and changes nothing (no apt, no pip, no download)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / "scripts" / "install.sh"
UNREACHABLE = "http://127.0.0.1:9/"  # the discard port: connection refused at once


def _dry_run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHON")}
    base.update(
        ASR_AUDIT_TORCH_CPU_INDEX=UNREACHABLE,
        ASR_AUDIT_VENV=str(tmp_path / "project-venv"),
        ASR_AUDIT_BIN=str(tmp_path / "bin"),
        **env,
    )
    return subprocess.run(
        ["bash", str(INSTALL), "--dry-run", *args], env=base, capture_output=True, text=True, timeout=120
    )


def _assert_changed_nothing(tmp_path: Path) -> None:
    assert not (tmp_path / "project-venv").exists() and not (tmp_path / "bin").exists()


def test_a_fresh_virtual_environment_is_installed_into(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    res = _dry_run(tmp_path, VIRTUAL_ENV=str(venv))
    assert res.returncode == 0, res.stderr
    assert f"{venv}/bin/python: a virtual environment, installing into it" in res.stdout
    assert f"the console script is {venv}/bin/asr-audit" in res.stdout
    # no torch in the fresh environment and the CPU index unreachable: the fallback is planned
    assert f"the PyTorch CPU index {UNREACHABLE} is not reachable" in res.stdout
    assert "only if it needs no CUDA wheels" in res.stdout
    assert [line.split("]")[0] for line in res.stdout.splitlines() if line.startswith("[")] == [
        f"[{i}/5" for i in range(1, 6)
    ]
    _assert_changed_nothing(tmp_path)


def _externally_managed_python(tmp_path: Path) -> Path:
    """A wrapper around this machine's base interpreter whose stdlib folder carries the PEP 668
    marker (through sitecustomize), as stock Debian's /usr/bin/python3 does."""
    marker_dir = tmp_path / "stdlib"
    marker_dir.mkdir()
    (marker_dir / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=use a venv\n")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sysconfig\n"
        "_get_path = sysconfig.get_path\n"
        "def get_path(name, *args, **kwargs):\n"
        f"    return {str(marker_dir)!r} if name == 'stdlib' else _get_path(name, *args, **kwargs)\n"
        "sysconfig.get_path = get_path\n"
    )
    wrapper = tmp_path / "python3"
    base = getattr(sys, "_base_executable", sys.executable)
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {base} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def test_an_externally_managed_python_gets_a_project_environment(tmp_path: Path) -> None:
    if os.path.isdir(os.path.join(sys.base_prefix, "conda-meta")):
        pytest.skip("a conda base interpreter is installed into as it is")
    python = _externally_managed_python(tmp_path)
    res = _dry_run(tmp_path, PYTHON=str(python))
    assert res.returncode == 0, res.stderr
    venv = tmp_path / "project-venv"
    assert "is externally managed (PEP 668): creating the project environment " + str(venv) in res.stdout
    assert f"linking {tmp_path}/bin/asr-audit -> {venv}/bin/asr-audit" in res.stdout
    _assert_changed_nothing(tmp_path)


@pytest.mark.skipif(
    not Path("/usr/bin/python3").exists() or not list(Path("/usr/lib").glob("python3*/EXTERNALLY-MANAGED")),
    reason="no externally managed /usr/bin/python3 (stock Debian 12 and later have one)",
)
def test_the_system_python_of_stock_debian(tmp_path: Path) -> None:
    res = _dry_run(tmp_path, PYTHON="/usr/bin/python3")
    assert res.returncode == 0, res.stderr
    assert "/usr/bin/python3 is externally managed (PEP 668)" in res.stdout


def test_an_unknown_option_is_a_usage_error(tmp_path: Path) -> None:
    res = _dry_run(tmp_path, "--cuda")
    assert res.returncode == 2 and "unknown option '--cuda'" in res.stderr
