"""Output paths checked before any work (a base module every layer may use).

A verb that writes a file or a folder checks the path first, so a typo never costs a model run:
:func:`check_output_file` refuses a path that is a folder or lies under a file;
:func:`check_output_dir` refuses a path that is a file, ``/``, the home folder, and a non-empty
folder that is not asr-audit output (no :data:`MARKER` file in it) unless ``force``.
:func:`mark_output_dir` writes the marker, so a rerun into the same folder is allowed.
"""

from __future__ import annotations

from pathlib import Path

from asr_audit.errors import ConfigError

MARKER = ".asr-audit-output"


def _file_above(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` that is not a folder, if any."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def check_output_file(path: Path | None, flag: str) -> Path | None:
    """Refuse an output file path that is a folder or lies under a file; returns ``path`` (``None``: no output)."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{flag} {path} is a folder, expected a file path; fix: name a file, e.g. {path}/out.json")
    blocker = _file_above(path)
    if blocker is not None:
        raise ConfigError(f"{flag} {path} lies under the file {blocker}; fix: choose a path in a folder")
    return path


def check_output_dir(path: Path, flag: str, force: bool = False) -> Path:
    """Refuse an output folder that cannot or should not hold asr-audit output; returns ``path``.

    ``/`` and the home folder are always refused; a non-empty folder without :data:`MARKER` is
    refused unless ``force`` (its other files would sit beside the outputs as if part of them).
    """
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{flag} {path} is a file, expected a folder; fix: choose a folder path")
    blocker = _file_above(path)
    if blocker is not None:
        raise ConfigError(f"{flag} {path} lies under the file {blocker}; fix: choose a path in a folder")
    resolved = path.resolve()
    if resolved == Path(resolved.anchor) or resolved == Path.home().resolve():
        raise ConfigError(
            f"{flag} {path} is {'the file-system root' if resolved == Path(resolved.anchor) else 'the home folder'}; "
            "fix: choose a folder of its own, e.g. ./audit-out"
        )
    if path.is_dir() and not force and not (path / MARKER).exists() and any(path.iterdir()):
        raise ConfigError(
            f"{flag} {path} is a non-empty folder that is not asr-audit output (no {MARKER} file); "
            "fix: choose an empty or new folder, or pass --force to write into it"
        )
    return path


def mark_output_dir(path: Path) -> Path:
    """Create ``path`` and its :data:`MARKER` file (asr-audit output lives here)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / MARKER).write_text("asr-audit output folder\n", encoding="utf-8")
    return path
