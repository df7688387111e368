"""``asr-audit gate``: a regression gate for CI (exit 0 pass, 1 regression, 2 error or undecided)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, split_list
from asr_audit.cli.common import truth_step
from asr_audit.cli.reading import reading_options, reference_normalizer, say_repairs
from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.outputs import check_output_file
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.probes.predfiles.gate import GATE, gate_inputs, parse_min_effect
from asr_audit.report.gate import gate_markdown, gate_table
from asr_audit.report.tables import to_json, write_text


@app.command(
    epilog="Examples:\n\n"
    "  asr-audit gate --preds preds/ --candidate my-model-v2 --baseline my-model-v1 "
    "--panel whisper-small.en,whisper-base.en,distil-small.en,wav2vec2-base-960h --markdown gate.md\n\n"
    "  asr-audit gate --preds panel/ --candidate new.jsonl --baseline main.jsonl "
    "--panel a,b,c,d --min-effect wer=0.25,accept_ref=2 --level 0.05",
)
@reading_options
def gate(
    candidate: str = typer.Option(..., "--candidate", help="Candidate: a model of --preds, or its prediction file."),
    baseline: str = typer.Option(..., "--baseline", help="Baseline: a model of --preds, or its prediction file."),
    preds: Path | None = typer.Option(
        None, "--preds", help="Folder (or file) of prediction files: the panel, and the two models unless files."
    ),
    panel: str | None = typer.Option(None, "--panel", help="Comma-separated panel models (consensus miners)."),
    corrected: Path | None = typer.Option(
        None, "--corrected-refs", help="Two-reference mode: corrected references (e.g. from refdis --write-corrected)."
    ),
    level: float = typer.Option(
        0.025, "--level", help="One-sided level of the whole gate (split over the tested measures)."
    ),
    min_effect: str | None = typer.Option(
        None,
        "--min-effect",
        help="Smallest regression that fails, in points: one number or measure=points pairs "
        "(default accept_ref=2,wer_inflation=0.5,wer=0.5).",
    ),
    measures: str = typer.Option(
        "accept_ref,wer_inflation,wer", "--measures", help="Measures to gate on: accept_ref, wer_inflation, wer."
    ),
    cluster_pattern: str | None = typer.Option(
        None, "--cluster-pattern", help="Regex over clip ids whose first (or 'group') group is the bootstrap cluster."
    ),
    cluster_file: Path | None = typer.Option(
        None, "--cluster-file", help="File of clip id + group (sentence, recording) columns: the bootstrap clusters."
    ),
    preset: str = typer.Option("anchor", "--preset", help="anchor | paper (refdis mining preset)."),
    min_panel: int | None = typer.Option(None, "--min-panel"),
    loo: bool = typer.Option(
        True,
        "--loo/--no-loo",
        help="Leave-one-out mining (4 panel models when the candidate or baseline is one; --no-loo: the public "
        "code's rule).",
    ),
    normalizer: str = typer.Option("whisper", "--normalizer", help="Text normalizer (as for refdis)."),
    language: str = typer.Option("en", "--language", help="Language of the corpus (as for refdis)."),
    merge_compounds: bool = typer.Option(
        False, "--merge-compounds/--no-merge-compounds", help="Count WER as the Open ASR Leaderboard does."
    ),
    dataset: str | None = typer.Option(None, "--dataset", help="Pick one dataset in a bucketed folder."),
    seed: int = typer.Option(0, "--seed", help="Seed for the bootstrap."),
    resamples: int = typer.Option(2000, "--resamples", help="Bootstrap resamples."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the gate's result as JSON."),
    markdown_out: Path | None = typer.Option(
        None, "--markdown", help="Write the Markdown summary (a pull-request comment) here."
    ),
    truth: Path | None = typer.Option(
        None,
        "--truth",
        help="A calibration folder whose planted truth verifies the mined edits: accept-ref and WER inflation "
        "are then compared on verified reference errors (without a verification, on WER alone; docs/gate.md).",
    ),
    labels: Path | None = typer.Option(
        None, "--labels", help="A labels file of asr-audit annotate that verifies the mined edits (as --truth)."
    ),
    read: Any = None,
) -> None:
    """Is the candidate worse than the baseline beyond noise? accept-ref, WER inflation, WER.

    Paired, clip- (or cluster-) level bootstrap of candidate minus baseline; a one-sided test per
    measure against a minimum effect. Exit code 0: pass, 1: regression, 2: error or too little data.
    """
    if panel is None and corrected is None:
        raise ConfigError("gate needs --panel a,b,c,d (consensus mode) or --corrected-refs FILE (two-reference mode)")
    inputs = (preds, corrected, cluster_file, candidate, baseline, labels)
    check_output_file(json_out, "--json", inputs)
    check_output_file(markdown_out, "--markdown", inputs)
    if truth is not None and labels is not None:
        raise ConfigError("--truth and --labels each verify the edits; fix: pass one of them")
    if candidate == baseline:
        raise ConfigError(f"--candidate and --baseline are the same model {candidate!r}; fix: name two models")
    options = GATE.options_from(
        {
            "candidate": candidate,
            "baseline": baseline,
            "level": level,
            "min_effect": parse_min_effect(min_effect),
            "measures": split_list(measures, "--measures") or (),
            "resamples": resamples,
            "preset": preset,
            "min_panel": min_panel,
            "loo": loo,
            "merge_compounds": merge_compounds,
            "language": language,
            "truth": None if truth is None else str(truth),
            "labels": None if labels is None else str(labels),
            "corrected_refs": None if corrected is None else str(corrected),
            "cluster_pattern": cluster_pattern,
            "cluster_file": None if cluster_file is None else str(cluster_file),
        },
        Surface.cli(),
    )
    pset, cand, base = gate_inputs(  # candidate and baseline: models of --preds, or files added to its set
        None if preds is None else str(preds),
        candidate,
        baseline,
        dataset,
        read=read,
        normalize=reference_normalizer(read, options.refdis.normalizer_for(normalizer), preset),
    )
    say_repairs(pset)
    options = replace(options, candidate=cand, baseline=base)
    probe_inputs = ProbeInputs(
        corpus=pset.source,
        predictions=pset,
        panel=tuple(split_list(panel, "--panel") or ()),
        seed=seed,
        normalizer=normalizer,
        verify_truth=truth_step,
    )
    GATE.check(options, probe_inputs, Surface.cli())
    result = GATE.run(probe_inputs, options)
    assert result is not None  # the gate applies to every prediction set
    data = result.to_dict()
    summary = gate_markdown(data)
    console.print(gate_table(data))
    console.print(summary, highlight=False, soft_wrap=True)
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json(data))}")
    if markdown_out:
        console.print(f"wrote {write_text(markdown_out, summary)}")
    raise typer.Exit(result.exit_code)
