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


def test_the_installer_can_be_chosen(tmp_path: Path) -> None:
    res = _dry_run(tmp_path, ASR_AUDIT_INSTALLER="pip")
    assert res.returncode == 0, res.stderr
    assert "installer: pip (ASR_AUDIT_INSTALLER=pip)" in res.stdout
    res = _dry_run(tmp_path, ASR_AUDIT_INSTALLER="conda")
    assert res.returncode == 2 and "ASR_AUDIT_INSTALLER='conda' (use auto, uv or pip)" in res.stderr


# A stand-in for uv: logs each call's arguments (one per line, calls separated by ---) to $UV_LOG;
# `pip compile ... -o FILE` writes $UV_PINS there, the resolution the script then checks.
_FAKE_UV = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "uv 0.0.0-fake"; exit 0; fi
{ for a in "$@"; do printf '%s\\n' "$a"; done; echo ---; } >> "$UV_LOG"
if [ "$2" = "compile" ]; then
  while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then printf '%s\\n' "$UV_PINS" > "$2"; fi; shift; done
fi
exit 0
"""


def _install_with_fake_uv(tmp_path: Path, pins: str) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    """scripts/install.sh run for real (not a dry run) from a copy of scripts/, into a project environment
    for an externally managed Python, with the fake uv on PATH and the PyTorch CPU index unreachable."""
    if os.path.isdir(os.path.join(sys.base_prefix, "conda-meta")):
        pytest.skip("a conda base interpreter is installed into as it is")
    plan = _dry_run(tmp_path)
    if "would apt-get" in plan.stdout:
        pytest.skip("Debian packages missing here: a real run would call apt-get")
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("install.sh", "_pip_config_for_uv.py"):
        (repo / "scripts" / name).write_bytes((ROOT / "scripts" / name).read_bytes())
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir()
    (fake_bin / "uv").write_text(_FAKE_UV)
    (fake_bin / "uv").chmod(0o755)
    log = tmp_path / "uv.log"
    base = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHON")}
    base = {k: v for k, v in base.items() if not k.startswith(("PIP_", "UV_"))}
    base.update(
        PYTHON=str(_externally_managed_python(tmp_path)),
        PATH=f"{fake_bin}:{base['PATH']}",
        PIP_CONFIG_FILE=os.devnull,  # pip's configuration: only what is set here
        PIP_FIND_LINKS=str(tmp_path / "wheels"),
        PIP_EXTRA_INDEX_URL="file:///mirror/a file:///mirror/b",
        UV_LOG=str(log),
        UV_PINS=pins,
        ASR_AUDIT_TORCH_CPU_INDEX=UNREACHABLE,
        ASR_AUDIT_VENV=str(tmp_path / "project-venv"),
        ASR_AUDIT_BIN=str(tmp_path / "bin"),
    )
    res = subprocess.run(
        ["bash", str(repo / "scripts" / "install.sh")], env=base, capture_output=True, text=True, timeout=300
    )
    calls = [c.strip("\n").split("\n") for c in log.read_text().split("---\n") if c.strip()] if log.exists() else []
    return res, calls


def test_uv_installs_into_the_project_environment_with_pips_configuration(tmp_path: Path) -> None:
    res, calls = _install_with_fake_uv(tmp_path, "torch==2.13.0+cpu\nsympy==1.14.0")
    assert res.returncode == 0, res.stdout + res.stderr
    venv = tmp_path / "project-venv"
    assert f"installer: uv 0.0.0-fake ({tmp_path}/fake-bin/uv)" in res.stdout
    assert "the default index has a CPU build: installing it" in res.stdout
    assert [c[:2] for c in calls] == [["pip", "compile"], ["pip", "install"], ["pip", "install"]]
    for call in calls:
        assert call[call.index("--python") + 1] == f"{venv}/bin/python"
        # pip's configuration reaches uv, and every index is searched as pip searches them
        assert call[call.index("--find-links") + 1] == str(tmp_path / "wheels")
        assert [call[i + 1] for i, a in enumerate(call) if a == "--extra-index-url"] == [
            "file:///mirror/a",
            "file:///mirror/b",
        ]
        assert call[call.index("--index-strategy") + 1] == "unsafe-best-match"
    torch_call, package_call = calls[1], calls[2]
    assert torch_call[-2] == "-r"  # exactly the resolution that was checked for CUDA wheels
    assert package_call[-2:] == ["-e", ".[all]"]
    assert (tmp_path / "bin" / "asr-audit").is_symlink()
    assert (tmp_path / "repo" / ".asr-audit-python").read_text().strip() == f"{venv}/bin/python"


def test_uv_never_installs_a_cuda_build_unasked(tmp_path: Path) -> None:
    res, calls = _install_with_fake_uv(tmp_path, "torch==2.13.0\nnvidia-cublas-cu12==12.8.4.1\ntriton==3.5.0")
    assert res.returncode == 1
    assert "offers no CPU build of torch==2.13.0" in res.stderr and "rerun with --gpu" in res.stderr
    assert [c[:2] for c in calls] == [["pip", "compile"]]  # resolved and refused: nothing installed
