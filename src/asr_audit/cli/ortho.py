"""Verb ``switch-rate``: the orthographic switch-rate probe over a folder of prediction files.

The verb parses, runs the switch-rate probe (:data:`~asr_audit.probes.predfiles.ortho.SWITCH_RATE`, the same
object ``[probes.switch_rate]`` and the API run) once, and writes through the
renderers of :mod:`asr_audit.report.switch_rate` (the same table, CSV and JSON as the report).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, examples, split_list
from asr_audit.cli.reading import load_set, reading_options
from asr_audit.options import Surface
from asr_audit.outputs import check_output_file
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.probes.predfiles.ortho import DEFAULT_MIN_PER_ARM, SWITCH_RATE
from asr_audit.report.switch_rate import switch_rate_csv, switch_rate_json, switch_rate_table
from asr_audit.report.tables import write_text


@app.command(
    "switch-rate",
    epilog=examples(
        ("asr-audit switch-rate --preds preds/", "switch rate per model and convention family"),
        ("asr-audit switch-rate --preds preds/ --families honorific --csv switch.csv", "one family, as CSV"),
    ),
)
@reading_options
def switch_rate_cmd(
    preds: Path = typer.Option(..., "--preds", help="Folder (or file) of per-model prediction files."),
    families: str | None = typer.Option(
        None,
        "--families",
        help="Comma-separated families and/or groups (English: honorific, spacing, modern, symbol; "
        "es/fr/de: honorific, abbreviation, symbol); default all of the language's.",
    ),
    language: str = typer.Option(
        "en",
        "--language",
        help="Language of the references (primary subtag decides): whose convention families are scored "
        "(en, es, fr, de; percent only: it, nl, pl, pt).",
    ),
    min_per_arm: int = typer.Option(
        DEFAULT_MIN_PER_ARM, "--min-per-arm", help="Eligible items an arm needs for the switch rate to be defined."
    ),
    models: str | None = typer.Option(None, "--models", help="Models to score (default: every file)."),
    denominator: str = typer.Option(
        "eligible",
        "--denominator",
        help="eligible: items where the model wrote either arm; paper: also those where it wrote neither "
        "(the paper's code).",
    ),
    dataset: str | None = typer.Option(None, "--dataset", help="Pick one dataset in a bucketed folder."),
    show_empty: bool = typer.Option(False, "--show-empty", help="Also list families with no reference items."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full result (params, rows, items) as JSON."),
    csv_out: Path | None = typer.Option(None, "--csv", help="Write the per-model, per-family table as CSV."),
    read: Any = None,
) -> None:
    """Orthographic switch rate: does a model write the reference's spelling of a sound-alike (Mr / Mister)?"""
    # fails on a bad family name, --min-per-arm or --denominator before reading any file
    options = SWITCH_RATE.options_from(
        {
            "families": split_list(families, "--families"),
            "min_per_arm": min_per_arm,
            "denominator": denominator,
            "language": language,
            "models": split_list(models, "--models"),
        },
        Surface.cli(),
    )
    check_output_file(json_out, "--json")  # outputs checked before the work
    check_output_file(csv_out, "--csv")
    inputs = ProbeInputs(corpus=str(preds), predictions=load_set(preds, dataset, read))
    SWITCH_RATE.check(options, inputs, Surface.cli())
    result = SWITCH_RATE.run(inputs, options)
    assert result is not None  # the probe applies to every prediction set
    data = SWITCH_RATE.to_dict(result)
    console.print(switch_rate_table(data, show_empty))
    if json_out:
        console.print(f"wrote {write_text(json_out, switch_rate_json(data))}")
    if csv_out:
        console.print(f"wrote {write_text(csv_out, switch_rate_csv(data))}")
