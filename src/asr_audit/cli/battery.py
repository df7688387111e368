"""Verb ``battery``: the trigger battery over a corpus, one accept-ref measure, a grid of conditions
(flags: ``probes.battery.probe.FLAGS``)."""

from __future__ import annotations

from rich.progress import Progress

from asr_audit.api import battery_run
from asr_audit.cli import app, console
from asr_audit.cli.common import load_clips, write_json
from asr_audit.cli.probe_verbs import Args, verb
from asr_audit.probes.battery.probe import BATTERY
from asr_audit.probes.core.flags import CORPUS, JSON, LIMIT, NORMALIZER, SEED, STORE
from asr_audit.report.tables import battery_table, study_table


@verb(app, "battery", (CORPUS, STORE, LIMIT, SEED, NORMALIZER, JSON), probe=BATTERY)
def battery_cmd(a: Args) -> None:
    """Accept-ref of each model under each audio condition, paired against the original audio."""
    options, clips = a.options, load_clips(a["corpus"], a["limit"])
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("conditions", total=len(options.conditions))
        done: list[str] = []

        def step(name: str) -> None:
            if done:
                bar.advance(task)
            done.append(name)
            bar.update(task, description=f"condition {name}")

        result = battery_run(clips, options, a.surface, a["store"], a["seed"], a["normalizer"], step)
        bar.advance(task)
    out = BATTERY.to_dict(result)
    console.print(battery_table(out))
    if out["study"]:
        console.print(study_table(out))
    if out["failures"]:
        console.print(f"{len(out['failures'])} clip/condition failure(s); see --json")
    write_json(a["json_out"], out, console)
