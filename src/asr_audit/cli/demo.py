"""``asr-audit demo``: a complete audit on data shipped with the package, no network needed."""

from __future__ import annotations

from pathlib import Path

import typer

from asr_audit.cli import app, console


@app.command()
def demo(
    out: Path = typer.Option(Path("asr-audit-demo"), "--out", help="Output folder for JSON/CSV results."),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Run the prediction-file probes on the paper's VoxPopuli example predictions (5 models, 150 clips)."""
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL
    from asr_audit.probes.refdis import preset_params
    from asr_audit.probes.refdis_run import run_refdis
    from asr_audit.report.tables import refdis_csv, refdis_table, to_json, write_text

    preds = load_predictions(VOXPOPULI_EXAMPLES)
    console.rule("asr-audit demo: VoxPopuli example predictions (Hume AI release, Apache-2.0; CC0 transcripts)")
    console.print(f"{len(preds.references)} clips x {len(preds.models)} models; panel: {', '.join(VOXPOPULI_PANEL)}")
    for name, params in (
        ("anchor-no-loo", preset_params("anchor", loo=False)),
        ("anchor", preset_params("anchor")),
        ("paper", preset_params("paper")),
    ):
        result = run_refdis(preds, VOXPOPULI_PANEL, params, seed=seed)
        console.print(refdis_table(result))
        write_text(out / f"refdis-{name}.json", to_json(result.to_dict()))
        write_text(out / f"refdis-{name}.csv", refdis_csv(result))
    try:
        from asr_audit.cli.ortho import render_switch_rate  # registered when the ortho probe is installed
    except ImportError:
        render_switch_rate = None
    if render_switch_rate is not None:
        render_switch_rate(preds, out, seed)
    console.print(f"[bold]results written to[/] {out.resolve()}")
