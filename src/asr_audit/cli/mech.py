"""``asr-audit mech capture|direction|steer|patch``: the white-box layer on PyTorch backends (flags:
``mechrun.capture.FLAGS``, ``mechrun.direction.FLAGS``, ``mechrun.probe.FLAGS``, ``mechrun.patch.FLAGS``)."""

from __future__ import annotations

import typer

from asr_audit.api import mech_steer_from
from asr_audit.cli import app, console, err_console, examples, split_list
from asr_audit.cli.common import write_json
from asr_audit.cli.probe_verbs import Args, verb
from asr_audit.mech.directions import save_direction
from asr_audit.mechrun import capture as capturing
from asr_audit.mechrun import direction as directions
from asr_audit.mechrun import patch as patching
from asr_audit.mechrun import probe as steering
from asr_audit.outputs import check_output_dir
from asr_audit.paths import cache_dir
from asr_audit.probes.core.flags import CORPUS, JSON, SEED, STORE

mech_app = typer.Typer(
    help="White-box mechanism: capture activations, find directions, steer, patch.",
    epilog=examples(*directions.EXAMPLES),
    no_args_is_help=True,
)
app.add_typer(mech_app, name="mech")


@verb(mech_app, "capture", capturing.FLAGS, examples=capturing.EXAMPLES)
def capture(a: Args) -> None:
    """Capture activations at hook sites of a PyTorch model with hook sites, streamed to disk (decoder
    sites teacher-forced on the reference)."""
    sites = capturing.check_capture(a["sites"], a["pool"], a["dtype"])  # every option before the model loads
    check_output_dir(a["out"], "--out", force=True)
    corp = capturing.speaker_clips(a["corpus"], a["speaker"], a["limit"])
    backend = capturing.sites_backend(a["model"])
    options = {"pool": a["pool"], "dtype": a["dtype"], "batch_size": a["batch_size"]}
    cap = capturing.capture_corpus(backend, corp, sites, a["out"], **options)
    console.print(cap.summary(), highlight=False)


@verb(mech_app, "direction", directions.FLAGS, examples=directions.EXAMPLES)
def direction(a: Args) -> None:
    """Diff-in-means direction between two captures, with a layer sweep of held-out AUC."""
    sets = capturing.load_capture(a["set_a"]), capturing.load_capture(a["set_b"])
    sites = split_list(a["sites"], "--sites")
    rows, chosen, d = directions.sweep_direction(
        a["name"], *sets, sites, a["site"], k=a["k"], holdout=a["holdout"], seed=a["seed"]
    )
    path = save_direction(d, a["directions"] or cache_dir() / "directions")
    for line in directions.sweep_lines(rows, chosen, a["name"], a["k"], path):
        console.print(line, highlight=False)
    write_json(a["json_out"], {"sweep": [r.to_dict() for r in rows], "site": chosen, "direction": d.to_dict()})


@verb(mech_app, "steer", (CORPUS, SEED, STORE, JSON), probe=steering.MECH)
def steer(a: Args) -> None:
    """Run under an intervention and its controls; accept-ref on planted sites, flips, WER (the mech
    probe of asr-audit run, on one PyTorch model with hook sites)."""
    run = mech_steer_from(a["corpus"], a.given, a.surface, seed=a["seed"], store=a["store"])
    for line in run.steer.lines():
        console.print(line, highlight=False)
    write_json(a["json_out"], {**run.table(), "hypotheses": {k: dict(v) for k, v in run.steer.hypotheses.items()}})


@verb(mech_app, "patch", patching.FLAGS, examples=patching.EXAMPLES)
def patch(a: Args) -> None:
    """Activation patching: P(reference rendering) per planted edit, before and after a site swap (a
    PyTorch model with hook sites and the score capability)."""
    sites = split_list(a["sites"], "--sites") or []
    result = patching.patch_with_donors(
        a["model"], a["corpus"], a["truth"], sites, a["donor_model"], a["donor_speaker"], a["speaker"], a["limit"]
    )
    for line in result.lines():
        console.print(line, highlight=False)
    err_console.print(f"{len(result.edits)} edit(s) patched", highlight=False)
    write_json(a["json_out"], result.to_dict())
