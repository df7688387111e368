"""Where asr-audit keeps its files: the user cache directory (a base module every layer may use).

Converted and bundled weights, room impulse responses, synthesized voices and the organism's
cached encoder outputs all live under :func:`cache_dir`; ``$ASR_AUDIT_CACHE_DIR`` moves it.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     os.environ[CACHE_ENV] = d
...     try:
...         cache_dir() == Path(d)
...     finally:
...         del os.environ[CACHE_ENV]
True
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

CACHE_ENV = "ASR_AUDIT_CACHE_DIR"


def cache_dir() -> Path:
    """The asr-audit cache directory (``$ASR_AUDIT_CACHE_DIR`` or the platform user cache dir)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        path = Path(override).expanduser()
    else:
        import platformdirs

        path = Path(platformdirs.user_cache_dir("asr-audit"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def publish_dir(tmp: Path, target: Path, complete: Callable[[Path], bool]) -> None:
    """Move the finished folder ``tmp`` to the cache entry ``target`` in one rename.

    Two processes may build the same entry at once (test workers, Ray workers on one machine):
    when ``target`` is already ``complete`` — another process published it first, and may be
    reading it — it is kept and ``tmp`` is left for the caller to remove; only an incomplete
    ``target`` (a half entry no writer of this version leaves) is replaced.
    """
    if complete(target):
        return
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    try:
        os.replace(tmp, target)
    except OSError:
        if not complete(target):  # not a lost race: a real failure
            raise
