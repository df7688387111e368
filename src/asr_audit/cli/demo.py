"""``asr-audit demo``: a complete audit on data shipped with the package, no network needed.

The demo is an ordinary experiment spec (see :func:`demo_spec`) run by the ordinary runner:

* the bundled offline models (Whisper tiny.en and base through CTranslate2, PocketSphinx) on
  the bundled real LibriVox clips;
* a small generated parliament-style benchmark with planted reference errors, rendered with
  offline TTS voices, when the calibration generator and a voice are available;
* the paper's VoxPopuli example predictions (five models, 150 clips).

It writes ``report.html`` (and results.json, tables, plots) and prints where it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from asr_audit.cli import app, console, examples

DEMO_MODELS = (("whisper-tiny.en", "whisper-tiny.en"), ("whisper-base", "whisper-base"), ("sphinx", "sphinx:en-us"))


def demo_spec(out: Path, audio: bool = True, calib_dir: Path | None = None, seed: int = 0) -> dict[str, Any]:
    """The demo's experiment spec as a TOML-shaped dict."""
    from asr_audit.data import LIBRIVOX_MANIFEST, VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL

    corpora: list[dict[str, Any]] = []
    if audio:
        corpora.append(
            {
                "name": "librivox",
                "spec": str(LIBRIVOX_MANIFEST),
                # three panel models: too few for leave-one-out (it needs 3 voters besides the held-out one)
                "probes": {"refdis": {"min_panel": 2, "loo": False}, "masked": {"skip": True}},
            }
        )
        if calib_dir is not None:
            corpora.append(
                {
                    "name": "generated-parliament",
                    "spec": str(calib_dir / "calib-train.jsonl"),
                    "probes": {
                        "refdis": {"min_panel": 2, "loo": False},  # three panel models: no leave-one-out
                        "miner_calibration": {"truth": str(calib_dir), "split": "train", "min_panel": 2, "loo": False},
                    },
                }
            )
    corpora.append(
        {"name": "voxpopuli-examples", "predictions": str(VOXPOPULI_EXAMPLES), "panel": list(VOXPOPULI_PANEL)}
    )
    return {
        "title": "asr-audit demo",
        "seed": seed,
        "output": str(out),
        "store": str(out / "store.sqlite"),
        "normalizer": "whisper",
        "corpus": corpora,
        "model": [{"name": n, "spec": s} for n, s in DEMO_MODELS] if audio else [],
        "panel": {"models": [n for n, _ in DEMO_MODELS] if audio else []},
        "probes": {
            "refdis": {"preset": "paper"},
            "switch_rate": {"min_per_arm": 3},
            "miner_calibration": {"preset": "paper"},
            **(
                {
                    "masked": {
                        "kind": "number",
                        "method": "silence",
                        "max_per_clip": 1,
                        "models": ["whisper-tiny.en", "whisper-base"],
                    }
                }
                if audio
                else {}
            ),
        },
    }


DEMO_CALIB_SENTENCES = 32
DEMO_CALIB_VOICES = ("slt", "rms")


def _calibration_set(out: Path, seed: int) -> Path | None:
    """Build the small generated benchmark (32 sentences x 2 flite voices; deterministic for the seed).

    ``None`` (and a note) when no TTS voice is installed: the rest of the demo still runs.
    """
    from asr_audit.calib.build import build_calibration
    from asr_audit.calib.generate import CalibConfig
    from asr_audit.errors import AuditError

    target = out / "generated-benchmark"
    try:
        result = build_calibration(target, CalibConfig(n_sentences=DEMO_CALIB_SENTENCES), DEMO_CALIB_VOICES, seed)
    except AuditError as exc:
        console.print(Text.assemble(("skipping the generated benchmark:", "yellow"), f" {exc}"))
        return None
    if result.n_clips == 0:
        console.print(
            Text.assemble(
                ("skipping the generated benchmark:", "yellow"),
                f" no voice could synthesize ({'; '.join(r for _, r in result.failures[:1])})",
            )
        )
        return None
    return target


@app.command(
    epilog=examples(
        (
            "asr-audit demo",
            "the full demo into ./asr-audit-demo; the first run trains the organism, a rerun reads the store",
        ),
        ("asr-audit demo --no-audio --out demo-preds", "only the prediction-file probes, no inference"),
    )
)
def demo(
    out: Path = typer.Option(Path("asr-audit-demo"), "--out", help="Output folder for the report and results."),
    seed: int = typer.Option(0, "--seed"),
    no_audio: bool = typer.Option(False, "--no-audio", help="Only the prediction-file probes (no model inference)."),
    no_progress: bool = typer.Option(False, "--no-progress"),
) -> None:
    """Run a complete audit on bundled data and models and write the HTML report."""
    from asr_audit.runner.run import LocalExecutor, run_experiment
    from asr_audit.runner.spec import parse_spec

    out = out.resolve()
    calib = None if no_audio else _calibration_set(out, seed)
    spec = parse_spec(demo_spec(out, audio=not no_audio, calib_dir=calib, seed=seed), "<demo spec>")
    console.rule("asr-audit demo")
    console.print(
        "corpora: "
        + ", ".join(c.name for c in spec.corpora)
        + (("; models: " + ", ".join(m.spec for m in spec.models)) if spec.models else "")
    )
    outcome = run_experiment(spec, executor=LocalExecutor(not no_progress), log=console.print)
    results = outcome.results
    from asr_audit.report.tables import refdis_table

    for entry in results["probes"]:
        if entry["probe"] == "refdis":
            console.print(Text(entry["corpus"], "bold"))
            console.print(refdis_table(entry["result"]))
    console.print(
        f"{outcome.n_computed} transcriptions computed, {outcome.n_cached} from the store; "
        f"{len(results['failures'])} failure(s)"
    )
    console.print(Text.assemble(("report:", "bold green"), f" {outcome.report}"))
