"""Audio probes: ``masked`` (masked-entity recovery), ``lift`` (teacher-forced audio lift) and
``continue`` (forced continuation with end-of-text banned)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, err_console, examples
from asr_audit.cli.common import CORPUS_HELP as _CORPUS_HELP
from asr_audit.cli.common import STORE_HELP as _STORE_HELP
from asr_audit.cli.common import load_backends, load_clips, model_specs, print_failures, store_session, write_json
from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.outputs import check_output_file


@app.command(
    epilog=examples(
        ("asr-audit masked -m whisper-tiny.en -c dev.jsonl --kind number", "silence each number; who still writes it?")
    )
)
def masked(
    model: str = typer.Option(..., "--model", "-m", help="Model spec(s), comma-separated."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    kind: str = typer.Option("number", "--kind", help="What to hide: number | name | word."),
    method: str = typer.Option("silence", "--method", help="How to hide it: silence | noise | cut."),
    pad: float = typer.Option(0.05, "--pad", min=0.0, help="Seconds added on each side (never into the next word)."),
    gate_max_wer: float = typer.Option(
        0.3, "--gate-max-wer", min=0.0, help="Intelligibility gate: unmasked clip WER at most this."
    ),
    min_duration: float = typer.Option(0.15, "--min-duration", min=0.0, help="Shortest aligned target, seconds."),
    recipes_out: Path | None = typer.Option(None, "--recipes-out", help="Write the masking recipes (JSONL)."),
    recipes_in: Path | None = typer.Option(None, "--recipes-in", help="Re-apply exported recipes instead of aligning."),
    aligner: str = typer.Option("sphinx", "--aligner", help="Forced aligner: sphinx | whisper."),
    seed: int = typer.Option(0, "--seed", help="Seed of the noise fill (recorded in the recipes)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips of the corpus."),
    store: Path | None = typer.Option(None, "--store", help=_STORE_HELP),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full result (models + per-item records)."),
) -> None:
    """Masked-entity recovery: silence a number's audio, keep it in the reference, count who still writes it.

    accept-ref = recovered / eligible items (eligible: the model gets the target and the clip
    right without the mask), with a Wilson 95% interval.
    """
    from asr_audit.probes.audio.masked import write_recipes
    from asr_audit.report.tables import masked_table

    if recipes_in is not None and recipes_out is not None:
        raise ConfigError("--recipes-in and --recipes-out exclude each other; fix: pass one of them")
    values = {
        "kind": kind,
        "method": method,
        "pad": pad,
        "gate_max_wer": gate_max_wer,
        "min_duration": min_duration,
        "aligner": aligner,
        "recipes_in": None if recipes_in is None else str(recipes_in),
    }
    check_output_file(recipes_out, "--recipes-out")  # outputs checked before any model runs
    check_output_file(json_out, "--json")
    result, corp = _run_probe("masked", values, model, corpus, limit, store, seed)
    if recipes_out is not None:
        write_recipes(recipes_out, result.recipes)
        err_console.print(f"wrote {len(result.recipes)} recipe(s) to {recipes_out}", highlight=False)
    data = result.to_dict()
    _render(data, corp, masked_table(data, corp.name), json_out)


@app.command(
    epilog=examples(
        (
            "asr-audit lift -m whisper-tiny.en-pt -c dev.jsonl --spans masked",
            "audio lift of the hidden numbers, nats per character",
        )
    )
)
def lift(
    model: str = typer.Option(..., "--model", "-m", help="Model spec(s) with the score capability, comma-separated."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    spans: str = typer.Option("masked", "--spans", help="Which spans: masked | refdis | ortho | full."),
    refdis: Path | None = typer.Option(
        None, "--refdis", help="For --spans refdis: the JSON of `asr-audit refdis --json`."
    ),
    recipes_in: Path | None = typer.Option(None, "--recipes-in", help="For --spans masked: exported mask recipes."),
    method: str = typer.Option("silence", "--method", help="For --spans masked: silence | noise | cut."),
    aligner: str = typer.Option("sphinx", "--aligner", help="Forced aligner for --spans masked."),
    gate_max_wer: float = typer.Option(
        0.3,
        "--gate-max-wer",
        help="Intelligibility gate: keep a sentence for a model only when its unmasked "
        "WER is at most this (inf keeps all).",
    ),
    decoys: int = typer.Option(
        4,
        "--decoys",
        help="For --spans masked: decoy numbers scored per item (other sentences' hidden numbers of the same "
        "form), for the masked-decoys contrast; 0 scores none.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the intervals' random sign patterns (and the decoys' order)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips of the corpus."),
    store: Path | None = typer.Option(None, "--store", help=_STORE_HELP),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full result (models + per-item records)."),
) -> None:
    """Teacher-forced audio lift: (log p(r|x) - log p(r|silence)) / chars, per span, in nats per character."""
    from asr_audit.report.tables import lift_table

    values = {
        "spans": spans,
        "method": method,
        "aligner": aligner,
        "gate_max_wer": gate_max_wer,
        "decoys": decoys,
        "refdis": None if refdis is None else str(refdis),
        "recipes_in": None if recipes_in is None else str(recipes_in),
    }
    check_output_file(json_out, "--json")  # before any model runs
    result, corp = _run_probe("lift", values, model, corpus, limit, store, seed)
    data = result.to_dict()
    _render(data, corp, lift_table(data, corp.name, spans), json_out)


@app.command(
    "continue",
    epilog=examples(
        (
            "asr-audit continue -m whisper-tiny.en-pt -c dev.jsonl --hide-words 3",
            "cut the last 3 words; count those that leak",
        )
    ),
)
def continue_(
    model: str = typer.Option(..., "--model", "-m", help="PyTorch Whisper model spec(s) (hf:..., whisper-tiny.en-pt)."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    hide_words: int = typer.Option(3, "--hide-words", min=1, help="Reference words cut off the end of each clip."),
    extra_tokens: int = typer.Option(
        16, "--extra-tokens", min=1, help="Steps with end-of-text banned after the plain transcript."
    ),
    aligner: str = typer.Option("sphinx", "--aligner", help="Forced aligner: sphinx | whisper."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips of the corpus."),
    store: Path | None = typer.Option(None, "--store", help=_STORE_HELP),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full result (models + per-clip records)."),
) -> None:
    """Forced continuation: cut each clip before its last words, ban end-of-text, count hidden words that leak."""
    from asr_audit.report.tables import continuation_table

    values = {"hide_words": hide_words, "extra_tokens": extra_tokens, "aligner": aligner}
    check_output_file(json_out, "--json")  # before any model runs
    data, corp = _run_probe("continuation", values, model, corpus, limit, store, 0)
    _render(data, corp, continuation_table(data, corp.name), json_out)


def _run_probe(
    name: str, values: dict[str, Any], model: str, corpus: str, limit: int | None, store: Path | None, seed: int
) -> tuple[Any, Any]:
    """The audio probe ``name`` on the verb's corpus with its ``--model`` backends (a local pool named by
    their specs), through the store: the probe's typed result and the corpus."""
    from asr_audit.probes.audio.probes import evaluate_on
    from asr_audit.probes.core.models import LocalPool
    from asr_audit.probes.core.probe import get_probe

    options = get_probe(name).options_from(values, Surface.cli())  # a bad value fails before any model loads
    specs = model_specs(model)
    corp = load_clips(corpus, limit)
    pool = LocalPool.of(load_backends(specs))
    with store_session(store) as st:
        return evaluate_on(name, options, corp, pool, st, Surface.cli(), seed=seed, log=_say), corp


def _say(line: str) -> None:
    err_console.print(line, highlight=False)


def _render(data: dict[str, Any], corp: Any, table: Any, json_out: Path | None) -> None:
    """The verb's table, failures and JSON (the probe's result, with the corpus's source)."""
    console.print(table)
    print_failures(data["failures"])
    write_json(json_out, {**data, "corpus": corp.source})
