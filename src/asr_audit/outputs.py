"""Output paths checked before any work (a base module every layer may use).

A verb that writes a file or a folder checks the path first, so a typo never costs a model run:
:func:`check_output_file` refuses a path that is a folder or lies under a file, and (given the
verb's inputs) a path that is one of them or a file inside an input folder;
:func:`check_output_dir` refuses a path that is a file, ``/``, the home folder, and a non-empty
folder that is not asr-audit output (no :data:`MARKER` file in it) unless ``force``.
:func:`mark_output_dir` writes the marker, so a rerun into the same folder is allowed.
:func:`require_regular_file` refuses an input that is a FIFO, socket or device before it is
opened (reading a FIFO would wait forever). :func:`write_atomic` writes a file through a temporary file renamed into place, so a full disk
or a killed run leaves the old file whole (never a truncated or empty one).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from asr_audit.errors import ConfigError, InputFileError

MARKER = ".asr-audit-output"


def _file_above(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` that is not a folder, if any."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def check_output_file(path: Path | None, flag: str, inputs: Iterable[str | Path | None] = ()) -> Path | None:
    """Refuse an output file path that is a folder, lies under a file, or would overwrite one of
    ``inputs`` (an input file itself, or an existing file inside an input folder); returns ``path``
    (``None``: no output)."""
    if path is None:
        return None
    path = Path(path)
    _check_not_input(path, flag, inputs)
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


def _check_not_input(path: Path, flag: str, inputs: Iterable[str | Path | None]) -> None:
    """Refuse an output that would replace an input (see :func:`check_output_file`)."""
    target = path.expanduser().resolve()
    for given in inputs:
        if given is None or str(given) == "" or "://" in str(given):
            continue
        source = Path(given).expanduser().resolve()
        if not source.exists():  # a model name, not a path
            continue
        same = target == source or (target.exists() and os.path.samefile(target, source))
        inside = source.is_dir() and target.is_file() and target.is_relative_to(source)
        if same or inside:
            what = "is the input" if same else "is a file inside the input folder"
            raise ConfigError(
                f"{flag} {path} {what} {given}; writing it would replace the input; fix: choose another output path"
            )


def write_atomic(
    path: str | Path,
    data: str | bytes,
    fix: str = "choose a writable output path",
    full_fix: str = "free disk space and rerun (the old file, if any, is left as it was)",
) -> Path:
    """Write ``data`` (text as UTF-8, LF line ends kept) to ``path`` through a temporary file in its
    folder renamed into place: the old file stays whole until the new one is complete. An
    unwritable path or a full disk is a one-line :class:`InputFileError` (``fix`` / ``full_fix``:
    their fixes)."""
    path = Path(path)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputFileError(path, f"cannot write ({exc.strerror or exc})", fix) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
            raise InputFileError(
                path,
                "disk full" if full else f"cannot write ({exc.strerror or exc})",
                full_fix if full else fix,
            ) from None
        raise
    return path


def require_regular_file(path: str | Path, fix: str) -> Path:
    """Refuse an input file that does not exist or is not a regular file (a FIFO, socket, device
    or folder), without opening it: a FIFO never blocks; ``fix`` completes the one-line error."""
    import stat

    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise InputFileError(path, f"cannot be read ({exc.strerror or exc})", fix) from None
    if not stat.S_ISREG(mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(mode)
            else "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a device or other special file"
        )
        raise InputFileError(path, f"not a regular file ({kind})", fix)
    return path
