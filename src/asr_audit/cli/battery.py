"""Verb ``battery``: the trigger battery over a corpus, one accept-ref measure, a grid of conditions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from asr_audit.cli import app, console, split_list
from asr_audit.errors import ConfigError


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def battery_table(result: dict) -> Table:
    """Terminal table: one row per condition, one column per model (accept-ref [95% CI] and n)."""
    t = Table(title=f"trigger battery — {result['measure']} on {result['corpus']} (accept-ref, Wilson 95%)")
    t.add_column("condition")
    for m in result["models"]:
        t.add_column(m, justify="right")
    diffs = {(d["model"], d["condition"]): d for d in result["differences"]}
    for cond in result["conditions"]:
        row = [cond]
        for m in result["models"]:
            c = next(x for x in result["cells"] if x["model"] == m and x["condition"] == cond)
            d = diffs.get((m, cond))
            delta = f" Δ{d['estimate']:+.2f}" if d and d["n_items"] else ""
            row.append(f"{_fmt(c['accept_ref'])} [{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}] n={c['n']}{delta}")
        t.add_row(*row)
    return t


def study_table(result: dict) -> Table:
    t = Table(title="opening courtesy: presence in the output (Wilson 95%)")
    for col in ("model", "condition", "presence", "95% CI", "k/n", "note"):
        t.add_column(col)
    for r in result["study"]:
        t.add_row(r["model"], r["condition"], _fmt(r["presence"]), f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]",
                  f"{r['k']}/{r['n']}", r["reason"] or "")
    return t


@app.command("battery")
def battery_cmd(
    model: str = typer.Option(..., "--model", "-m", help="Model spec(s), comma-separated."),
    corpus: str = typer.Option(..., "--corpus", "-c", help="Corpus spec (manifest, LibriSpeech dir, Kaldi dir, hf-dataset:...)."),
    probe: str = typer.Option("refdis", "--probe", help="Measure: refdis | courtesy | ortho | masked."),
    conditions: str = typer.Option(..., "--conditions",
                                   help="Comma-separated: noise:10db,reverb:0.6,truncate:1w0.25s,donor:conv8s,donor:bench8s,voice:flite-slt"),
    spoken: Optional[Path] = typer.Option(None, "--spoken", help="JSONL {id, spoken}: what the audio says, when it differs from the reference."),
    donor_conv: Optional[str] = typer.Option(None, "--donor-conv", help="Conversational donor audio file(s), comma-separated."),
    store: Optional[Path] = typer.Option(None, "--store", help="Result store (SQLite); default: user cache dir or $ASR_AUDIT_STORE."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N clips."),
    seed: int = typer.Option(0, "--seed", help="Seed for noise, donors and bootstrap."),
    resamples: int = typer.Option(1000, "--resamples", min=1, help="Bootstrap resamples."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the result (cells, differences, DiD) as JSON."),
) -> None:
    """Accept-ref of each model under each audio condition, paired against the original audio."""
    from rich.progress import Progress

    from asr_audit.audio.assets import AudioAsset
    from asr_audit.corpus.spec import load_corpus
    from asr_audit.models.base import load_backend
    from asr_audit.probes.battery.battery import PROBES, run_battery
    from asr_audit.probes.battery.conditions import parse_conditions
    from asr_audit.report.tables import write_text
    from asr_audit.runner.probes_battery import load_spoken
    from asr_audit.store.sqlite import open_store

    if probe not in PROBES:
        raise ConfigError(f"--probe {probe!r} is unknown; valid: {', '.join(PROBES)}")
    conds = parse_conditions(split_list(conditions, "--conditions") or [])
    specs = split_list(model, "--model") or []
    donors = [AudioAsset.from_file(p) for p in split_list(donor_conv, "--donor-conv") or []]
    spoken_map = load_spoken(str(spoken)) if spoken else {}
    clips = load_corpus(corpus).limit(limit)
    backends = {s: load_backend(s) for s in specs}
    handle = open_store(str(store) if store else None)
    try:
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task("conditions", total=len(conds))
            done: list[str] = []

            def step(name: str) -> None:
                if done:
                    bar.advance(task)
                done.append(name)
                bar.update(task, description=f"condition {name}")

            res = run_battery(clips, backends, probe, [c.name for c in conds], handle, seed=seed, spoken=spoken_map,
                              conv_donors=donors, n_resamples=resamples, progress=step)
            bar.advance(task)
    finally:
        handle.close()
    out = res.to_dict()
    console.print(battery_table(out))
    if out["study"]:
        console.print(study_table(out))
    if out["failures"]:
        console.print(f"{len(out['failures'])} clip/condition failure(s); see --json")
    if json_out:
        console.print(f"wrote {write_text(json_out, json.dumps(out, indent=2, ensure_ascii=False) + chr(10))}")
