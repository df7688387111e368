"""Verbs over prediction files: ``refdis`` and ``coverage``."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, err_console, examples, process_entry, split_list
from asr_audit.cli.common import verify_step
from asr_audit.cli.reading import load_set, reading_options
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
    from asr_audit.corpus.predfiles import gc_paused, load_references
    from asr_audit.options import Surface
    from asr_audit.probes.predfiles.refdis_options import RefdisOptions
    from asr_audit.probes.predfiles.refdis_run import isolated_panel_members, refdis_text_cache, run_refdis

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
            "min_confidence": min_confidence,
            "loo": loo,
            "resamples": resamples,
            "merge_compounds": merge_compounds,
            "language": language,
            "labels": None if labels is None else str(labels),
        },
        Surface.cli(),
    )
    check_output_file(json_out, "--json", (preds, corrected))  # outputs checked before the work
    check_output_file(csv_out, "--csv", (preds, corrected))
    check_output_file(write_corrected, "--write-corrected", (preds, corrected))
    verifiers = split_list(verify_with, "--verify-with") or []
    if verify_with is not None and corrected is not None:
        raise ConfigError("--verify-with verifies the panel's edits, but --corrected-refs gives them; fix: use --panel")
    if verify_with is not None and labels is not None:
        raise ConfigError("--labels and --verify-with are two verifications of the same edits; fix: name one of them")
    if verify_with is not None and audio_root is None:
        raise ConfigError(
            "--verify-with scores each edit on the clip's audio; fix: add --audio-root DIR (where the audio files are)"
        )
    if write_corrected is not None and len(verifiers) > 1:
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
    if normalize_workers < 0:
        raise ConfigError(f"--normalize-workers {normalize_workers} must be >= 0 (0 = one per core)")
    import os

    verify = verify_step(truth, labels)  # read before the work: a bad folder or file fails now
    workers = normalize_workers or (os.cpu_count() or 1)
    panel_names = split_list(panel, "--panel") or []
    model_names = split_list(models, "--models")
    note = _unscored_note(panel_names, options.mining)
    # files read with options (mapped columns, ids, repairs) take the plain path, uncached: the
    # cache's columns are keyed by the files' bytes, not by how they were read
    text_cache = text_cache and read.is_default
    if text_cache and corrected is None and write_corrected is None:
        # its imports, the columns and the result's dict are many acyclic objects: no collector
        # passes over them (a tenth of a warm run's CPU went to them), nor one over the whole heap
        # when the collector resumes: what is alive now stays alive until the process ends
        with gc_paused():
            result = _columns_run(
                preds, dataset, normalizer, options, panel_names, model_names, seed=seed, workers=workers, verify=verify
            )
            data = None if result is None else result.to_dict()
            if data is not None and process_entry():  # never in a caller's longer-lived process
                import gc

                gc.freeze()
        if data is not None:
            if verifiers:  # verified on the audio, then run again (warm) with the verification as its step
                from asr_audit.probes.audio.verify_edits import with_audio_details

                av = _audio_verification(result, verifiers, audio_root, verify_margin, model_names)
                again = _columns_run(
                    preds, dataset, normalizer, options, panel_names, model_names, seed=seed, workers=workers,
                    verify=av.step(),
                )  # fmt: skip
                assert again is not None  # the same files and settings ran a moment ago
                data = with_audio_details(again.to_dict(), av)
            _print_refdis(data, json_out, csv_out, note, options.labels)
            return
    pset = load_set(preds, dataset, read, options.normalizer_for(normalizer), options.mining.preset)
    refs = load_references(corrected) if corrected is not None else None
    if refs is not None and corrected is not None and not any(c in pset.references for c in refs):
        raise InputFileError(
            corrected,
            f"no clip id matches the prediction files of {preds} "
            f"(here first {next(iter(refs))!r}, there first {next(iter(pset.references))!r})",
            "use the clip ids of the prediction files",
        )
    _warn_isolated(isolated_panel_members(pset, [p for p in panel_names if p in pset.models]))
    norm_name = options.normalizer_for(normalizer)
    persist = (
        refdis_text_cache(norm_name, options.mining.preset, text2num=options.text2num, language=options.language)
        if text_cache
        else None
    )
    run = partial(
        run_refdis,
        pset,
        panel_names,
        options.mining,
        models=model_names,
        corrected=refs,
        seed=seed,
        normalize_workers=workers,
        text_cache=persist,
        **options.run_settings(normalizer),
    )
    result = run(verify=verify)
    av = None
    if verifiers:  # verified on the audio, then run again with the verification as its step
        av = _audio_verification(result, verifiers, audio_root, verify_margin, model_names)
        result = run(verify=av.step())
    if persist is not None:
        err_console.print(persist.stats().describe(), highlight=False, soft_wrap=True)
    data = result.to_dict()
    if av is not None:
        from asr_audit.probes.audio.verify_edits import with_audio_details

        data = with_audio_details(data, av)
    _print_refdis(data, json_out, csv_out, note if corrected is None else None, options.labels)
    if write_corrected:
        from asr_audit.probes.audio.verify import cleaned_benchmark
        from asr_audit.probes.predfiles.corrected import corrected_jsonl
        from asr_audit.report.tables import write_text

        clips, text_form = cleaned_benchmark(
            pset, result, verify_with=verify_with, audio_root=None if audio_root is None else str(audio_root)
        )
        changed = sum(bool(c.changes) for c in clips)
        path = write_text(write_corrected, corrected_jsonl(clips, text_form))
        console.print(f"wrote {path} ({len(clips)} clips, {changed} corrected)")


def _columns_run(
    preds: Path,
    dataset: str | None,
    normalizer: str,
    options: Any,
    panel: list[str],
    models: list[str] | None,
    *,
    seed: int,
    workers: int,
    verify: Any = None,
) -> Any:
    """refdis on the set as columns: read back from the text cache (a warm run), else read file
    by file (``refdis_run.run_refdis_streamed``). ``None`` when the plain path must run: the
    settings or the files have an error it reports in its own words and order."""
    from asr_audit.errors import AuditError
    from asr_audit.probes.predfiles.refdis_columns import StreamMiss
    from asr_audit.probes.predfiles.refdis_run import (
        load_warm_set,
        refdis_text_cache,
        run_refdis_streamed,
        run_refdis_warm,
    )

    try:
        name = options.normalizer_for(normalizer)
        persist = refdis_text_cache(name, options.mining.preset, text2num=options.text2num, language=options.language)
        warm = load_warm_set(preds, dataset, persist, panel=panel, models=models)
    except (AuditError, OSError):
        return None
    common = {
        "normalizer": name,
        "models": models,
        "seed": seed,
        "n_resamples": options.resamples,
        "text2num": options.text2num,
        "merge_compounds": options.merge_compounds,
        "language": options.language,
        "verify": verify,
    }
    if warm is not None:  # the files are unchanged since a run that stored them as columns
        _warn_isolated(warm.isolated_panel_members([p for p in panel if p in warm.columns.models]))
        result = run_refdis_warm(warm, panel, options.mining, **common)  # serial: forking measured no gain here
    else:
        try:
            result = run_refdis_streamed(
                preds,
                dataset,
                panel,
                options.mining,
                text_cache=persist,
                workers=workers,
                warn=_warn_isolated,
                **common,
            )
        except StreamMiss:
            return None
    err_console.print(persist.stats().describe(), highlight=False, soft_wrap=True)
    return result


def _audio_verification(
    result: Any,
    verifiers: list[str],
    audio_root: Path | None,
    margin: float | None,
    models: list[str] | None,
) -> Any:
    """The edits of ``result`` verified on the audio by ``verifiers`` (``probes/audio/verify_edits.py``);
    the models under test are ``--models`` (else every scored model) outside the panel."""
    from asr_audit.probes.audio.verify_edits import MARGIN, summary_line, verify_run

    scored = models if models is not None else [s.model for s in result.scores]
    av = verify_run(
        result,
        verifiers,
        None if audio_root is None else str(audio_root),
        result.references,
        tested=[m for m in scored if m not in result.panel],
        margin=MARGIN if margin is None else margin,
    )
    err_console.print(summary_line(av), highlight=False, soft_wrap=True)
    return av


def _warn_isolated(members: list[str]) -> None:
    for m in members:
        err_console.print(
            f"warning: panel model {m} shares no answered clip id with the other panel models; "
            "it never votes beside them (is its file from another corpus?)",
            highlight=False,
            soft_wrap=True,
        )


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
    if labels is not None:
        from asr_audit.probes.predfiles.verified_labels import with_labels_summary

        data = with_labels_summary(data, labels)
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
