"""``asr-audit calib build|score``: a TTS benchmark with planted reference errors, and the
consensus miner's precision and recall on it (flags: ``calib.generate.FLAGS``, ``calib.probe.FLAGS``)."""

from __future__ import annotations

from dataclasses import replace

import typer
from rich.progress import Progress
from rich.text import Text

from asr_audit.api import calib_score_from
from asr_audit.calib import generate
from asr_audit.calib.build import build_calibration, default_voices
from asr_audit.calib.probe import MINER_CALIBRATION
from asr_audit.cli import app, console, examples, split_list
from asr_audit.cli.probe_verbs import Args, verb
from asr_audit.corpus.predfiles import load_predictions
from asr_audit.options import REQUIRED
from asr_audit.outputs import check_output_dir
from asr_audit.probes.core.flags import DATASET, JSON, PANEL, PREDS
from asr_audit.report.tables import calib_curve_table, calib_score_table, to_json

calib_app = typer.Typer(
    help="Calibration benchmark with planted ground truth: build it, score the miner on it.",
    epilog=examples(*generate.EXAMPLES, MINER_CALIBRATION.examples[0]),
    no_args_is_help=True,
)
app.add_typer(calib_app, name="calib")


@verb(calib_app, "build", generate.FLAGS, examples=generate.EXAMPLES)
def build(a: Args) -> None:
    """Generate sentences, plant labelled reference errors, synthesize every voice, write manifests + truth.

    The same --seed gives byte-identical manifests and truth."""
    check_output_dir(a["out"], "--out", force=True)  # a file or a path under a file fails before any synthesis
    config = generate.config_from(a.values)
    names = split_list(a["voices"], "--voices") or default_voices(config.language)
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("synthesizing", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        result = build_calibration(a["out"], config, names, a["seed"], progress=progress)
    for line in result.summary(len(names)):
        console.print(line)
    for clip_id, reason in result.failures:
        console.print(Text.assemble(("skipped", "yellow"), f" {clip_id}: {reason}"), highlight=False)


@verb(calib_app, "score", (PREDS, replace(PANEL, default=REQUIRED), DATASET, JSON), probe=MINER_CALIBRATION)
def score(a: Args) -> None:
    """Mine the calibration set's predictions with the panel; report the miner's precision and recall,
    and its precision-recall curve over the edits' confidence (the miner_calibration probe of asr-audit run).
    --min-confidence sets the operating point; the curve always spans every edit."""
    pset = load_predictions(a["preds"], a["dataset"])
    data = calib_score_from(pset, split_list(a["panel"], "--panel") or [], a.given, a.surface).to_dict()
    console.print(calib_score_table(data))
    console.print(calib_curve_table(data))
    a.write("json_out", to_json(data))
