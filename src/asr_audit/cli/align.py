"""The ``align`` verb: forced-align a corpus's reference transcripts -> word timings JSONL."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from pathlib import Path

import typer
from rich.text import Text

from asr_audit.cli import app, err_console, examples
from asr_audit.cli.common import CORPUS_HELP, STORE_HELP, load_clips, store_session
from asr_audit.errors import InputFileError
from asr_audit.outputs import check_output_file


@app.command(
    epilog=examples(("asr-audit align -c dev.jsonl -o timings.jsonl", "PocketSphinx word timings for every reference"))
)
def align(
    corpus: str = typer.Option(..., "--corpus", "-c", help=CORPUS_HELP),
    aligner: str = typer.Option("sphinx", "--aligner", "-a", help="sphinx (default, offline) or whisper."),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="Aligner model: en-us for sphinx; a PyTorch Whisper spec for whisper (default whisper-tiny.en-pt).",
    ),
    out: Path | None = typer.Option(None, "--out", "-o", help="JSONL file for the timings (default: stdout)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips of the corpus."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Read and write timings in the result store."),
) -> None:
    """Word timings for every clip's reference transcript, one JSON object per clip.

    Each line holds clip_id, transcript, aligner (name, model, version), duration, words
    (word, start, end, score: one per whitespace token of the transcript) and error (null, or
    why the clip could not be aligned; the run goes on past such clips).
    """
    from asr_audit.align import get_aligner
    from asr_audit.align.run import align_corpus

    check_output_file(out, "--out")  # before any clip is aligned
    corp = load_clips(corpus, limit)
    engine = get_aligner(aligner, model)
    n_ok = n_cached = 0
    failures: list[tuple[str, str]] = []
    with store_session(store) if cache else nullcontext() as st:
        try:
            if out is not None:
                out.parent.mkdir(parents=True, exist_ok=True)
            sink = open(out, "w", encoding="utf-8") if out is not None else sys.stdout
        except OSError as exc:
            raise InputFileError(
                out, f"cannot write ({exc.strerror or exc})", "choose a writable output path"
            ) from None
        try:
            for result in align_corpus(engine, corp, st):
                sink.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
                if result.ok:
                    n_ok += 1
                    n_cached += result.cached
                else:
                    failures.append((result.clip_id, result.error or ""))
        except OSError as exc:  # a full disk while writing: the store keeps what was aligned
            raise InputFileError(
                out if out is not None else "stdout",
                f"cannot write ({exc.strerror or exc})",
                "free disk space and rerun (timings in the store are reused)",
            ) from None
        finally:
            try:
                sink.close() if out is not None else sink.flush()
            except OSError as exc:  # the last buffer did not fit on the disk
                raise InputFileError(
                    out if out is not None else "stdout",
                    f"cannot write ({exc.strerror or exc})",
                    "free disk space and rerun (timings in the store are reused)",
                ) from None
    where = f" -> {out}" if out is not None else ""
    err_console.print(
        f"aligned {n_ok}/{len(corp)} clip(s) with {engine.identity().spec} ({n_cached} from the store){where}",
        highlight=False,
    )
    if failures:
        err_console.print(Text(f"{len(failures)} clip(s) could not be aligned:", "yellow"), highlight=False)
        for clip_id, reason in failures:
            err_console.print(f"  {clip_id}: {reason}", highlight=False, soft_wrap=True)
