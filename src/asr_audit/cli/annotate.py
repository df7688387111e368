"""The ``annotate`` verb: a local labelling page where people verify mined edits by listening."""

from __future__ import annotations

import getpass
from pathlib import Path

import typer

from asr_audit.cli import app, console, err_console, examples
from asr_audit.cli.common import STORE_HELP, store_session


def _default_annotator() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "annotator"


@app.command(
    epilog=examples(
        (
            "asr-audit annotate --edits refdis.json --audio-root audio/ --sample 120 --labels labels.sqlite",
            "label a stratified sample of 120 edits at http://127.0.0.1:PORT/",
        ),
        (
            "asr-audit refdis --preds preds/ --panel a,b,c --labels labels.sqlite",
            "the miner's precision and verified accept-ref from the labels",
        ),
    )
)
def annotate(
    edits: Path = typer.Option(..., "--edits", help="refdis --json output, or a run's results.json."),
    audio_root: Path | None = typer.Option(
        None, "--audio-root", help="Folder of the clips' audio (clip id = path under it, extension optional)."
    ),
    labels: Path = typer.Option(..., "--labels", help="SQLite file of the labels (created; reopened to resume)."),
    sample: int | None = typer.Option(
        None, "--sample", help="Label a stratified sample of N edits (by kind and position); default: every edit."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample and of the blind order."),
    annotator: str | None = typer.Option(None, "--annotator", help="Who labels (default: the login name)."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (default: a free one)."),
    corpus: str | None = typer.Option(None, "--corpus", help="The corpus whose refdis result a results.json holds."),
    aligner: str = typer.Option("sphinx", "--aligner", help="Aligner of the word timings: sphinx | whisper."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """Serve a page on 127.0.0.1 where a person labels each sampled edit by listening to it."""
    from asr_audit.align import get_aligner
    from asr_audit.annotate.server import make_server, prepare
    from asr_audit.store.labels import LabelStore

    who = annotator if annotator is not None else _default_annotator()
    engine = get_aligner(aligner)
    with store_session(store) as st, LabelStore(labels) as db:
        session = prepare(
            edits,
            audio_root,
            db,
            sample=sample,
            seed=seed,
            annotator=who,
            corpus=corpus,
            aligner=engine,
            store=st,
            progress=lambda line: err_console.print(line, highlight=False, soft_wrap=True),
        )
        server = make_server(session, port)
        state = session.state()
        console.print(
            f"labelling {state['n']} edits ({state['done']} done) as {session.annotator}: "
            f"http://127.0.0.1:{server.server_port}/  (labels: {labels}; Ctrl-C stops, rerun to resume)",
            highlight=False,
            soft_wrap=True,
        )
        try:
            server.serve_forever()
        finally:
            server.server_close()
