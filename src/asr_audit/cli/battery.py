"""Verb ``battery``: the trigger battery over a corpus, one accept-ref measure, a grid of conditions."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import Progress

from asr_audit.cli import app, console, examples, split_list
from asr_audit.cli.common import STORE_HELP, load_clips, model_specs, store_session, write_json
from asr_audit.options import Surface
from asr_audit.outputs import check_output_file
from asr_audit.probes.audio.probes import audio_inputs
from asr_audit.probes.battery.probe import BATTERY
from asr_audit.report.tables import battery_table, study_table
from asr_audit.runner.run import local_pool


@app.command(
    "battery",
    epilog=examples(
        (
            "asr-audit battery -m whisper-tiny.en -c calib/calib-test.jsonl --spoken calib/calib-test.jsonl --conditions voice:flite-rms,noise:10db",
            "accept-ref in another voice and in noise, paired against the original audio",
        ),
    ),
)
def battery_cmd(
    model: str = typer.Option(..., "--model", "-m", help="Model spec(s), comma-separated."),
    corpus: str = typer.Option(
        ..., "--corpus", "-c", help="Corpus spec (manifest, LibriSpeech dir, Kaldi dir, hf-dataset:...)."
    ),
    probe: str = typer.Option("refdis", "--probe", help="Measure: refdis | courtesy | ortho | masked."),
    conditions: str = typer.Option(
        ...,
        "--conditions",
        help="Comma-separated: noise:10db,reverb:0.6,truncate:1w0.25s,donor:conv8s,donor:bench8s,voice:flite-slt",
    ),
    spoken: Path | None = typer.Option(
        None, "--spoken", help="JSONL {id, spoken}: what the audio says, when it differs from the reference."
    ),
    panel: str | None = typer.Option(
        None,
        "--panel",
        help="Panel model spec(s), comma-separated: their outputs on the original audio say what it says when --spoken does not (refdis, courtesy); a tested member is left out of its own items.",
    ),
    donor_conv: str | None = typer.Option(
        None, "--donor-conv", help="Conversational donor audio file(s), comma-separated."
    ),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips."),
    seed: int = typer.Option(0, "--seed", help="Seed for noise, donors and bootstrap."),
    resamples: int = typer.Option(1000, "--resamples", min=1, help="Bootstrap resamples."),
    normalizer: str = typer.Option("whisper", "--normalizer", help="Text normalizer (as for refdis)."),
    study: bool = typer.Option(
        True, "--study/--no-study", help="The courtesy measure's case study (attn-isolated, translate arms)."
    ),
    json_out: Path | None = typer.Option(None, "--json", help="Write the result (cells, differences, DiD) as JSON."),
) -> None:
    """Accept-ref of each model under each audio condition, paired against the original audio."""
    options = BATTERY.options_from(
        {
            "measure": probe,
            "conditions": split_list(conditions, "--conditions") or [],
            "models": model_specs(model),
            "donor_conv": split_list(donor_conv, "--donor-conv"),
            "spoken": None if spoken is None else str(spoken),
            "panel": None if panel is None else model_specs(panel, "--panel"),
            "resamples": resamples,
            "study": study,
        },
        Surface.cli(measure="--probe", models="--model"),
    )
    check_output_file(json_out, "--json")  # before any model runs
    clips = load_clips(corpus, limit)
    pool = local_pool([*(options.models or ()), *(options.panel or ())])
    with store_session(store) as handle, Progress(console=console, transient=True) as bar:
        inputs = audio_inputs(clips, pool, handle, seed=seed, normalizer=normalizer)
        BATTERY.check(options, inputs, Surface.cli())
        task = bar.add_task("conditions", total=len(options.conditions))
        done: list[str] = []

        def step(name: str) -> None:
            if done:
                bar.advance(task)
            done.append(name)
            bar.update(task, description=f"condition {name}")

        out = BATTERY.to_dict(BATTERY.run(inputs, options, progress=step))
        bar.advance(task)
    console.print(battery_table(out))
    if out["study"]:
        console.print(study_table(out))
    if out["failures"]:
        console.print(f"{len(out['failures'])} clip/condition failure(s); see --json")
    write_json(json_out, out, console)
