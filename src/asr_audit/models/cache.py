"""The user cache directory and a memo of weights hashes.

Hashing a 150 MB ``model.bin`` takes about a second; the memo keys each hash by the files'
resolved paths, sizes and modification times, so a backend load only rehashes weights that
changed on disk.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from asr_audit.models.base import hash_files

CACHE_ENV = "ASR_AUDIT_CACHE_DIR"
_HASH_MEMO = "weights-hashes.json"


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


def _file_key(paths: Sequence[str | os.PathLike[str]]) -> str:
    parts = []
    for p in sorted(str(Path(p).resolve()) for p in paths):
        st = os.stat(p)
        parts.append(f"{p}|{st.st_size}|{st.st_mtime_ns}")
    return "\n".join(parts)


def weights_hash(paths: Sequence[str | os.PathLike[str]]) -> str:
    """``hash_files(paths)``, memoised on disk by path + size + mtime."""
    key = _file_key(paths)
    memo_path = cache_dir() / _HASH_MEMO
    try:
        memo = json.loads(memo_path.read_text())
        if not isinstance(memo, dict):
            memo = {}
    except (OSError, ValueError):
        memo = {}
    if key in memo:
        return str(memo[key])
    digest = hash_files([str(p) for p in paths])
    memo[key] = digest
    tmp = memo_path.with_suffix(f".{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(memo, indent=0, sort_keys=True))
        os.replace(tmp, memo_path)
    except OSError:  # a read-only cache only costs a rehash next time
        tmp.unlink(missing_ok=True)
    return digest
