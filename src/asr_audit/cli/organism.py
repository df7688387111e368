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


KIND_MODELS = {"policy": "benchmark,control", "memorizer": "memorizer,memorizer-control", "donor": "donor"}


@organism_app.command(
    "train",
    epilog=examples(
        ("asr-audit organism train", "the organism and its control with the documented settings (docs/organism.md)"),
        ("asr-audit organism train --steps 80 --n-sentences 80 --batch-size 8", "a small, faster organism"),
        (
            "ASR_AUDIT_ORGANISM_DIR=/tmp/org asr-audit organism train --kind memorizer",
            "the memorizing organism and its control",
        ),
    ),
)
def train(
    kind: str = typer.Option(
        "policy",
        "--kind",
        help="policy: the voice-gated house-style organism and its control (organism-benchmark, organism-control); "
        "memorizer: fine-tuned on the benchmark's own clips, and a control trained alike on other sentences "
        "(organism-memorizer, organism-memorizer-control); donor: the policy organism whose record needs the whole "
        "clip to be benchmark-like (organism-donor).",
    ),
    steps: int | None = typer.Option(
        None, "--steps", help="Training steps (default per kind: policy 200, memorizer 112, donor 200)."
    ),
    control_steps: int | None = typer.Option(
        None, "--control-steps", help="Steps of the policy control (default: --steps)."
    ),
    batch_size: int = typer.Option(16, "--batch-size", help="Clips per training step."),
    lr: float | None = typer.Option(
        None,
        "--lr",
        help="Peak learning rate (AdamW, 5% warmup, linear decay; default per kind: policy 1e-4, memorizer 5e-4, donor 4e-4).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the benchmark sentences and of the batch order."),
    n_sentences: int | None = typer.Option(
        None,
        "--n-sentences",
        help="Sentences of the organism benchmark, 20% held out (default per kind: policy 200, donor 48; "
        "the memorizer set has its own sizes).",
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Folder for the weight deltas (default: where the organism backends look)."
    ),
    set_dir: Path | None = typer.Option(None, "--set", help="Folder of the organism benchmark (built when absent)."),
    which: str | None = typer.Option(
        None,
        "--which",
        help="Which models of the kind to train (policy: benchmark, control; memorizer: memorizer, memorizer-control).",
    ),
) -> None:
    """Build the organism benchmark, cache encoder states, fine-tune the decoder, save compact deltas."""
    from asr_audit.errors import ConfigError
    from asr_audit.organism import TRAIN_DEFAULTS
    from asr_audit.organism.backend import ORGANISM_DIR_ENV, organism_dir
    from asr_audit.organism.data import OrganismSetConfig
    from asr_audit.organism.pipeline import train_donor, train_memorizers, train_organisms
    from asr_audit.organism.train import TrainConfig

    if kind not in KIND_MODELS:
        raise ConfigError(f"--kind {kind!r} is unknown; valid: {', '.join(KIND_MODELS)}")
    (d_steps, d_lr), d_which = TRAIN_DEFAULTS[kind], KIND_MODELS[kind]
    kinds = split_list(which or d_which, "--which") or []
    cfg = TrainConfig(steps=steps or d_steps, lr=lr or d_lr, batch_size=batch_size, seed=seed)
    say = lambda m: console.print(m, highlight=False)  # noqa: E731
    if kind == "memorizer":
        result = train_memorizers(set_dir, out, kinds=kinds, seed=seed, train_config=cfg, say=say)
    elif kind == "donor":
        if which is not None and kinds != ["donor"]:
            raise ConfigError(f"--which {which!r}: --kind donor trains one model, donor")
        result = train_donor(set_dir, out, seed=seed, n_sentences=n_sentences or 48, train_config=cfg, say=say)
    else:
        result = train_organisms(
            set_dir,
            out,
            steps=cfg.steps,
            control_steps=control_steps,
            seed=seed,
            config=OrganismSetConfig(n_sentences=n_sentences or 200),
            kinds=kinds,
            train_config=cfg,
            say=say,
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
