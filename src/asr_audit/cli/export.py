"""``asr-audit export table|hub``: results as a Parquet/CSV table, and Hub ``.eval_results`` files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, examples, split_list
from asr_audit.errors import ConfigError, InputFileError
from asr_audit.outputs import check_output_dir, check_output_file

export_app = typer.Typer(
    help="Export results: a long table (Parquet/CSV) and Hugging Face Hub .eval_results files.",
    epilog=examples(
        (
            "asr-audit export table --results out/results.json --out table.parquet",
            "one row per model, corpus, probe, measure",
        ),
    ),
    no_args_is_help=True,
)
app.add_typer(export_app, name="export")


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise InputFileError(path, "no such file", "pass a results.json of `asr-audit run` or a probe's --json output")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputFileError(path, f"not JSON ({exc})", "pass the JSON file asr-audit wrote, unedited") from None


def _entries(results: list[Path], corpus: str | None) -> list[dict[str, Any]]:
    from asr_audit.report.export import result_entries

    entries = []
    for path in results:
        data = _read_json(path)
        if not isinstance(data, dict):
            raise InputFileError(path, "holds a JSON list, not a result object", "pass a results.json or a --json file")
        entries += result_entries(data, str(path), corpus)
    return entries


@export_app.command(
    "table",
    epilog="Examples:\n\n  asr-audit export table --results out/results.json --out results.parquet\n\n"
    "  asr-audit export table --results refdis.json --corpus voxpopuli --out refdis.csv",
)
def export_table(
    results: list[Path] = typer.Option(
        ..., "--results", help="results.json of a run, or a probe's --json (repeatable)."
    ),
    out: Path = typer.Option(..., "--out", help="Output file: .parquet or .csv."),
    corpus: str | None = typer.Option(
        None, "--corpus", help="Corpus name (a probe's --json names none; a run: pick one)."
    ),
) -> None:
    """One row per (model, corpus, probe, measure): value, interval, n, unit, normalizer and its version, seed."""
    from asr_audit.report.export import COLUMNS, measure_rows, parquet_bytes
    from asr_audit.report.tables import to_csv, write_text

    suffix = out.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise ConfigError(f"--out {out} must end in .parquet or .csv; fix: e.g. --out results.parquet")
    check_output_file(out, "--out")
    rows = measure_rows(_entries(results, corpus))
    if not rows:
        raise ConfigError(
            "the results hold no per-model measure to export (probes exported: refdis, transcribe, switch_rate, "
            "gate, longform); fix: pass a results.json or --json of one of them"
        )
    if suffix == ".csv":
        write_text(out, to_csv(rows, COLUMNS))
    else:
        try:
            out.write_bytes(parquet_bytes(rows))
        except OSError as exc:
            raise InputFileError(
                out, f"cannot write ({exc.strerror or exc})", "choose a writable output path"
            ) from None
    console.print(f"wrote {out} ({len(rows)} rows)")


@export_app.command(
    "hub",
    epilog="Examples:\n\n  asr-audit export hub --results refdis.json --dataset-id hf-audio/esb-datasets-test-only-sorted "
    "--task-id voxpopuli --split test --out model-cards/",
)
def export_hub(
    results: list[Path] = typer.Option(
        ..., "--results", help="results.json of a run, or a probe's --json (repeatable)."
    ),
    dataset_id: str = typer.Option(..., "--dataset-id", help="The benchmark's Hub dataset id."),
    task_id: str = typer.Option(..., "--task-id", help="Task id in the benchmark (e.g. its config: voxpopuli)."),
    split: str = typer.Option("test", "--split", help="Dataset split, written in the notes."),
    out: Path = typer.Option(..., "--out", help="Folder: <model>/.eval_results/<task_id>.yaml per model."),
    corpus: str | None = typer.Option(None, "--corpus", help="Corpus name in the results (default: the only one)."),
    models: str | None = typer.Option(None, "--models", help="Models to export (default: every model)."),
    measures: str = typer.Option("wer", "--measures", help="wer, wer_corrected, accept_ref, wer_inflation."),
    dataset_revision: str | None = typer.Option(None, "--dataset-revision", help="Git SHA of the benchmark dataset."),
    date: str | None = typer.Option(
        None, "--date", help="ISO-8601 date of the evaluation (default: the Hub's commit time)."
    ),
    source_url: str | None = typer.Option(None, "--source-url", help="Link to the evaluation's source."),
    source_name: str | None = typer.Option(
        None, "--source-name", help="Display name of the source (needs --source-url)."
    ),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out folder."),
) -> None:
    """Hugging Face Hub .eval_results/*.yaml for each model's card: WER (and audit measures) with the normalizer."""
    from asr_audit import __version__
    from asr_audit.outputs import mark_output_dir
    from asr_audit.report.export import eval_results_yaml, measure_rows
    from asr_audit.report.tables import write_text
    from asr_audit.store.export import name_token

    rows = measure_rows(_entries(results, corpus))
    corpora = sorted({r["corpus"] for r in rows})
    if corpus is None and len(corpora) > 1:
        raise ConfigError(f"the results hold several corpora ({', '.join(corpora)}); fix: pick one with --corpus")
    if not corpora:
        raise ConfigError("the results hold no per-model WER; fix: pass refdis, transcribe or longform results")
    name = corpus or corpora[0]
    wanted = split_list(models, "--models") or sorted({r["model"] for r in rows if r["corpus"] == name})
    check_output_dir(out, "--out", force)
    mark_output_dir(out)
    folders: dict[str, str] = {}
    for model in wanted:
        folder = name_token(model)
        if folders.setdefault(folder, model) != model:
            raise ConfigError(
                f"models {folders[folder]!r} and {model!r} share the folder name {folder!r}; fix: export them one at a time"
            )
        text = eval_results_yaml(
            rows,
            model,
            name,
            dataset_id=dataset_id,
            task_id=task_id,
            split=split,
            measures=split_list(measures, "--measures") or ["wer"],
            dataset_revision=dataset_revision,
            date=date,
            source_url=source_url,
            source_name=source_name,
            version=__version__,
        )
        path = write_text(out / folder / ".eval_results" / f"{name_token(task_id)}.yaml", text)
        console.print(f"wrote {path}")
