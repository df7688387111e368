"""Audio probes: ``masked`` (masked-entity recovery), ``lift`` (teacher-forced audio lift) and
``continue`` (forced continuation with end-of-text banned)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from asr_audit.cli import app, console, err_console
from asr_audit.errors import ConfigError, InputFileError

_CORPUS_HELP = "Manifest JSONL, LibriSpeech folder, Kaldi data dir, or hf-dataset:<id>/<config>/<split>."
_STORE_HELP = "Result store (SQLite); default: user cache dir or $ASR_AUDIT_STORE."


def _specs(value: str) -> list[str]:
    from asr_audit.models.base import parse_spec

    items = [v.strip() for v in value.split(",")]
    if not all(items) or len(set(items)) != len(items):
        raise ConfigError(f"--model {value!r} has an empty or repeated item; fix: e.g. --model whisper-tiny.en,whisper-base")
    for spec in items:
        parse_spec(spec)  # fail on a bad spec before any work
    return items


def _write_json(path: Path | None, data: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n", encoding="utf-8")
    err_console.print(f"wrote {path}", highlight=False)


def _finite(data: Any) -> Any:
    """NaN / inf become None so the JSON stays standard."""
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_finite(v) for v in data]
    if isinstance(data, float) and not math.isfinite(data):
        return None
    return data


def _fmt(x: Any, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _print_failures(failures: list[dict[str, str]]) -> None:
    if failures:
        err_console.print(Text(f"{len(failures)} clip(s) gave no items:", "yellow"), highlight=False)
        for f in failures:
            err_console.print(f"  {f['clip_id']}: {f['reason']}", highlight=False, soft_wrap=True)


@app.command()
def masked(
    model: str = typer.Option(..., "--model", "-m", help="Model spec(s), comma-separated."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    kind: str = typer.Option("number", "--kind", help="What to hide: number | name | word."),
    method: str = typer.Option("silence", "--method", help="How to hide it: silence | noise | cut."),
    pad: float = typer.Option(0.05, "--pad", min=0.0, help="Seconds added on each side (never into the next word)."),
    gate_max_wer: float = typer.Option(0.3, "--gate-max-wer", min=0.0, help="Intelligibility gate: unmasked clip WER at most this."),
    min_duration: float = typer.Option(0.15, "--min-duration", min=0.0, help="Shortest aligned target, seconds."),
    recipes_out: Optional[Path] = typer.Option(None, "--recipes-out", help="Write the masking recipes (JSONL)."),
    recipes_in: Optional[Path] = typer.Option(None, "--recipes-in", help="Re-apply exported recipes instead of aligning."),
    aligner: str = typer.Option("sphinx", "--aligner", help="Forced aligner: sphinx | whisper."),
    seed: int = typer.Option(0, "--seed", help="Seed of the noise fill (recorded in the recipes)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N clips of the corpus."),
    store: Optional[Path] = typer.Option(None, "--store", help=_STORE_HELP),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the full result (models + per-item records)."),
) -> None:
    """Masked-entity recovery: silence a number's audio, keep it in the reference, count who still writes it.

    accept-ref = recovered / eligible items (eligible: the model gets the target and the clip
    right without the mask), with a Wilson 95% interval.
    """
    from asr_audit.align import get_aligner
    from asr_audit.corpus.spec import load_corpus
    from asr_audit.models.base import load_backend
    from asr_audit.probes.masked import MaskParams, read_recipes, run_masked, write_recipes
    from asr_audit.probes.targets import TargetRule
    from asr_audit.store.sqlite import open_store

    if recipes_in is not None and recipes_out is not None:
        raise ConfigError("--recipes-in and --recipes-out exclude each other; fix: pass one of them")
    params = MaskParams(TargetRule(kind, min_duration), method, pad, gate_max_wer, seed)
    specs = _specs(model)
    recipes = read_recipes(recipes_in) if recipes_in is not None else None
    corp = load_corpus(corpus).limit(limit)
    engine = None if recipes is not None else get_aligner(aligner)
    st = open_store(store)
    try:
        backends = [load_backend(s) for s in specs]
        result = run_masked(backends, corp, st, params, aligner=engine, recipes=recipes,
                            progress=lambda msg: err_console.print(msg, highlight=False))
    finally:
        st.close()
    if recipes_out is not None:
        write_recipes(recipes_out, result.recipes)
        err_console.print(f"wrote {len(result.recipes)} recipe(s) to {recipes_out}", highlight=False)
    data = {**result.to_dict(), "corpus": corp.source}
    table = Table(title=f"masked-{kind} recovery ({method}) on {corp.name}: {len(result.recipes)} item(s)")
    for col in ("model", "accept-ref", "95% CI", "k/n", "gated out", "failed"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for m in result.models:
        table.add_row(m.model, _fmt(m.accept_ref), f"{_fmt(m.ci_low)}-{_fmt(m.ci_high)}", f"{m.k}/{m.n}",
                      str(m.n_gated_out), str(m.n_failed))
    console.print(table)
    _print_failures(data["failures"])
    _write_json(json_out, _finite(data))


@app.command()
def lift(
    model: str = typer.Option(..., "--model", "-m", help="Model spec(s) with the score capability, comma-separated."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    spans: str = typer.Option("masked", "--spans", help="Which spans: masked | refdis | ortho | full."),
    refdis: Optional[Path] = typer.Option(None, "--refdis", help="For --spans refdis: the JSON of `asr-audit refdis --json`."),
    recipes_in: Optional[Path] = typer.Option(None, "--recipes-in", help="For --spans masked: exported mask recipes."),
    method: str = typer.Option("silence", "--method", help="For --spans masked: silence | noise | cut."),
    aligner: str = typer.Option("sphinx", "--aligner", help="Forced aligner for --spans masked."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N clips of the corpus."),
    store: Optional[Path] = typer.Option(None, "--store", help=_STORE_HELP),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the full result (models + per-item records)."),
) -> None:
    """Teacher-forced audio lift: (log p(r|x) - log p(r|silence)) / chars, per span, in nats per character."""
    from asr_audit.align import get_aligner
    from asr_audit.corpus.spec import load_corpus
    from asr_audit.models.base import load_backend
    from asr_audit.probes.lift import run_lift
    from asr_audit.probes.masked import MaskParams, read_recipes
    from asr_audit.store.sqlite import open_store

    specs = _specs(model)
    options: dict[str, Any] = {}
    if spans == "refdis":
        if refdis is None:
            raise ConfigError("--spans refdis needs --refdis PATH (the JSON of `asr-audit refdis --json`)")
        try:
            options["refdis"] = json.loads(refdis.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputFileError(refdis, f"cannot read refdis JSON ({exc})", "pass the file `asr-audit refdis --json` wrote") from None
    if spans == "masked":
        options["mask_params"] = MaskParams(method=method, seed=seed)
        options["recipes"] = read_recipes(recipes_in) if recipes_in is not None else None
        options["aligner"] = None if recipes_in is not None else get_aligner(aligner)
    corp = load_corpus(corpus).limit(limit)
    st = open_store(store)
    try:
        result = run_lift([load_backend(s) for s in specs], corp, st, spans, seed=seed, **options)
    finally:
        st.close()
    data = {**result.to_dict(), "corpus": corp.source}
    table = Table(title=f"audio lift ({spans} spans) on {corp.name}, nats/char")
    for col in ("model", "condition", "lift", "95% CI", "compare r-a", "n", "passes/item", "items/s"):
        table.add_column(col, justify="left" if col in ("model", "condition") else "right")
    for m in result.models:
        for cond, c in m["conditions"].items():
            table.add_row(m["model"], cond, _fmt(c["lift"]["mean"]), f"{_fmt(c['lift']['ci_low'])}-{_fmt(c['lift']['ci_high'])}",
                          _fmt(c["compare"]["mean"]), str(c["lift"]["n"]), _fmt(m["passes_per_item"], 2),
                          _fmt(m["items_per_s"], 2))
        for pair, est in m["paired"].items():
            table.add_row(m["model"], f"paired {pair}", _fmt(est["mean"]), f"{_fmt(est['ci_low'])}-{_fmt(est['ci_high'])}",
                          "-", str(est["n"]), "", "")
    console.print(table)
    _print_failures(data["failures"])
    _write_json(json_out, _finite(data))


@app.command("continue")
def continue_(
    model: str = typer.Option(..., "--model", "-m", help="PyTorch Whisper model spec(s) (hf:..., whisper-tiny.en-pt)."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    hide_words: int = typer.Option(3, "--hide-words", min=1, help="Reference words cut off the end of each clip."),
    extra_tokens: int = typer.Option(16, "--extra-tokens", min=1, help="Steps with end-of-text banned after the plain transcript."),
    aligner: str = typer.Option("sphinx", "--aligner", help="Forced aligner: sphinx | whisper."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N clips of the corpus."),
    store: Optional[Path] = typer.Option(None, "--store", help=_STORE_HELP),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the full result (models + per-clip records)."),
) -> None:
    """Forced continuation: cut each clip before its last words, ban end-of-text, count hidden words that leak."""
    from asr_audit.align import get_aligner
    from asr_audit.corpus.spec import load_corpus
    from asr_audit.models.base import load_backend
    from asr_audit.probes.continuation import run_continuation
    from asr_audit.store.sqlite import open_store

    specs = _specs(model)
    corp = load_corpus(corpus).limit(limit)
    st = open_store(store)
    try:
        data = run_continuation([load_backend(s) for s in specs], corp, st, hide_words, extra_tokens=extra_tokens,
                                aligner=get_aligner(aligner))
    finally:
        st.close()
    data["corpus"] = corp.source
    table = Table(title=f"forced continuation on {corp.name}: last {hide_words} word(s) hidden")
    for col in ("model", "leak rate", "95% CI", "k/n words", "clips leaking", "failed"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for m in data["models"]:
        table.add_row(m["model"], _fmt(m["leak_rate"]), f"{_fmt(m['ci_low'])}-{_fmt(m['ci_high'])}", f"{m['k']}/{m['n']}",
                      f"{m['n_clips_leaking']}/{m['n_clips']}", str(m["n_failed"]))
    console.print(table)
    _print_failures(data["failures"])
    _write_json(json_out, _finite(data))
