"""Audio probes: ``masked`` (masked-entity recovery), ``lift`` (teacher-forced audio lift) and
``continue`` (forced continuation with end-of-text banned); flags: the probes' ``FLAGS``."""

from __future__ import annotations

from typing import Any

from asr_audit.api import audio_probe_run
from asr_audit.cli import app, console, err_console
from asr_audit.cli.common import load_clips, model_specs, print_failures, write_json
from asr_audit.cli.probe_verbs import Args, say, verb
from asr_audit.probes.audio import masked
from asr_audit.probes.audio.probes import CONTINUATION, LIFT, MASKED
from asr_audit.probes.core.flags import CORPUS, JSON, LIMIT, MODEL, SEED, STORE
from asr_audit.report.tables import continuation_table, lift_table, masked_table

CORPUS_FLAGS = (MODEL, CORPUS, LIMIT, STORE, JSON)


def _run(a: Args, probe: Any, seed: int = 0) -> tuple[Any, Any]:
    """The audio probe on the verb's corpus with its ``--model`` backends, through the store (the
    API's path): the typed result and the corpus."""
    specs, corp = model_specs(a["model"]), load_clips(a["corpus"], a["limit"])
    return audio_probe_run(probe.name, corp, specs, a.options, a.surface, a["store"], seed, say), corp


def _render(a: Args, data: dict[str, Any], corp: Any, table: Any) -> None:
    """The verb's table, failures and JSON (the probe's result, with the corpus's source)."""
    console.print(table(data, corp.name))
    print_failures(data["failures"])
    write_json(a["json_out"], {**data, "corpus": corp.source})


@verb(app, "masked", (*CORPUS_FLAGS, SEED, masked.RECIPES_OUT), probe=MASKED, check=masked.one_recipe_file)
def masked_cmd(a: Args) -> None:
    """Masked-entity recovery: silence a number's audio, keep it in the reference, count who still writes it.

    accept-ref = recovered / eligible items (eligible: the model gets the target and the clip
    right without the mask), with a Wilson 95% interval.
    """
    result, corp = _run(a, MASKED, a["seed"])
    if a["recipes_out"] is not None:
        masked.write_recipes(a["recipes_out"], result.recipes)
        err_console.print(f"wrote {len(result.recipes)} recipe(s) to {a['recipes_out']}", highlight=False)
    _render(a, MASKED.to_dict(result), corp, masked_table)


@verb(app, "lift", (*CORPUS_FLAGS, SEED), probe=LIFT)
def lift_cmd(a: Args) -> None:
    """Teacher-forced audio lift: (log p(r|x) - log p(r|silence)) / chars, per span, in nats per character
    (models with the score capability)."""
    result, corp = _run(a, LIFT, a["seed"])
    _render(a, LIFT.to_dict(result), corp, lambda data, name: lift_table(data, name, a["spans"]))


@verb(app, "continue", CORPUS_FLAGS, probe=CONTINUATION)
def continue_(a: Args) -> None:
    """Forced continuation: cut each clip before its last words, ban end-of-text, count hidden words that leak
    (PyTorch Whisper models: hf:..., whisper-tiny.en-pt)."""
    result, corp = _run(a, CONTINUATION)
    _render(a, CONTINUATION.to_dict(result), corp, continuation_table)
