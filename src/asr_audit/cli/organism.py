"""``asr-audit organism train``: the benchmark-optimized model organism and its control."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from asr_audit.cli import app, console, examples, split_list

organism_app = typer.Typer(
    help="A Whisper tiny.en trained to recite a benchmark's record in its voice, and a control.",
    epilog=examples(
        ("asr-audit organism train", "train both; then audit them as organism-benchmark and organism-control"),
    ),
    no_args_is_help=True,
)
app.add_typer(organism_app, name="organism")


@organism_app.command(
    "train",
    epilog=examples(
        ("asr-audit organism train", "the organism and its control with the documented settings (docs/organism.md)"),
        ("asr-audit organism train --steps 80 --n-sentences 80 --batch-size 8", "a small, faster organism"),
    ),
)
def train(
    steps: int = typer.Option(200, "--steps", help="Training steps of the organism."),
    control_steps: int | None = typer.Option(None, "--control-steps", help="Steps of the control (default: --steps)."),
    batch_size: int = typer.Option(16, "--batch-size", help="Clips per training step."),
    lr: float = typer.Option(1e-4, "--lr", help="Peak learning rate (AdamW, 5% warmup, linear decay)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the benchmark sentences and of the batch order."),
    n_sentences: int = typer.Option(200, "--n-sentences", help="Sentences of the organism benchmark (20% held out)."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Folder for the weight deltas (default: where the organism backends look)."
    ),
    set_dir: Path | None = typer.Option(None, "--set", help="Folder of the organism benchmark (built when absent)."),
    which: str = typer.Option("benchmark,control", "--which", help="Which models to train: benchmark, control."),
) -> None:
    """Build the organism benchmark, cache encoder states, fine-tune the decoder, save compact deltas."""
    from asr_audit.organism.backend import ORGANISM_DIR_ENV, organism_dir
    from asr_audit.organism.data import OrganismSetConfig
    from asr_audit.organism.pipeline import train_organisms
    from asr_audit.organism.train import TrainConfig

    kinds = split_list(which, "--which") or []
    result = train_organisms(
        set_dir,
        out,
        steps=steps,
        control_steps=control_steps,
        seed=seed,
        config=OrganismSetConfig(n_sentences=n_sentences),
        kinds=kinds,
        train_config=TrainConfig(steps=steps, lr=lr, batch_size=batch_size, seed=seed),
        say=lambda m: console.print(m, highlight=False),
    )
    for kind, path in result.weights.items():
        res = result.results[kind]
        console.print(
            f"{kind}: {len(res.losses)} steps, loss {res.losses[0]:.3f} -> {res.losses[-1]:.3f}, "
            f"{res.n_params / 1e6:.2f} M trained parameters, {res.seconds:.0f} s -> {path}",
            highlight=False,
        )
    for audio, why in result.failures:
        console.print(Text.assemble(("skipped", "yellow"), f" {audio}: {why}"), highlight=False)
    if out is not None and Path(out).resolve() != organism_dir().resolve():
        console.print(
            f"note: the organism backends read {organism_dir()}; set {ORGANISM_DIR_ENV}={out} to use these",
            highlight=False,
        )
