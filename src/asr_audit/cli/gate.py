"""``asr-audit gate``: a regression gate for CI (exit 0 pass, 1 regression, 2 error or undecided)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, split_list
from asr_audit.cli.common import verify_step
from asr_audit.cli.reading import reading_options, reference_normalizer, say_repairs
from asr_audit.errors import ConfigError
from asr_audit.outputs import check_output_file


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
    from asr_audit.corpus.groups import resolve_groups
    from asr_audit.corpus.predfiles import load_references
    from asr_audit.options import Surface
    from asr_audit.probes.predfiles.gate import GateOptions, gate_inputs, parse_min_effect, run_gate
    from asr_audit.probes.predfiles.refdis_options import RefdisOptions
    from asr_audit.report.gate import gate_markdown, gate_table
    from asr_audit.report.tables import to_json, write_text

    if panel is None and corrected is None:
        raise ConfigError("gate needs --panel a,b,c,d (consensus mode) or --corrected-refs FILE (two-reference mode)")
    inputs = (preds, corrected, cluster_file, candidate, baseline, labels)
    check_output_file(json_out, "--json", inputs)
    check_output_file(markdown_out, "--markdown", inputs)
    verify = verify_step(truth, labels)  # read before the work: a bad folder or file fails now
    refdis_options = RefdisOptions.from_mapping(
        {
            "preset": preset,
            "min_panel": min_panel,
            "loo": loo,
            "merge_compounds": merge_compounds,
            "language": language,
        },
        Surface.cli(),
    )
    options = GateOptions(
        level=level,
        min_effect=parse_min_effect(min_effect),
        measures=tuple(split_list(measures, "--measures") or ()),
        n_resamples=resamples,
    )
    pset, cand, base = gate_inputs(
        None if preds is None else str(preds),
        candidate,
        baseline,
        dataset,
        read=read,
        normalize=reference_normalizer(read, refdis_options.normalizer_for(normalizer), preset),
    )
    say_repairs(pset)
    groups, clustering = resolve_groups(pset.clip_ids, pattern=cluster_pattern, path=cluster_file, flag="--cluster")
    result = run_gate(
        pset,
        cand,
        base,
        refdis_options.mining,
        panel=split_list(panel, "--panel") or (),
        corrected=load_references(corrected) if corrected is not None else None,
        options=options,
        clusters=None if groups is None else {c: m.group for c, m in groups.items()},
        clustering=clustering,
        normalizer=refdis_options.normalizer_for(normalizer),
        text2num=refdis_options.text2num,
        seed=seed,
        merge_compounds=refdis_options.merge_compounds,
        language=refdis_options.language,
        verification=verify,
    )
    data = result.to_dict()
    summary = gate_markdown(data)
    console.print(gate_table(data))
    console.print(summary, highlight=False, soft_wrap=True)
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json(data))}")
    if markdown_out:
        console.print(f"wrote {write_text(markdown_out, summary)}")
    raise typer.Exit(result.exit_code)
