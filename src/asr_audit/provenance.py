"""Provenance of committed result files: which code, inputs, seeds and command produced a number.

A benchmark that writes a result file a document or table reads puts a :class:`Provenance` under
the file's ``"provenance"`` key: the hash of the source of the modules and scripts involved
(:func:`code_hash`), the git commit of the tree when there is one, the UTC date, the command line,
the seeds and the hashes of its inputs (sets, organism weights; :func:`file_hash`,
:func:`tree_hash`). A reader recomputes the code hash over the same modules with
:func:`freshness`: a file whose code changed since it was written is ``stale``, one without a
provenance record is ``unverified``; neither may be read as a measurement of the code at hand.

>>> p = Provenance("ab" * 32, ("asr_audit.stats",), (), None, "2026-12-01T00:00:00Z", "python x.py", (3,), {})
>>> Provenance.from_dict(p.to_dict()) == p
True
>>> freshness(None).status
'unverified'
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROVENANCE_KEY = "provenance"
PACKAGE_DIR = Path(__file__).resolve().parent


def _module_files(name: str) -> list[tuple[str, Path]]:
    """The source files of a dotted ``asr_audit`` module or package (every ``.py`` under a package)."""
    parts = name.split(".")
    if parts[0] != PACKAGE_DIR.name:
        raise ValueError(f"provenance: {name!r} is not an asr_audit module; fix: name it as asr_audit.<module>")
    base = PACKAGE_DIR.joinpath(*parts[1:])
    if base.is_dir():
        return [(f"{name}/{p.relative_to(base).as_posix()}", p) for p in sorted(base.rglob("*.py"))]
    path = base.with_suffix(".py")
    if not path.is_file():
        raise ValueError(f"provenance: no module {name!r} under {PACKAGE_DIR}; fix: name an existing module")
    return [(name, path)]


def code_hash(modules: Sequence[str], files: Sequence[str] = (), root: Path | None = None) -> str:
    """sha256 over the source of ``modules`` (dotted ``asr_audit`` names; a package means every
    ``.py`` file under it) and of ``files`` (paths relative to ``root``, e.g. the benchmark script),
    each keyed by its name, in sorted order. A missing file hashes as missing, so a removed script
    makes the hash differ rather than fail."""
    entries: list[tuple[str, bytes | None]] = []
    for m in modules:
        entries += [(key, p.read_bytes()) for key, p in _module_files(m)]
    for f in files:
        p = (root or Path.cwd()) / f
        entries.append((f, p.read_bytes() if p.is_file() else None))
    h = hashlib.sha256()
    for key, data in sorted(entries, key=lambda e: e[0]):
        h.update(key.encode() + b"\0")
        h.update(b"<missing>" if data is None else data)
        h.update(b"\0")
    return h.hexdigest()


def file_hash(path: Path) -> str:
    """sha256 of one file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree_hash(paths: Iterable[Path], root: Path) -> str:
    """sha256 over files (their paths relative to ``root`` and their bytes), in sorted order."""
    h = hashlib.sha256()
    for p in sorted(paths, key=lambda q: q.relative_to(root).as_posix()):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + file_hash(p).encode() + b"\0")
    return h.hexdigest()


def git_commit(root: Path) -> str | None:
    """``HEAD`` of the git tree at ``root`` (``+dirty`` when it has uncommitted changes), or None."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


@dataclass(frozen=True, slots=True)
class Provenance:
    """What produced a result file: ``code_hash`` over ``modules`` and ``files`` (see
    :func:`code_hash`), the git ``commit`` (None outside a git tree), the UTC ``date``, the
    ``command``, the ``seeds`` and ``inputs`` (name -> sha256)."""

    code_hash: str
    modules: tuple[str, ...]
    files: tuple[str, ...]
    commit: str | None
    date: str
    command: str
    seeds: tuple[int, ...]
    inputs: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code_hash": self.code_hash,
            "modules": list(self.modules),
            "files": list(self.files),
            "commit": self.commit,
            "date": self.date,
            "command": self.command,
            "seeds": list(self.seeds),
            "inputs": dict(sorted(self.inputs.items())),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Provenance:
        return cls(
            str(d["code_hash"]),
            tuple(d.get("modules", ())),
            tuple(d.get("files", ())),
            d.get("commit"),
            str(d.get("date", "")),
            str(d.get("command", "")),
            tuple(int(s) for s in d.get("seeds", ())),
            dict(d.get("inputs", {})),
        )


def make_provenance(
    modules: Sequence[str],
    seeds: Sequence[int],
    inputs: Mapping[str, str] | None = None,
    files: Sequence[str] = (),
    root: Path | None = None,
    command: Sequence[str] | None = None,
) -> Provenance:
    """The provenance of a result written now by ``command`` (default: this process's argv)."""
    root = root or Path.cwd()
    argv = list(sys.argv if command is None else command)
    return Provenance(
        code_hash(modules, files, root),
        tuple(modules),
        tuple(files),
        git_commit(root),
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        shlex.join(["python", *argv]) if command is None else shlex.join(argv),
        tuple(int(s) for s in seeds),
        dict(inputs or {}),
    )


@dataclass(frozen=True, slots=True)
class Freshness:
    """``fresh`` (the code hash matches the code at hand), ``stale`` (it does not) or ``unverified``
    (no provenance record); ``detail`` says which and from what."""

    status: str
    detail: str

    @property
    def ok(self) -> bool:
        return self.status == "fresh"


def freshness(record: Mapping[str, Any] | None, root: Path | None = None) -> Freshness:
    """Compare a result file's provenance record (its ``"provenance"`` value) with the code at hand."""
    if not record:
        return Freshness("unverified", "no provenance record (code hash, date, command); fix: rerun its benchmark")
    try:
        prov = Provenance.from_dict(record)
        now = code_hash(prov.modules, prov.files, root)
    except (KeyError, TypeError, ValueError) as exc:
        return Freshness("unverified", f"unreadable provenance record ({exc}); fix: rerun its benchmark")
    when = f"written {prov.date}" + (f" at {prov.commit[:12]}" if prov.commit else "")
    if now != prov.code_hash:
        return Freshness("stale", f"code changed since it was {when}; fix: rerun `{prov.command}`")
    return Freshness("fresh", when)


__all__ = [
    "PROVENANCE_KEY",
    "Freshness",
    "Provenance",
    "code_hash",
    "file_hash",
    "freshness",
    "git_commit",
    "make_provenance",
    "tree_hash",
]
