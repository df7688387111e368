"""``asr-audit export table|hub``: results as a Parquet/CSV table, and Hub ``.eval_results`` files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, examples, split_list
from asr_audit.errors import ConfigError, InputFileError
from asr_audit.outputs import check_output_dir, check_output_file, write_atomic

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


def _measure_rows(results: list[Path], corpus: str | None) -> list[dict[str, Any]]:
    """The measure rows of every results file; a file of another layout is a one-line error naming it."""
    from asr_audit.report.export import measure_rows, result_entries

    rows: list[dict[str, Any]] = []
    for path in results:
        data = _read_json(path)
        if not isinstance(data, dict):
            raise InputFileError(path, "holds a JSON list, not a result object", "pass a results.json or a --json file")
        try:
            rows += measure_rows(result_entries(data, str(path), corpus))
        except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
            raise InputFileError(
                path,
                f"not the layout asr-audit writes ({type(exc).__name__}: {' '.join(str(exc).split())[:80]})",
                "pass a results.json or a probe's --json file, unedited",
            ) from None
    return sorted(rows, key=lambda r: (r["model"], r["corpus"], r["probe"], r["measure"]))


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
    from asr_audit.report.export import COLUMNS, parquet_bytes
    from asr_audit.report.tables import to_csv

    suffix = out.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise ConfigError(f"--out {out} must end in .parquet or .csv; fix: e.g. --out results.parquet")
    check_output_file(out, "--out", results)
    rows = _measure_rows(results, corpus)
    if not rows:
        raise ConfigError(
            "the results hold no per-model measure to export (probes exported: refdis, transcribe, switch_rate, "
            "gate, longform); fix: pass a results.json or --json of one of them"
        )
    write_atomic(out, to_csv(rows, COLUMNS) if suffix == ".csv" else parquet_bytes(rows))
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
    from asr_audit.report.export import eval_results_yaml

    rows = _measure_rows(results, corpus)
    corpora = sorted({r["corpus"] for r in rows})
    if corpus is None and len(corpora) > 1:
        raise ConfigError(f"the results hold several corpora ({', '.join(corpora)}); fix: pick one with --corpus")
    if not corpora:
        raise ConfigError("the results hold no per-model WER; fix: pass refdis, transcribe or longform results")
    if not dataset_id.strip():
        raise ConfigError("--dataset-id is empty; fix: give the benchmark's Hub dataset id, e.g. hf-audio/esb-datasets")
    if date is not None:
        _check_date(date)
    name = corpus or corpora[0]
    wanted = split_list(models, "--models") or sorted({r["model"] for r in rows if r["corpus"] == name})
    task_file = f"{_safe_token(task_id, '--task-id')}.yaml"
    # everything is checked and rendered before the first write: a bad model leaves no partial output
    cards: dict[str, str] = {}
    folded: dict[str, str] = {}
    for model in wanted:
        folder = _safe_token(model, "model")
        if folded.setdefault(folder.casefold(), model) != model:
            raise ConfigError(
                f"models {folded[folder.casefold()]!r} and {model!r} share the folder name {folder!r}; "
                "fix: export them one at a time"
            )
        cards[folder] = eval_results_yaml(
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
    check_output_dir(out, "--out", force)
    mark_output_dir(out)
    for path in _write_cards(out, cards, task_file):
        console.print(f"wrote {path}")


def _safe_token(text: str, what: str) -> str:
    """``text`` as a folder or file name that stays inside the output folder (never ``.`` or ``..``)."""
    from asr_audit.store.export import name_token

    token = name_token(text)
    if not token.strip("."):
        raise ConfigError(
            f"{what} {text!r} makes the file name {token!r}, which would leave the --out folder; "
            "fix: rename it (in the prediction file's name or the results)"
        )
    return token


def _check_date(date: str) -> None:
    import datetime as dt

    try:
        (dt.date if len(date.strip()) == 10 else dt.datetime).fromisoformat(date.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(
            f"--date {date!r} is not an ISO-8601 date; fix: e.g. --date 2025-06-01 or 2025-06-01T12:00:00Z"
        ) from None


def _write_cards(out: Path, cards: dict[str, str], task_file: str) -> list[Path]:
    """Write ``<out>/<folder>/.eval_results/<task_file>`` for every card: all into a temporary folder
    in ``out`` first, then each renamed into place (a full disk leaves no half-written card). Every
    path is checked to resolve inside ``out``."""
    import os
    import shutil
    import tempfile

    from asr_audit.outputs import write_atomic

    root = out.resolve()
    targets = {folder: out / folder / ".eval_results" / task_file for folder in cards}
    for target in targets.values():
        if not target.resolve().is_relative_to(root):
            raise ConfigError(f"{target} lies outside --out {out}; fix: rename the model or the task id")
    try:
        staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out))
    except OSError as exc:
        raise InputFileError(out, f"cannot write ({exc.strerror or exc})", "choose a writable --out folder") from None
    try:
        for folder, text in cards.items():
            write_atomic(staging / folder / task_file, text, "choose a writable --out folder")
        written = []
        for folder, target in targets.items():
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / folder / task_file, target)
            except OSError as exc:
                raise InputFileError(
                    target, f"cannot write ({exc.strerror or exc})", "choose a writable --out folder"
                ) from None
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
