"""Verb ``battery``: the trigger battery over a corpus, one accept-ref measure, a grid of conditions
(flags: ``probes.battery.probe.FLAGS``)."""

from __future__ import annotations

from rich.progress import Progress

from asr_audit.cli import app, console
from asr_audit.cli.common import load_clips, store_session, write_json
from asr_audit.cli.probe_verbs import Args, verb
from asr_audit.probes.audio.probes import audio_inputs
from asr_audit.probes.battery.probe import BATTERY, FLAGS
from asr_audit.probes.core.flags import CORPUS, JSON, LIMIT, NORMALIZER, SEED, STORE
from asr_audit.report.tables import battery_table, study_table
from asr_audit.runner.run import local_pool


@verb(
    app,
    "battery",
    (CORPUS, STORE, LIMIT, SEED, NORMALIZER, JSON),
    probe=BATTERY,
    options=FLAGS.values(),
    examples=[
        (
            "asr-audit battery -m whisper-tiny.en -c calib/calib-test.jsonl --spoken calib/calib-test.jsonl --conditions voice:flite-rms,noise:10db",
            "accept-ref in another voice and in noise, paired against the original audio",
        ),
    ],
)
def battery_cmd(a: Args) -> None:
    """Accept-ref of each model under each audio condition, paired against the original audio."""
    options, clips = a.options, load_clips(a["corpus"], a["limit"])
    pool = local_pool([*(options.models or ()), *(options.panel or ())])
    with store_session(a["store"]) as handle, Progress(console=console, transient=True) as bar:
        inputs = audio_inputs(clips, pool, handle, seed=a["seed"], normalizer=a["normalizer"])
        BATTERY.check(options, inputs, a.surface)
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
    write_json(a["json_out"], out, console)
