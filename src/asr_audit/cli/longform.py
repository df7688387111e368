"""``asr-audit longform``: chunk predictions concatenated per recording, WER and refdis on the recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, split_list
from asr_audit.cli.reading import load_set, reading_options
from asr_audit.errors import ConfigError
from asr_audit.outputs import check_output_file


@app.command(
    epilog="Examples:\n\n"
    "  asr-audit longform --preds earnings22-chunks/ --panel a,b,c,d "
    "--group-pattern '(?P<group>.+)_chunk_(?P<index>\\d+)' --json longform.json\n\n"
    "  asr-audit longform --preds preds/ --panel a,b,c,d --group-file chunks.csv --csv longform.csv",
)
@reading_options
def longform(
    preds: Path = typer.Option(..., "--preds", help="Folder (or file) of per-model prediction files of the chunks."),
    panel: str = typer.Option(..., "--panel", help="Comma-separated panel models (consensus miners)."),
    group_pattern: str | None = typer.Option(
        None,
        "--group-pattern",
        help="Regex over chunk ids: (?P<group>...) the recording, optional (?P<index>...) / (?P<start>...).",
    ),
    group_file: Path | None = typer.Option(
        None, "--group-file", help="File of chunk id + recording columns (optional index / start)."
    ),
    preset: str = typer.Option(
        "paper", "--preset", help="paper (default here: interior edits, where chunk boundaries were) | anchor."
    ),
    loo: bool = typer.Option(True, "--loo/--no-loo", help="Score panel members leave-one-out."),
    min_panel: int | None = typer.Option(None, "--min-panel"),
    models: str | None = typer.Option(None, "--models", help="Models to score (default: every file)."),
    normalizer: str = typer.Option("whisper", "--normalizer", help="Text normalizer (as for refdis)."),
    language: str = typer.Option("en", "--language", help="Language of the corpus (as for refdis)."),
    merge_compounds: bool = typer.Option(
        False, "--merge-compounds/--no-merge-compounds", help="Count WER as the Open ASR Leaderboard does."
    ),
    dataset: str | None = typer.Option(None, "--dataset", help="Pick one dataset in a bucketed folder."),
    seed: int = typer.Option(0, "--seed", help="Seed for the bootstrap intervals (recordings resampled)."),
    resamples: int = typer.Option(1000, "--resamples", help="Bootstrap resamples."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the result (recordings, chunks, edits) as JSON."),
    csv_out: Path | None = typer.Option(None, "--csv", help="Write the per-model table as CSV."),
    read: Any = None,
) -> None:
    """Score long recordings evaluated as chunks: concatenate each recording's chunks in order,
    then WER, WER inflation and accept-ref on the recording; edits keep their chunk and time."""
    from asr_audit.corpus.groups import resolve_groups
    from asr_audit.options import Surface
    from asr_audit.probes.predfiles.longform import run_longform
    from asr_audit.probes.predfiles.refdis_options import RefdisOptions
    from asr_audit.report.tables import refdis_csv, refdis_table, to_json, write_text

    if group_pattern is None and group_file is None:
        raise ConfigError("longform needs --group-pattern REGEX or --group-file FILE to find each chunk's recording")
    check_output_file(json_out, "--json", (preds, group_file))
    check_output_file(csv_out, "--csv", (preds, group_file))
    options = RefdisOptions.from_mapping(
        {
            "preset": preset,
            "min_panel": min_panel,
            "loo": loo,
            "resamples": resamples,
            "merge_compounds": merge_compounds,
            "language": language,
        },
        Surface.cli(),
    )
    pset = load_set(preds, dataset, read, options.normalizer_for(normalizer), options.mining.preset)
    groups, grouping = resolve_groups(pset.clip_ids, pattern=group_pattern, path=group_file, flag="--group")
    if groups is None:  # unreachable: one of the two was given (checked above)
        raise ConfigError("longform needs --group-pattern or --group-file")
    result = run_longform(
        pset,
        groups,
        split_list(panel, "--panel") or [],
        options.mining,
        grouping=grouping,
        normalizer=options.normalizer_for(normalizer),
        models=split_list(models, "--models"),
        seed=seed,
        n_resamples=options.resamples,
        text2num=options.text2num,
        merge_compounds=options.merge_compounds,
        language=options.language,
    )
    data = result.to_dict()
    console.print(f"{data['n_recordings']} recordings from {data['n_chunks']} chunks ({grouping})")
    refdis = result.refdis.to_dict()
    console.print(refdis_table(refdis))
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json(data))}")
    if csv_out:
        console.print(f"wrote {write_text(csv_out, refdis_csv(refdis))}")
