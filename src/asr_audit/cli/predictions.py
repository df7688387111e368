"""Verbs over prediction files: ``refdis`` and ``coverage``."""

from __future__ import annotations

from pathlib import Path

import typer

from asr_audit.cli import app, console, err_console, examples, split_list
from asr_audit.errors import ConfigError, InputFileError
from asr_audit.outputs import check_output_file


@app.command(
    epilog=examples(
        (
            "asr-audit refdis --preds preds/ --panel m1,m2,m3,m4 --json refdis.json",
            "accept-ref per model, panel members scored leave-one-out",
        ),
        (
            "asr-audit refdis --preds preds/ --panel m1,m2,m3 --preset anchor --no-loo",
            "the paper's public-code semantics",
        ),
    )
)
def refdis(
    preds: Path = typer.Option(..., "--preds", help="Folder (or file) of per-model prediction files."),
    panel: str = typer.Option(None, "--panel", help="Comma-separated panel models (consensus miners)."),
    corrected: Path | None = typer.Option(
        None,
        "--corrected-refs",
        help="Two-reference mode: file of corrected references (clip id + text) instead of a panel.",
    ),
    preset: str = typer.Option(
        "anchor", "--preset", help="anchor (public code defaults) | paper (0.75, interior edits)."
    ),
    majority: float | None = typer.Option(None, "--majority", help="Panel supermajority share."),
    include_middle: bool | None = typer.Option(
        None, "--include-middle/--boundary-only", help="Keep interior deletion/substitution runs."
    ),
    min_run_len: int | None = typer.Option(None, "--min-run-len"),
    min_ref_match: float | None = typer.Option(
        None, "--min-ref-match", help="Competence gate: share of reference tokens a model must reproduce."
    ),
    min_consensus_cer: float | None = typer.Option(
        None, "--min-consensus-cer", help="Drop edits whose panel rendering is this close (CER) to the reference."
    ),
    min_panel: int | None = typer.Option(None, "--min-panel"),
    loo: bool = typer.Option(True, "--loo/--no-loo", help="Score panel members leave-one-out (the paper's rule)."),
    models: str | None = typer.Option(None, "--models", help="Models to score (default: every file)."),
    normalizer: str = typer.Option(
        "whisper",
        "--normalizer",
        help="whisper (OpenAI Whisper's) | whisper-normalizer-0.1.15 | oal | basic | whisper-basic",
    ),
    merge_compounds: bool = typer.Option(
        False,
        "--merge-compounds/--no-merge-compounds",
        help="Count WER as the Open ASR Leaderboard does: a compound split on one side "
        "and joined on the other is no error (kaldialign merge_compounds).",
    ),
    language: str = typer.Option(
        "en",
        "--language",
        help="Language of the corpus, its primary subtag decides (en-GB is English). "
        "Non-English text uses the basic normalizer (under --preset anchor: whisper-basic, as the paper's code).",
    ),
    dataset: str | None = typer.Option(None, "--dataset", help="Pick one dataset in a bucketed folder."),
    seed: int = typer.Option(0, "--seed", help="Seed for the bootstrap intervals."),
    resamples: int = typer.Option(1000, "--resamples", help="Bootstrap resamples."),
    normalize_workers: int = typer.Option(
        0,
        "--normalize-workers",
        help="Processes normalizing a large prediction set (>= 20k new strings); 0 = one per core, 1 = serial.",
    ),
    json_out: Path | None = typer.Option(
        None, "--json", help="Write the full result (edits, verdicts, params) as JSON."
    ),
    csv_out: Path | None = typer.Option(None, "--csv", help="Write the per-model table as CSV."),
) -> None:
    """Mine reference errors with a consensus panel and score how often each model reproduces them."""
    from asr_audit.corpus.predfiles import load_predictions, load_references
    from asr_audit.options import Surface
    from asr_audit.probes.predfiles.refdis_options import RefdisOptions
    from asr_audit.probes.predfiles.refdis_run import isolated_panel_members, run_refdis
    from asr_audit.report.tables import refdis_csv, refdis_table, to_json, write_text

    if panel is None and corrected is None:
        raise ConfigError("refdis needs --panel a,b,c (consensus mode) or --corrected-refs FILE (two-reference mode)")
    options = RefdisOptions.from_mapping(
        {
            "preset": preset,
            "majority": majority,
            "include_middle": include_middle,
            "min_run_len": min_run_len,
            "min_ref_match": min_ref_match,
            "min_consensus_cer": min_consensus_cer,
            "min_panel": min_panel,
            "loo": loo,
            "resamples": resamples,
            "merge_compounds": merge_compounds,
            "language": language,
        },
        Surface.cli(),
    )
    check_output_file(json_out, "--json")  # outputs checked before the work
    check_output_file(csv_out, "--csv")
    if normalize_workers < 0:
        raise ConfigError(f"--normalize-workers {normalize_workers} must be >= 0 (0 = one per core)")
    import os

    workers = normalize_workers or (os.cpu_count() or 1)
    pset = load_predictions(preds, dataset)
    refs = load_references(corrected) if corrected is not None else None
    if refs is not None and corrected is not None and not any(c in pset.references for c in refs):
        raise InputFileError(
            corrected,
            f"no clip id matches the prediction files of {preds} "
            f"(here first {next(iter(refs))!r}, there first {next(iter(pset.references))!r})",
            "use the clip ids of the prediction files",
        )
    panel_names = split_list(panel, "--panel") or []
    for m in isolated_panel_members(pset, [p for p in panel_names if p in pset.models]):
        err_console.print(
            f"warning: panel model {m} shares no answered clip id with the other panel models; "
            "it never votes beside them (is its file from another corpus?)",
            highlight=False,
            soft_wrap=True,
        )
    result = run_refdis(
        pset,
        panel_names,
        options.mining,
        normalizer=options.normalizer_for(normalizer),
        models=split_list(models, "--models"),
        corrected=refs,
        seed=seed,
        n_resamples=options.resamples,
        text2num=options.text2num,
        normalize_workers=workers,
        merge_compounds=options.merge_compounds,
        language=options.language,
    )
    data = result.to_dict()
    console.print(refdis_table(data))
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json(data))}")
    if csv_out:
        console.print(f"wrote {write_text(csv_out, refdis_csv(data))}")


@app.command(
    epilog=examples(("asr-audit coverage --preds preds/", "clips, missing and empty hypotheses per model file"))
)
def coverage(
    preds: Path = typer.Option(..., "--preds", help="Folder (or file) of per-model prediction files."),
    dataset: str | None = typer.Option(None, "--dataset"),
) -> None:
    """Clips per model, missing and empty hypotheses; fails on reference conflicts."""
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.report.tables import coverage_table

    pset = load_predictions(preds, dataset)
    console.print(coverage_table(pset.source, len(pset.references), len(pset.models), pset.coverage()))
