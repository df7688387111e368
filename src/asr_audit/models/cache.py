"""A memo of weights hashes (in the user cache directory, :func:`asr_audit.paths.cache_dir`).

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
from asr_audit.paths import cache_dir

_HASH_MEMO = "weights-hashes.json"


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
