"""Typed, one-line errors. Every message names the input (file, row, field) and the fix.

The CLI turns any :class:`AuditError` into a single line on stderr and exit code 2; nothing
else the library raises on bad input should escape as a traceback.
"""

from __future__ import annotations


class AuditError(Exception):
    """Base class: a problem with the user's input or environment, with a one-line message."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        message = " ".join(str(message).split())  # always one line
        if not message:
            raise ValueError("AuditError needs a message")
        super().__init__(message)


class InputFileError(AuditError):
    """A malformed or unusable input file (prediction file, manifest, audio)."""

    def __init__(self, path: object, problem: str, fix: str, line: int | None = None) -> None:
        where = f"{path}" if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {problem}; fix: {fix}")


class ConfigError(AuditError):
    """A bad argument, option or experiment-spec field."""


class MissingExtraError(AuditError):
    """An optional heavy dependency is not installed."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(
            f"this feature needs the Python module '{module}', which is not installed; "
            f"fix: pip install 'asr-audit[{extra}]'"
        )


class BackendError(AuditError):
    """A model backend could not be loaded or failed on an input."""


class PartialBatchError(BackendError):
    """Some clips of a batch failed, the others were transcribed (and, for a paid API, billed).

    ``texts[i]`` is clip *i*'s transcript, or ``None`` when it failed with ``reasons[i]``. The
    runner keeps the transcripts and records the failures instead of re-sending the batch.
    """

    def __init__(self, texts: list[str | None], reasons: list[str | None]) -> None:
        failed = [r for r in reasons if r]
        super().__init__(f"{len(failed)} of {len(texts)} clip(s) failed: {failed[0] if failed else '?'}")
        self.texts, self.reasons = list(texts), list(reasons)


def require(module: str, extra: str):  # noqa: ANN201 - returns a module
    """Import an optional dependency lazily, or raise :class:`MissingExtraError`.

    >>> require("json", "core").__name__
    'json'
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError(module, extra) from exc
