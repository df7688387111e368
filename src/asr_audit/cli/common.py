"""The skeleton the corpus verbs share (``transcribe``, ``align``, ``masked``, ``lift``, ``continue``,
``battery``): parse model specs, load the corpus, open the store, load backends, write JSON.

Each helper is one step a verb used to spell out itself; the verbs stay thin: parse flags, call
these and one library function, print a table from :mod:`asr_audit.report.tables`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from asr_audit.cli import err_console
from asr_audit.models.base import model_specs as model_specs  # re-exported: the verbs parse --model with it
from asr_audit.probes.core.flags import CORPUS, STORE

if TYPE_CHECKING:
    from asr_audit.corpus.clips import Corpus
    from asr_audit.models.base import Backend, DecodeOptions
    from asr_audit.store.sqlite import Store

CORPUS_HELP, STORE_HELP = CORPUS.help, STORE.help  # the flags' one help text, for the verbs not built from flags


def load_clips(corpus: str, limit: int | None = None) -> Corpus:
    """The corpus named by ``--corpus``, cut to its first ``--limit`` clips."""
    from asr_audit.corpus.spec import load_corpus

    return load_corpus(corpus).limit(limit)


@contextmanager
def store_session(path: str | Path | None) -> Iterator[Store]:
    """The result store at ``--store`` (default location when ``None``), closed on exit."""
    from asr_audit.store.sqlite import open_store

    store = open_store(path)
    try:
        yield store
    finally:
        store.close()


def load_backends(specs: Sequence[str], options: DecodeOptions | None = None) -> list[Backend]:
    """One loaded backend per spec, in order."""
    from asr_audit.models.base import load_backend

    return [load_backend(s, options) for s in specs]


def write_json(path: Path | None, data: Any, out: Console = err_console) -> None:
    """Write ``data`` as the project's JSON (undefined values as null) to ``path`` and say so on ``out``."""
    if path is None:
        return
    from asr_audit.report.tables import to_json, write_text

    out.print(f"wrote {write_text(path, to_json(data))}", highlight=False)


def truth_step(folder: Path) -> Any:
    """The verification step of a calibration folder's planted truth
    (:func:`asr_audit.calib.score.truth_verify`), the ``verify_truth`` the verbs hand their probes."""
    # imported on use: calib.score and its sentence generator cost a warm refdis run a fifth of its time
    from asr_audit.calib.score import truth_verify

    return truth_verify(folder)


FAILURES_SHOWN = 10  # failures listed one per line; the rest are summarized by reason


def print_failures(failures: Sequence[dict[str, str]], what: str = "clip(s) gave no items") -> None:
    """List the clips a verb skipped, with their reasons, on stderr: the first
    :data:`FAILURES_SHOWN` one per line, then the count of the rest by reason (never 100,000 lines)."""
    if not failures:
        return
    err_console.print(Text(f"{len(failures)} {what}:", "yellow"), highlight=False)
    for f in failures[:FAILURES_SHOWN]:
        err_console.print(f"  {f['clip_id']}: {f['reason']}", highlight=False, soft_wrap=True)
    rest = failures[FAILURES_SHOWN:]
    if rest:
        counts: dict[str, int] = {}
        for f in rest:
            key = _reason_kind(f["reason"])
            counts[key] = counts.get(key, 0) + 1
        err_console.print(f"  ... and {len(rest)} more:", highlight=False)
        for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:FAILURES_SHOWN]:
            err_console.print(f"    {n} x {reason}", highlight=False, soft_wrap=True)
        if len(counts) > FAILURES_SHOWN:
            err_console.print(f"    ... {len(counts) - FAILURES_SHOWN} other reason(s)", highlight=False)


def _reason_kind(reason: str) -> str:
    """A failure reason with its clip-specific paths and numbers blanked, so alike reasons count together."""
    import re

    return re.sub(r"\S*/\S*|\d+(\.\d+)?", "…", reason)
