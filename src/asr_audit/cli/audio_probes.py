"""Audio probes: ``masked`` (masked-entity recovery), ``lift`` (teacher-forced audio lift),
``continue`` (forced continuation with end-of-text banned) and ``battery`` (the trigger battery over
a corpus: one accept-ref measure, a grid of conditions); flags: the probes' ``FLAGS``."""

from __future__ import annotations

from typing import Any

from rich.progress import Progress

from asr_audit.api import audio_probe_run, battery_run
from asr_audit.cli import app, console, err_console
from asr_audit.cli.common import load_clips, model_specs, print_failures, write_json
from asr_audit.cli.probe_verbs import Args, say, verb
from asr_audit.probes.audio import masked
from asr_audit.probes.audio.probes import CONTINUATION, LIFT, MASKED
from asr_audit.probes.battery.probe import BATTERY
from asr_audit.probes.core.flags import CORPUS, JSON, LIMIT, MODEL, NORMALIZER, SEED, STORE
from asr_audit.report.tables import battery_screen, continuation_table, lift_table, masked_table

CORPUS_FLAGS = (MODEL, CORPUS, LIMIT, STORE, JSON)


def _run(a: Args, probe: Any, table: Any, seed: int = 0) -> Any:
    """The audio probe on the verb's corpus with its ``--model`` backends, through the store (the
    API's path), then its table, failures and JSON (with the corpus's source): the typed result."""
    specs, corp = model_specs(a["model"]), load_clips(a["corpus"], a["limit"])
    result = audio_probe_run(probe.name, corp, specs, a.options, a.surface, a["store"], seed, say)
    data = probe.to_dict(result)
    console.print(table(data, corp.name))
    print_failures(data["failures"])
    write_json(a["json_out"], {**data, "corpus": corp.source})
    return result


@verb(app, "masked", (*CORPUS_FLAGS, SEED, masked.RECIPES_OUT), probe=MASKED, check=masked.one_recipe_file)
def masked_cmd(a: Args) -> None:
    """Masked-entity recovery: silence a number's audio, keep it in the reference, count who still writes it.

    accept-ref = recovered / eligible items (eligible: the model gets the target and the clip
    right without the mask), with a Wilson 95% interval.
    """
    result = _run(a, MASKED, masked_table, a["seed"])
    if a["recipes_out"] is not None:
        masked.write_recipes(a["recipes_out"], result.recipes)
        err_console.print(f"wrote {len(result.recipes)} recipe(s) to {a['recipes_out']}", highlight=False)


@verb(app, "lift", (*CORPUS_FLAGS, SEED), probe=LIFT)
def lift_cmd(a: Args) -> None:
    """Teacher-forced audio lift: (log p(r|x) - log p(r|silence)) / chars, per span, in nats per character
    (models with the score capability)."""
    _run(a, LIFT, lambda data, name: lift_table(data, name, a["spans"]), a["seed"])


@verb(app, "continue", CORPUS_FLAGS, probe=CONTINUATION)
def continue_(a: Args) -> None:
    """Forced continuation: cut each clip before its last words, ban end-of-text, count hidden words that leak
    (PyTorch Whisper models: hf:..., whisper-tiny.en-pt)."""
    _run(a, CONTINUATION, continuation_table)


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
    for shown in battery_screen(out):
        console.print(shown)
    write_json(a["json_out"], out, console)
