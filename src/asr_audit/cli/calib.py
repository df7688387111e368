"""``asr-audit calib build|score``: a TTS benchmark with planted reference errors, and the
consensus miner's precision and recall on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from asr_audit.cli import app, console, examples, split_list
from asr_audit.errors import ConfigError
from asr_audit.outputs import check_output_dir, check_output_file

calib_app = typer.Typer(
    help="Calibration benchmark with planted ground truth: build it, score the miner on it.",
    epilog=examples(
        ("asr-audit calib build -o calib/", "the seeded benchmark with planted reference errors"),
        ("asr-audit calib score --corpus calib/ --preds preds/ --panel m1,m2,m3", "the miner's precision and recall"),
    ),
    no_args_is_help=True,
)
app.add_typer(calib_app, name="calib")


def parse_weights(value: str | None, flag: str) -> tuple[tuple[str, float], ...] | None:
    """``a,b`` or ``a=2,b=1`` as (name, weight) pairs; a bare name weighs 1.

    >>> parse_weights("start=0.5,end", "--positions")
    (('start', 0.5), ('end', 1.0))
    """
    items = split_list(value, flag)
    if items is None:
        return None
    out = []
    for item in items:
        name, _, weight = item.partition("=")
        try:
            out.append((name.strip(), float(weight) if weight else 1.0))
        except ValueError:
            raise ConfigError(
                f"{flag}: weight {weight!r} of {name!r} is not a number; fix: e.g. {flag} a=2,b=1"
            ) from None
    return tuple(out)


def default_voices(language: str) -> list[str]:
    """The voices ``calib build`` uses without ``--voices``: four flite voices in English, the
    installed voices of ``language`` otherwise (an error naming the fix when there are none)."""
    if language == "en":
        return ["slt", "rms", "awb", "kal"]
    from asr_audit.audio.voices import voices_for_language

    found = voices_for_language(language)
    if not found:
        raise ConfigError(
            f"no installed TTS voice speaks {language!r}; fix: apt-get install espeak-ng, or register one "
            f"with language = {language!r} and pass it with --voices"
        )
    return found


@calib_app.command(
    "build",
    epilog=examples(
        ("asr-audit calib build -o calib/ --n-sentences 100", "100 sentences, planted errors, every voice")
    ),
)
def build(
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write the set into."),
    n_sentences: int = typer.Option(200, "--n-sentences", help="Distinct sentences (each rendered by every voice)."),
    voices: str | None = typer.Option(
        None,
        "--voices",
        help="TTS voices (short flite names or any registered voice); default slt,rms,awb,kal in English, "
        "the installed voices of --language otherwise (espeak-ng: espeak-es, espeak-fr, espeak-de, ...).",
    ),
    language: str = typer.Option(
        "en", "--language", help="Language of the set: en, es, fr or de (templates, numbers, conventions, voices)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed: the same seed gives byte-identical manifests and truth."),
    error_rate: float = typer.Option(0.4, "--error-rate", help="Share of sentences with planted reference errors."),
    word_error_rate: float = typer.Option(0.03, "--word-error-rate", help="Target share of reference words in error."),
    kinds: str | None = typer.Option(
        None, "--kinds", help="Error kinds and weights, e.g. spurious_insertion_in_reference=2,substitution"
    ),
    positions: str | None = typer.Option(
        None, "--positions", help="Position weights, e.g. start=0.4,middle=0.2,end=0.4"
    ),
    test_fraction: float = typer.Option(0.2, "--test-fraction", help="Share held out as the test split."),
    split_by: str = typer.Option("sentence", "--split-by", help="sentence | template (hold out whole templates)."),
    convention_rate: float = typer.Option(
        1.0, "--convention-rate", help="Share of convention sites the record rewrites."
    ),
) -> None:
    """Generate sentences, plant labelled reference errors, synthesize every voice, write manifests + truth."""
    from rich.progress import Progress

    from asr_audit.calib.build import build_calibration
    from asr_audit.calib.generate import CalibConfig
    from asr_audit.text.languages import primary_language

    check_output_dir(out, "--out", force=True)  # a file or a path under a file fails before any synthesis
    extra: dict[str, Any] = {  # CalibConfig keyword arguments given on the command line
        k: v
        for k, v in (("kinds", parse_weights(kinds, "--kinds")), ("positions", parse_weights(positions, "--positions")))
        if v is not None
    }
    config = CalibConfig(
        n_sentences=n_sentences,
        error_rate=error_rate,
        word_error_rate=word_error_rate,
        test_fraction=test_fraction,
        split_by=split_by,
        convention_rate=convention_rate,
        language=primary_language(language),
        **extra,
    )
    names = split_list(voices, "--voices") or default_voices(config.language)
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("synthesizing", total=None)
        result = build_calibration(
            out, config, names, seed, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
    r = result.rates
    console.print(f"wrote {result.n_clips} clips ({result.n_sentences} sentences x {len(names)} voices) to {out}")
    console.print(
        f"planted errors on {r['sentences_with_error']}/{r['sentences']} sentences "
        f"({r['error_rate']:.1%}), {r['error_words']}/{r['reference_words']} reference words "
        f"({r['word_error_rate']:.2%}); items by kind: {r['items_by_kind']}"
    )
    for clip_id, reason in result.failures:
        console.print(Text.assemble(("skipped", "yellow"), f" {clip_id}: {reason}"), highlight=False)


@calib_app.command(
    "score",
    epilog=examples(
        (
            "asr-audit calib score --corpus calib/ --preds preds/ --panel m1,m2,m3",
            "the miner's precision and recall against the planted truth, and its precision-recall curve",
        ),
        (
            "asr-audit calib score --corpus calib/ --preds preds/ --panel m1,m2,m3 --preset paper "
            "--min-confidence 0.4 --json score.json",
            "the calibrated operating point (docs/calibration.md)",
        ),
    ),
)
def score(
    corpus: Path = typer.Option(..., "--corpus", help="Folder written by `asr-audit calib build`."),
    preds: Path = typer.Option(..., "--preds", help="Prediction files for the set's clips (one per model)."),
    panel: str = typer.Option(..., "--panel", help="Comma-separated panel models (consensus miners)."),
    preset: str = typer.Option(
        "anchor", "--preset", help="anchor (boundary edits, 0.8) | paper (0.75, interior edits)."
    ),
    min_confidence: float | None = typer.Option(
        None,
        "--min-confidence",
        help="Operating point: score only edits whose confidence is at least this (default: all edits; "
        "calibrated: 0.4, docs/calibration.md). "
        "The precision-recall curve always spans every edit.",
    ),
    dataset: str | None = typer.Option(
        None, "--dataset", help="Pick one dataset in a folder holding several (e.g. calib-test)."
    ),
    json_out: Path | None = typer.Option(
        None, "--json", help="Write the full score (every edit and missed error) as JSON."
    ),
) -> None:
    """Mine the calibration set's predictions with the panel; report the miner's precision and recall,
    and its precision-recall curve over the edits' confidence (the miner_calibration probe of asr-audit run)."""
    from asr_audit.api import calib_score_from
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.options import Surface
    from asr_audit.report.tables import calib_curve_table, calib_score_table, to_json, write_text

    check_output_file(json_out, "--json")
    values = {"truth": str(corpus), "preset": preset, "min_confidence": min_confidence}
    pset = load_predictions(preds, dataset)
    score = calib_score_from(pset, split_list(panel, "--panel") or [], values, Surface.cli(truth="--corpus"))
    data = score.to_dict()
    console.print(calib_score_table(data))
    console.print(calib_curve_table(data))
    if json_out:
        console.print(f"wrote {write_text(json_out, to_json(data))}")
