"""Verbs that run models: ``transcribe`` and ``models``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from asr_audit.cli import app, console, err_console, examples
from asr_audit.cli.common import CORPUS_HELP, STORE_HELP, load_clips, model_specs, print_failures, store_session
from asr_audit.errors import AuditError
from asr_audit.outputs import check_output_dir

# the module that shows an extra is installed
EXTRA_MODULES = {
    "audio": "soundfile",
    "sphinx": "pocketsphinx",
    "http": "httpx",
    "ct2": "ctranslate2",
    "torch": "torch",
    "hf-datasets": "datasets",
    "parquet": "pyarrow",
    "bundled": "ctranslate2",
}


class _RateColumn(ProgressColumn):
    """clips/s and RTFx (audio seconds transcribed per compute second, this run)."""

    def render(self, task: Task) -> Text:
        rate = task.finished_speed or task.speed or (task.completed / task.elapsed if task.elapsed else None)
        speed = f"{rate:.1f} clips/s" if rate else "- clips/s"
        audio, compute = task.fields.get("audio", 0.0), task.fields.get("compute", 0.0)
        rtfx = f"RTFx {audio / compute:.1f}" if compute > 0 else "RTFx -"
        return Text(f"{speed}  {rtfx}", style="progress.data.speed")


@app.command(
    epilog=examples(
        (
            "asr-audit transcribe -m whisper-tiny.en,sphinx:en-us -c dev.jsonl -o preds/",
            "one prediction file per model, cached in the store",
        ),
    )
)
def transcribe(
    model: str = typer.Option(..., "--model", "-m", help="Model spec(s), comma-separated (see `asr-audit models`)."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=CORPUS_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the prediction files (one per model)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    batch_size: int = typer.Option(
        8, "--batch-size", min=1, help="Clips per backend call, per forward pass (length-sorted) and per store commit."
    ),
    device: str | None = typer.Option(
        None,
        "--device",
        help="cpu | cuda | cuda:N | auto for the PyTorch and CTranslate2 models (default: $ASR_AUDIT_DEVICE, else auto).",
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips of the corpus."),
    language: str = typer.Option(
        "en", "--language", help="Decode language given to the model ('none' to let it detect)."
    ),
    normalizer: str = typer.Option(
        "whisper",
        "--normalizer",
        help="Text normalizer for the WER column: whisper (OpenAI Whisper's) | whisper-normalizer-0.1.15 | oal | basic | "
        "whisper-basic | basic-es | basic-fr | basic-de. Under a non-English --language an English-only one becomes "
        "basic-es / basic-fr / basic-de (or basic), and Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar are "
        "scored by character (basic-chars: CER).",
    ),
    timings: bool = typer.Option(
        True,
        "--timings/--no-timings",
        help="Write per-clip compute seconds ('time'); without it files are byte-reproducible.",
    ),
) -> None:
    """Transcribe a corpus with one or more models, through the cache, into leaderboard prediction files.

    Writes MODEL_<model>_DATASET_<corpus>_<split>.jsonl per model into --out. Results already in
    the store are reused, so an interrupted run resumes where it stopped. Clips with unusable
    audio are skipped and listed with their reason at the end (the exit code stays 0); a model
    for which every clip failed is an error (exit 2).
    """
    from asr_audit.models.base import DecodeOptions, RuntimeOptions, load_backend
    from asr_audit.store.export import prediction_file_name, write_predictions
    from asr_audit.store.transcribe import corpus_wer, transcribe_corpus
    from asr_audit.text.languages import scoring_normalizer
    from asr_audit.text.normalize import get_normalizer

    get_normalizer(normalizer)  # fail on an unknown name before any work
    if language.lower() != "none":
        normalizer = scoring_normalizer(normalizer, language)
    info = get_normalizer(normalizer).describe()
    wer_label = str(info.get("label", info["name"]))
    specs = model_specs(model)  # fails on a bad spec before any work
    check_output_dir(out, "--out", force=True)  # a file or a folder under a file fails before any work
    options = DecodeOptions(language=None if language.lower() == "none" else language)
    runtime = RuntimeOptions(device=device, batch_size=batch_size)  # a bad --device fails before any work
    corp = load_clips(corpus, limit)
    results = []
    refs = {c.id: c.reference for c in corp.clips}
    with store_session(store) as st:
        run_id = st.start_run({"argv": sys.argv[1:], "models": specs, "corpus": corp.source, "n_clips": len(corp)})
        for spec in specs:
            backend = load_backend(spec, options, runtime)
            columns = (
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                _RateColumn(),
                TimeElapsedColumn(),
            )
            with Progress(*columns, console=err_console, transient=False) as bar:
                task = bar.add_task(spec, total=len(corp), audio=0.0, compute=0.0)

                def advance(n: int, audio: float, compute: float, _task=task, _bar=bar) -> None:  # noqa: ANN001
                    fields = _bar.tasks[_task].fields
                    _bar.update(_task, advance=n, audio=fields["audio"] + audio, compute=fields["compute"] + compute)

                outcome = transcribe_corpus(backend, corp, st, batch_size=batch_size, progress=advance)
            close = getattr(backend, "close", None)
            if callable(close):
                close()
            path = None
            if outcome.records:
                path = write_predictions(
                    out / prediction_file_name(spec, corp.name, corp.split), outcome.records, include_time=timings
                )
            st.record_errors(
                run_id, outcome.backend_key, corp.source, [(f.clip_id, f.reason) for f in outcome.failures]
            )
            missing = [refs[f.clip_id] for f in outcome.failures if f.clip_id in refs]  # count as deletions
            results.append((outcome, corpus_wer(outcome.records, normalizer, missing), path))
        st.finish_run(run_id, {"failed_clips": sum(len(o.failures) for o, _, _ in results)})
    _summary(results, len(corp), wer_label, "CER" if info.get("unit") == "character" else "WER")
    empty = [o for o, _, _ in results if not o.records]
    if empty:
        first = empty[0].failures[0].reason if empty[0].failures else "no clip"
        raise AuditError(
            f"{', '.join(o.spec for o in empty)}: every one of the {len(corp)} clip(s) of {corp.source} failed, "
            f"no prediction file written (first: {first}); fix: see the failures above, then rerun "
            "(transcripts already stored are reused)"
        )


def _summary(results: list, n_clips: int, wer_label: str = "", metric: str = "WER") -> None:
    from asr_audit.report.tables import transcribe_table
    from asr_audit.store.transcribe import coverage

    rows = [
        {
            "model": o.spec,
            "ok": len(o.records),
            "cached": o.n_cached,
            "computed": o.n_computed,
            "failed": len(o.failures),
            "wer": wer,
            "coverage": coverage(o),
            "rtfx": o.rtfx,
            "file": path,
        }
        for o, wer, path in results
    ]
    console.print(transcribe_table(rows, n_clips, wer_label, metric))
    failures = [{"clip_id": f"{o.spec}  {f.clip_id}", "reason": f.reason} for o, _, _ in results for f in o.failures]
    print_failures(failures, "clip(s) failed and were skipped")


@app.command(epilog=examples(("asr-audit models", "every backend spec and bundled model with its capabilities")))
def models() -> None:
    """List the registered backends and bundled models, with their capabilities."""
    from asr_audit.models.base import available_backends

    table = Table(title="model backends")
    for col in ("spec", "capabilities", "extra", "installed", "description"):
        table.add_column(col)
    for kind in available_backends():
        form = kind.name if kind.bundled else f"{kind.name}:<arg>"
        module = EXTRA_MODULES.get(kind.extra or "")
        installed = "yes" if module is None or importlib.util.find_spec(module) is not None else "no"
        table.add_row(form, ", ".join(sorted(kind.capabilities)), kind.extra or "-", installed, kind.description)
    console.print(table)
