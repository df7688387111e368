"""The flags every verb that reads prediction files shares: how the files are read (issue 29).

:func:`reading_options` adds ``--id-col``, ``--ref-col``, ``--hyp-col``, ``--id-from``,
``--references``, ``--fix-encoding`` and ``--min-id-overlap`` to a verb, once for all of them,
and hands the verb one :class:`~asr_audit.corpus.reading.ReadOptions` as its ``read`` argument;
:func:`load_set` loads a folder with it and says on stderr every repair the reading made.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import err_console

# (name, annotation, option) of each flag, in the order --help lists them
_FLAGS: tuple[tuple[str, Any, Any], ...] = (
    ("id_col", str | None, typer.Option(None, "--id-col", help="Column holding the clip id (default: found by name).")),
    ("ref_col", str | None, typer.Option(None, "--ref-col", help="Column holding the reference text.")),
    ("hyp_col", str | None, typer.Option(None, "--hyp-col", help="Column holding the model's transcript.")),
    (
        "id_from",
        str | None,
        typer.Option(
            None,
            "--id-from",
            help="Clip id from the id column: as-is (default) | basename (a path's last part) | stem (less its "
            "extension) | regex:PATTERN (its first group).",
        ),
    ),
    (
        "references",
        str | None,
        typer.Option(
            None,
            "--references",
            help="When files give a clip different references: strict (default: an error) | normalized (accept texts "
            "that normalize equal) | from:MODEL (that model's file gives them). Every change is reported.",
        ),
    ),
    (
        "fix_encoding",
        bool,
        typer.Option(
            False,
            "--fix-encoding",
            help="Repair mojibake (UTF-8 read as cp1252/latin-1) with ftfy (pip install 'asr-audit[repair]').",
        ),
    ),
    (
        "min_id_overlap",
        float | None,
        typer.Option(
            None,
            "--min-id-overlap",
            help="Refuse files whose clip ids share less than this share with the others' "
            "(default 0.2; 0 = never refuse).",
        ),
    ),
)
NAMES = tuple(name for name, _, _ in _FLAGS)


def reading_options(verb: Callable[..., Any]) -> Callable[..., Any]:
    """Give ``verb`` the reading flags; it receives them as one ``read`` keyword argument (a
    :class:`~asr_audit.corpus.reading.ReadOptions`, built and checked before the verb runs)."""
    signature = inspect.signature(verb)
    kept = [p for p in signature.parameters.values() if p.name != "read"]
    added = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=o, annotation=a) for n, a, o in _FLAGS]

    @functools.wraps(verb)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from asr_audit.corpus.reading import ReadOptions
        from asr_audit.options import Surface

        values = {n: kwargs.pop(n) for n in NAMES if n in kwargs}
        kwargs["read"] = ReadOptions.from_mapping(values, Surface.cli())
        return verb(*args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]  # read by typer
    wrapper.__annotations__ = {
        **{k: v for k, v in verb.__annotations__.items() if k != "read"},
        **{n: a for n, a, _ in _FLAGS},
    }
    return wrapper


def reference_normalizer(read: Any, normalizer: str | None = None, preset: str | None = None) -> Any:
    """The function references are compared by under ``--references normalized``: the run's
    normalizer (``whisper`` for a verb without one); ``None`` under the other policies."""
    if read.references != "normalized":
        return None
    from asr_audit.probes.predfiles.refdis_run import run_normalizer

    return run_normalizer(normalizer or "whisper", preset)


def load_set(
    preds: Path, dataset: str | None, read: Any, normalizer: str | None = None, preset: str | None = None
) -> Any:
    """:func:`~asr_audit.corpus.predfiles.load_predictions` with ``read``, saying each repair it made."""
    from asr_audit.corpus.predfiles import load_predictions

    pset = load_predictions(preds, dataset, read=read, normalize=reference_normalizer(read, normalizer, preset))
    say_repairs(pset)
    return pset


def say_repairs(pset: Any) -> None:
    """One stderr line per kind of repair the reading of ``pset`` made (count and examples)."""
    for repair in pset.repairs:
        err_console.print(f"repaired: {repair.describe()}", highlight=False, soft_wrap=True)
