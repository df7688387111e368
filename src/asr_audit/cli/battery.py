"""Verb ``battery``: the trigger battery over a corpus, one accept-ref measure, a grid of conditions."""

from __future__ import annotations

from pathlib import Path

import typer

from asr_audit.cli import app, console, examples, split_list
from asr_audit.cli.common import STORE_HELP, load_backends, load_clips, model_specs, store_session, write_json
from asr_audit.outputs import check_output_file


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
    json_out: Path | None = typer.Option(None, "--json", help="Write the result (cells, differences, DiD) as JSON."),
) -> None:
    """Accept-ref of each model under each audio condition, paired against the original audio."""
    from rich.progress import Progress

    from asr_audit.audio.assets import AudioAsset
    from asr_audit.options import Surface
    from asr_audit.probes.battery.battery import BatteryOptions, run_battery
    from asr_audit.probes.battery.conditions import parse_conditions
    from asr_audit.report.tables import battery_table, study_table
    from asr_audit.runner.probes_battery import load_spoken

    options = BatteryOptions.from_mapping(
        {
            "measure": probe,
            "conditions": split_list(conditions, "--conditions") or [],
            "donor_conv": split_list(donor_conv, "--donor-conv"),
            "spoken": None if spoken is None else str(spoken),
            "panel": split_list(panel, "--panel"),
            "resamples": resamples,
        },
        Surface.cli(measure="--probe"),
    )
    conds = parse_conditions(list(options.conditions))
    specs = model_specs(model)
    check_output_file(json_out, "--json")  # before any model runs
    donors = [AudioAsset.from_file(p) for p in options.donor_conv]
    spoken_map = load_spoken(options.spoken) if options.spoken else {}
    clips = load_clips(corpus, limit)
    backends = dict(zip(specs, load_backends(specs)))
    extra = [p for p in options.panel or () if p not in backends]
    panel_backends = {**backends, **dict(zip(extra, load_backends(extra)))} if extra else backends
    panel_map = {p: panel_backends[p] for p in options.panel or ()}
    with store_session(store) as handle, Progress(console=console, transient=True) as bar:
        task = bar.add_task("conditions", total=len(conds))
        done: list[str] = []

        def step(name: str) -> None:
            if done:
                bar.advance(task)
            done.append(name)
            bar.update(task, description=f"condition {name}")

        res = run_battery(
            clips,
            backends,
            options.measure,
            [c.name for c in conds],
            handle,
            seed=seed,
            spoken=spoken_map,
            conv_donors=donors,
            n_resamples=options.resamples,
            panel=panel_map,
            mining=options.mining,
            families=options.families,
            progress=step,
        )
        bar.advance(task)
    out = res.to_dict()
    console.print(battery_table(out))
    if out["study"]:
        console.print(study_table(out))
    if out["failures"]:
        console.print(f"{len(out['failures'])} clip/condition failure(s); see --json")
    write_json(json_out, out, console)
