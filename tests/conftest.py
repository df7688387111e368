"""Shared fixtures; helpers shared by several test folders live in tests/support (importable by name)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

SUPPORT = Path(__file__).resolve().parent / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))

# Under pytest-xdist (``-n N``) each worker process keeps to one core with one math thread, so N
# workers never run more threads than cores (CTranslate2 takes one thread per usable core and torch
# one per physical core, and oversubscribed they spin and stall). Run plainly, nothing changes.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ...
if _XDIST_WORKER[2:].isdigit() and hasattr(os, "sched_setaffinity"):
    _cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {_cpus[int(_XDIST_WORKER[2:]) % len(_cpus)]})
    os.environ["OMP_NUM_THREADS"] = "1"


@pytest.fixture(scope="session", autouse=True)
def _xdist_worker_cache(tmp_path_factory: pytest.TempPathFactory):
    """Under pytest-xdist each worker converts and caches models, voices and room responses in its
    own cache folder: two processes filling one cache entry at once would race (the cache's writes
    are atomic renames, but a second writer replaces an entry the first may be reading)."""
    if not _XDIST_WORKER:
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path_factory.mktemp("asr-audit-cache")))
        yield


FIXTURES = Path(__file__).parent / "fixtures"
VOXPOPULI = FIXTURES / "voxpopuli"
VOX_PANEL = ["wav2vec2-base-960h", "whisper-tiny.en", "whisper-base.en", "whisper-small.en"]


@pytest.fixture()
def vox_dir() -> Path:
    return VOXPOPULI


@pytest.fixture(scope="session")
def tiny_pt():
    """The bundled whisper-tiny.en rebuilt in PyTorch (hook sites), loaded once per test session:
    the white-box tests share it (each checks that it leaves no hook behind)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from asr_audit.models.base import load_backend

    return load_backend("whisper-tiny.en-pt")


@pytest.fixture()
def run_cli(capsys):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    from asr_audit.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture()
def librispeech_dir(tmp_path: Path) -> Path:
    """A small LibriSpeech-layout folder built from the shipped LibriVox clips (tests/support)."""
    from audio_fixtures import build_librispeech

    return build_librispeech(tmp_path)


def _loopback_only() -> bool:
    """Whether this process sees no network interface but loopback (``unshare -n``)."""
    import socket

    return all(name == "lo" for _, name in socket.if_nameindex())


def pytest_collection_modifyitems(config, items) -> None:
    """Ray tests (marker ``ray``) run only in a loopback-only network namespace, never on this
    machine's own address: ``unshare -n sh -c 'ip link set lo up; python3 -m pytest -m ray'``
    (what ``scripts/test.sh`` does)."""
    if _loopback_only():
        return
    skip = pytest.mark.skip(
        reason="Ray test: run in a loopback-only namespace (unshare -n sh -c 'ip link set lo up; "
        "python3 -m pytest -m ray'), as scripts/test.sh does"
    )
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(skip)
