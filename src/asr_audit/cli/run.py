"""``asr-audit run`` (an experiment spec end to end) and ``asr-audit merge`` (join shard stores)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from asr_audit.cli import app, console, examples
from asr_audit.errors import AuditError, ConfigError
from asr_audit.store.counts import describe


@app.command(
    epilog=examples(
        ("asr-audit run audit.toml", "transcribe, probe and write audit-out/report.html (resumes from the store)"),
        ("asr-audit run audit.toml --shard 0/4 --store shard0.sqlite", "one quarter of the transcription plan"),
        ("asr-audit run audit.toml --executor ray --address ray://head:10001", "the same audit on a Ray cluster"),
    )
)
def run(
    spec_path: Path = typer.Argument(..., metavar="SPEC.toml", help="Experiment spec (TOML)."),
    shard: str | None = typer.Option(None, "--shard", help="Run shard i/n of the transcription plan only."),
    store: Path | None = typer.Option(None, "--store", help="SQLite store (default: the spec's, else the user cache)."),
    out: Path | None = typer.Option(None, "--out", help="Output folder (default: the spec's 'output')."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress display."),
    force: bool = typer.Option(
        False, "--force", help="Write into a non-empty output folder that is not asr-audit output."
    ),
    executor: str | None = typer.Option(
        None, "--executor", help="Where transcription runs: local or ray (default: the spec's 'executor', else local)."
    ),
    address: str | None = typer.Option(
        None,
        "--address",
        help="Ray cluster to join with --executor ray: auto (a `ray start` cluster on this machine) or "
        "ray://<head>:10001 (default: the spec's 'ray_address', else start Ray on this machine).",
    ),
) -> None:
    """Plan, transcribe (cached, resumable), probe and write the HTML report for a spec."""
    from asr_audit.runner.run import run_spec_file

    outcome = run_spec_file(
        spec_path,
        out=out,
        shard=shard,
        store=str(store) if store else None,
        executor=executor,
        address=address,
        show_progress=not no_progress,
        force=force,
        log=console.print,
        out_name="--out",
    )
    if outcome.report is not None:
        console.print(
            f"{outcome.n_computed} transcriptions computed, {outcome.n_cached} from the store; "
            f"{len(outcome.results['failures'])} failure(s)"
        )
        console.print(Text.assemble(("report:", "bold"), f" {outcome.report.resolve()}"))
    if outcome.decodes:
        console.print(describe(outcome.decodes), highlight=False)
    empty = [
        f"{m.get('model')} on {entry.get('corpus')}"
        for entry in outcome.results.get("probes", [])
        if entry.get("probe") == "transcribe"
        for m in entry.get("result", {}).get("models", [])
        if m.get("n_clips") == 0 and m.get("n_failed")
    ]
    if empty:  # as `transcribe`: a model none of whose clips was transcribed is an error, not a result
        raise AuditError(
            f"{spec_path}: every clip failed for {', '.join(empty)} (the report lists the failures); "
            "fix: see the first failure reasons in the report, then rerun (stored transcripts are reused)"
        )
    if outcome.config_errors:
        more = len(outcome.config_errors) - 1
        raise ConfigError(
            f"{spec_path}: {outcome.config_errors[0]}"
            + (f" (and {more} more probe configuration error(s), listed in the report)" if more else "")
        )


@app.command(
    epilog=examples(
        (
            "asr-audit merge shard0.sqlite shard1.sqlite --into store.sqlite",
            "join shard stores, then rerun without --shard",
        )
    )
)
def merge(
    into: Path = typer.Option(..., "--into", help="Target store (created if absent)."),
    sources: list[Path] = typer.Argument(..., help="Shard stores to merge into the target."),
) -> None:
    """Join shard stores (from `asr-audit run --shard i/n`) into one store."""
    from asr_audit.store.merge import merge_stores

    for r in merge_stores(into, sources):
        console.print(f"{r.source}: added " + ", ".join(f"{n} {t}" for t, n in r.added.items()))
