"""Verbs over prediction files: ``refdis`` and ``coverage``."""

from __future__ import annotations

import gc
from functools import partial
from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, err_console, examples, process_entry, split_list
from asr_audit.cli.common import truth_step
from asr_audit.cli.reading import load_set, reading_options
from asr_audit.corpus.predfiles import gc_paused
from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.outputs import check_output_file
from asr_audit.probes.audio.refdis_probe import REFDIS
from asr_audit.probes.core.probe import PredictionFiles, ProbeInputs
from asr_audit.probes.predfiles.corrected import corrected_jsonl
from asr_audit.report.tables import write_text


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
        (
            "asr-audit refdis --preds exports/ --panel a,b,c --models d --id-from stem --references normalized",
            "raw CSV exports: ids from paths, references equal once normalized",
        ),
    )
)
@reading_options
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
    min_confidence: float | None = typer.Option(
        None,
        "--min-confidence",
        help="Keep only edits whose confidence (0-1: panel votes, rendering agreement, distance from the "
        "reference) is at least this; default: keep all (calibrated operating point: 0.4, docs/calibration.md).",
    ),
    loo: bool = typer.Option(True, "--loo/--no-loo", help="Score panel members leave-one-out (the paper's rule)."),
    models: str | None = typer.Option(None, "--models", help="Models to score (default: every file)."),
    normalizer: str = typer.Option(
        "whisper",
        "--normalizer",
        help="whisper (OpenAI Whisper's) | whisper-normalizer-0.1.15 | oal | basic | whisper-basic | "
        "basic-es | basic-fr | basic-de | basic-chars (see docs/normalizers.md)",
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
        "Non-English text uses basic-es / basic-fr / basic-de for those languages, basic for others (under "
        "--preset anchor: whisper-basic, as the paper's code); Chinese, Japanese, Korean, Thai, Lao, Khmer and "
        "Myanmar are scored by character (basic-chars; anchor: the paper's CJK spacing).",
    ),
    dataset: str | None = typer.Option(None, "--dataset", help="Pick one dataset in a bucketed folder."),
    seed: int = typer.Option(0, "--seed", help="Seed for the bootstrap intervals."),
    resamples: int = typer.Option(1000, "--resamples", help="Bootstrap resamples."),
    normalize_workers: int = typer.Option(
        0,
        "--normalize-workers",
        help="Processes normalizing (and, in a cold cached run, aligning and mining) a large prediction set; "
        "0 = one per core, 1 = serial.",
    ),
    text_cache: bool = typer.Option(
        True,
        "--text-cache/--no-text-cache",
        help="Reuse the normalized texts and alignments of earlier runs on the same files "
        "($ASR_AUDIT_CACHE_DIR/text; results are identical either way).",
    ),
    json_out: Path | None = typer.Option(
        None, "--json", help="Write the full result (edits, verdicts, params) as JSON."
    ),
    csv_out: Path | None = typer.Option(None, "--csv", help="Write the per-model table as CSV."),
    write_corrected: Path | None = typer.Option(
        None,
        "--write-corrected",
        help="Write the consensus-corrected references (a cleaned benchmark, manifest JSONL) with every change.",
    ),
    verify_with: str | None = typer.Option(
        None,
        "--verify-with",
        help="Comma-separated scoring backends (never a tested model) that verify each edit on the audio "
        "(needs --audio-root): edits labelled reference-wrong / reference-right, accept-ref on verified edits "
        "per model; with --write-corrected (one backend) each correction also gets its audio's vote.",
    ),
    audio_root: Path | None = typer.Option(
        None, "--audio-root", help="Folder of the clips' audio (clip id = path under it), for --verify-with."
    ),
    verify_margin: float | None = typer.Option(
        None,
        "--verify-margin",
        help="Nats per token every verifier must clear (default: the calibrated margin, docs/refdis.md; "
        "another margin has no measured precision).",
    ),
    truth: Path | None = typer.Option(
        None,
        "--truth",
        help="A calibration folder (asr-audit calib build) whose planted truth verifies the mined edits: "
        "copying is then judged on verified reference errors (docs/refdis.md).",
    ),
    labels: Path | None = typer.Option(
        None,
        "--labels",
        help="Labels file of asr-audit annotate: the miner's precision and accept-ref on verified edits "
        "(docs/annotate.md).",
    ),
    read: Any = None,
) -> None:
    """Mine reference errors with a consensus panel and score how often each model reproduces them."""
    if panel is None and corrected is None:
        raise ConfigError("refdis needs --panel a,b,c (consensus mode) or --corrected-refs FILE (two-reference mode)")
    verifiers = split_list(verify_with, "--verify-with")
    _refuse_combinations(verify_with, corrected, labels, audio_root, write_corrected, truth, verify_margin, verifiers)
    if normalize_workers < 0:
        raise ConfigError(f"--normalize-workers {normalize_workers} must be >= 0 (0 = one per core)")
    options = REFDIS.options_from(
        {
            "preset": preset,
            "majority": majority,
            "include_middle": include_middle,
            "min_run_len": min_run_len,
            "min_ref_match": min_ref_match,
            "min_consensus_cer": min_consensus_cer,
            "min_panel": min_panel,
            "min_confidence": min_confidence,
            "loo": loo,
            "resamples": resamples,
            "merge_compounds": merge_compounds,
            "language": language,
            "labels": _text(labels),
            "truth": _text(truth),
            "verify_with": verifiers,
            "audio_root": _text(audio_root),
            "verify_margin": verify_margin,
            "models": split_list(models, "--models"),
            "corrected_refs": _text(corrected),
            "text_cache": text_cache,
            "normalize_workers": normalize_workers,
        },
        Surface.cli(),
    )
    check_output_file(json_out, "--json", (preds, corrected))  # outputs checked before the work
    check_output_file(csv_out, "--csv", (preds, corrected))
    check_output_file(write_corrected, "--write-corrected", (preds, corrected))
    panel_names = split_list(panel, "--panel") or []
    reader = partial(load_set, preds, dataset, read, options.normalizer_for(normalizer), options.mining.preset)
    inputs = ProbeInputs(
        corpus=str(preds),
        panel=tuple(panel_names),
        seed=seed,
        normalizer=normalizer,
        files=PredictionFiles(preds, dataset, reader, plain=read.is_default),
        verify_truth=truth_step,
        log=_say,
    )
    REFDIS.check(options, inputs, Surface.cli())
    # the columns and the result's dict are many acyclic objects: no collector passes over them (a
    # tenth of a warm run's CPU went to them), nor one over the whole heap when the collector
    # resumes: what is alive now stays alive until the process ends
    with gc_paused():
        run = REFDIS.run(inputs, options)
        if process_entry():  # never in a caller's longer-lived process
            gc.freeze()
    note = _unscored_note(panel_names, options.mining) if corrected is None else None
    _print_refdis(run.data, json_out, csv_out, note, options.labels)
    if write_corrected:
        clips, text_form = REFDIS.corrected(inputs, options, run)
        changed = sum(bool(c.changes) for c in clips)
        path = write_text(write_corrected, corrected_jsonl(clips, text_form))
        console.print(f"wrote {path} ({len(clips)} clips, {changed} corrected)")


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _refuse_combinations(
    verify_with: str | None,
    corrected: Path | None,
    labels: Path | None,
    audio_root: Path | None,
    write_corrected: Path | None,
    truth: Path | None,
    verify_margin: float | None,
    verifiers: list[str] | None,
) -> None:
    """The refdis flags that cannot go together, each refused in one line naming the flags."""
    if verify_with is not None and corrected is not None:
        raise ConfigError("--verify-with verifies the panel's edits, but --corrected-refs gives them; fix: use --panel")
    if verify_with is not None and labels is not None:
        raise ConfigError("--labels and --verify-with are two verifications of the same edits; fix: name one of them")
    if verify_with is not None and audio_root is None:
        raise ConfigError(
            "--verify-with scores each edit on the clip's audio; fix: add --audio-root DIR (where the audio files are)"
        )
    if write_corrected is not None and len(verifiers or ()) > 1:
        raise ConfigError(
            "--write-corrected records one backend's vote on each correction; fix: name one --verify-with backend"
        )
    if verify_with is not None and truth is not None:
        raise ConfigError("--truth and --verify-with are two verifications of the same edits; fix: name one of them")
    if verify_margin is not None and verify_with is None:
        raise ConfigError(
            "--verify-margin is the audio verifiers' margin; fix: add --verify-with SPEC --audio-root DIR"
        )
    if write_corrected is not None and corrected is not None:
        raise ConfigError(
            "--write-corrected writes the panel's corrections, but --corrected-refs gives them; fix: use --panel"
        )
    if truth is not None and labels is not None:
        raise ConfigError("--truth and --labels each verify the edits; fix: pass one of them")


def _say(line: str) -> None:
    err_console.print(line, highlight=False, soft_wrap=True)


def _unscored_note(panel: list[str], mining: Any) -> str | None:
    """The run's one line when its panel is too small to score its own members leave-one-out."""
    from asr_audit.probes.predfiles.refdis import loo_quorum, loo_unscored

    if loo_unscored(panel, mining) is None or len(panel) < mining.min_panel:
        return None
    return (
        f"note: leave-one-out needs {loo_quorum(mining) + 1} panel models to score a panel member; the panel "
        f"({', '.join(panel)}) gets — and the models outside it are scored by the whole panel "
        "(add a panel model to score the members, or --no-loo for the public code's rule)"
    )


def _print_refdis(
    data: dict[str, Any],
    json_out: Path | None,
    csv_out: Path | None,
    note: str | None = None,
    labels: str | None = None,
) -> None:
    from asr_audit.report.tables import refdis_csv, refdis_table, to_json, write_text

    if note is not None:
        err_console.print(note, highlight=False, soft_wrap=True)
    console.print(refdis_table(data))
    if labels is not None:
        from asr_audit.report.verified import verification_lines, verified_table

        for line in verification_lines(data):
            console.print(line, highlight=False, soft_wrap=True)
        console.print(verified_table(data))
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json(data))}")
    if csv_out:
        console.print(f"wrote {write_text(csv_out, refdis_csv(data))}")


@app.command(
    epilog=examples(
        ("asr-audit coverage --preds preds/", "clips, missing and empty hypotheses per model file"),
        ("asr-audit coverage --preds exports/ --id-from stem", "the same for files that name clips by path"),
    )
)
@reading_options
def coverage(
    preds: Path = typer.Option(..., "--preds", help="Folder (or file) of per-model prediction files."),
    dataset: str | None = typer.Option(None, "--dataset"),
    read: Any = None,
) -> None:
    """Clips per model, missing and empty hypotheses, and the columns read; fails on reference conflicts."""
    from asr_audit.report.tables import coverage_table

    pset = load_set(preds, dataset, read)
    console.print(coverage_table(pset.source, len(pset.references), len(pset.models), pset.coverage()))
    for f in pset.files:
        mapping = ", ".join(f"{role}={col or '(blank)'}" for role, col in f.columns.items())
        console.print(f"columns of {f.path.name}: {mapping}", highlight=False, soft_wrap=True)
