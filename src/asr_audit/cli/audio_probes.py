"""Audio probes: ``masked`` (masked-entity recovery), ``lift`` (teacher-forced audio lift) and
``continue`` (forced continuation with end-of-text banned)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, err_console, examples
from asr_audit.cli.common import CORPUS_HELP as _CORPUS_HELP
from asr_audit.cli.common import STORE_HELP as _STORE_HELP
from asr_audit.cli.common import load_backends, load_clips, model_specs, print_failures, store_session, write_json
from asr_audit.errors import ConfigError, InputFileError
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
    from asr_audit.align import get_aligner
    from asr_audit.options import Surface
    from asr_audit.probes.audio.masked import MaskedOptions, read_recipes, run_masked, write_recipes
    from asr_audit.report.tables import masked_table

    if recipes_in is not None and recipes_out is not None:
        raise ConfigError("--recipes-in and --recipes-out exclude each other; fix: pass one of them")
    options = MaskedOptions.from_mapping(
        {
            "kind": kind,
            "method": method,
            "pad": pad,
            "gate_max_wer": gate_max_wer,
            "min_duration": min_duration,
            "aligner": aligner,
        },
        Surface.cli(),
    )
    params = options.mask_params(seed)
    specs = model_specs(model)
    check_output_file(recipes_out, "--recipes-out")  # outputs checked before any model runs
    check_output_file(json_out, "--json")
    recipes = read_recipes(recipes_in) if recipes_in is not None else None
    corp = load_clips(corpus, limit)
    engine = None if recipes is not None else get_aligner(options.aligner)
    with store_session(store) as st:
        result = run_masked(
            load_backends(specs),
            corp,
            st,
            params,
            aligner=engine,
            recipes=recipes,
            progress=lambda msg: err_console.print(msg, highlight=False),
        )
    if recipes_out is not None:
        write_recipes(recipes_out, result.recipes)
        err_console.print(f"wrote {len(result.recipes)} recipe(s) to {recipes_out}", highlight=False)
    data = {**result.to_dict(), "corpus": corp.source}
    console.print(masked_table(data, corp.name))
    print_failures(data["failures"])
    write_json(json_out, data)


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
    from asr_audit.align import get_aligner
    from asr_audit.options import Surface
    from asr_audit.probes.audio.lift import LiftOptions, run_lift
    from asr_audit.probes.audio.masked import read_recipes
    from asr_audit.report.tables import lift_table

    lift_options = LiftOptions.from_mapping(
        {"spans": spans, "method": method, "aligner": aligner, "gate_max_wer": gate_max_wer, "decoys": decoys},
        Surface.cli(),
    )
    specs = model_specs(model)
    check_output_file(json_out, "--json")  # before any model runs
    options: dict[str, Any] = {}
    if spans == "refdis":
        if refdis is None:
            raise ConfigError("--spans refdis needs --refdis PATH (the JSON of `asr-audit refdis --json`)")
        try:
            options["refdis"] = json.loads(refdis.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputFileError(
                refdis, f"cannot read refdis JSON ({exc})", "pass the file `asr-audit refdis --json` wrote"
            ) from None
    if spans == "masked":
        options["mask_params"] = lift_options.mask_params(seed)
        options["recipes"] = read_recipes(recipes_in) if recipes_in is not None else None
        options["aligner"] = None if recipes_in is not None else get_aligner(lift_options.aligner)
    corp = load_clips(corpus, limit)
    with store_session(store) as st:
        result = run_lift(
            load_backends(specs),
            corp,
            st,
            lift_options.spans,
            seed=seed,
            n_resamples=lift_options.resamples,
            gate_max_wer=lift_options.gate_max_wer,
            decoys=lift_options.decoys,
            **options,
        )
    data = {**result.to_dict(), "corpus": corp.source}
    console.print(lift_table(data, corp.name, spans))
    print_failures(data["failures"])
    write_json(json_out, data)


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
    from asr_audit.align import get_aligner
    from asr_audit.options import Surface
    from asr_audit.probes.audio.continuation import ContinuationOptions, run_continuation
    from asr_audit.report.tables import continuation_table

    options = ContinuationOptions.from_mapping(
        {"hide_words": hide_words, "extra_tokens": extra_tokens, "aligner": aligner}, Surface.cli()
    )
    specs = model_specs(model)
    check_output_file(json_out, "--json")  # before any model runs
    corp = load_clips(corpus, limit)
    with store_session(store) as st:
        data = run_continuation(
            load_backends(specs),
            corp,
            st,
            options.hide_words,
            extra_tokens=options.extra_tokens,
            aligner=get_aligner(options.aligner),
        )
    data["corpus"] = corp.source
    console.print(continuation_table(data, corp.name))
    print_failures(data["failures"])
    write_json(json_out, data)
