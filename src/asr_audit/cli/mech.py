"""``asr-audit mech capture|direction|steer|patch``: the white-box layer on PyTorch backends (flags:
``mechrun.capture.FLAGS``, ``mechrun.direction.FLAGS``, ``mechrun.probe.FLAGS``, ``mechrun.patch.FLAGS``)."""

from __future__ import annotations

from typing import Any

import typer

from asr_audit.api import mech_steer_from
from asr_audit.calib.truth import load_truth
from asr_audit.cli import app, console, err_console, examples, split_list
from asr_audit.cli.common import load_clips, write_json
from asr_audit.cli.probe_verbs import Args, verb
from asr_audit.corpus.clips import Corpus
from asr_audit.errors import ConfigError
from asr_audit.mech.directions import save_direction
from asr_audit.mech.sites import parse_site
from asr_audit.mechrun import capture as capturing
from asr_audit.mechrun import direction as directions
from asr_audit.mechrun import patch as patching
from asr_audit.mechrun.probe import FLAGS
from asr_audit.models.base import SITES, load_backend, require_capability
from asr_audit.outputs import check_output_dir
from asr_audit.paths import cache_dir
from asr_audit.probes.core.flags import CORPUS, JSON, SEED, STORE

mech_app = typer.Typer(
    help="White-box mechanism: capture activations, find directions, steer, patch.",
    epilog=examples(
        (
            "asr-audit mech direction --a caps/slt --b caps/rms --name voice-slt",
            "a diff-in-means direction, layer sweep",
        ),
    ),
    no_args_is_help=True,
)
app.add_typer(mech_app, name="mech")


def _corpus(corpus: str, speaker: str | None, limit: int | None) -> Any:
    corp = load_clips(corpus)
    if speaker:
        keep = set(split_list(speaker, "--speaker") or [])
        clips = tuple(c for c in corp.clips if c.speaker in keep)
        if not clips:
            raise ConfigError(f"--speaker {speaker}: no clip of {corpus} has that speaker; fix: check the manifest")
        corp = Corpus(corp.name, corp.split, corp.source, clips)
    return Corpus(corp.name, corp.split, corp.source, corp.clips[:limit]) if limit else corp


def _backend(spec: str) -> Any:
    backend = load_backend(spec)
    require_capability(backend, SITES)
    return backend


@verb(
    mech_app,
    "capture",
    capturing.FLAGS,
    examples="Examples:\n\nasr-audit mech capture -m whisper-tiny.en-pt -c calib/calib-test.jsonl --sites encoder.layers.2.out,decoder.layers.2.out --pool mean -o caps/slt --speaker flite-slt",
)
def capture(a: Args) -> None:
    """Capture activations at hook sites of a PyTorch model with hook sites, streamed to disk (decoder
    sites teacher-forced on the reference)."""
    site_list = split_list(a["sites"], "--sites") or []
    if not site_list:
        raise ConfigError("--sites is empty; fix: e.g. --sites encoder.layers.2.out")
    for s in site_list:
        parse_site(s)
    for flag, value, allowed, example in (
        ("--pool", a["pool"], capturing.POOLS, "mean"),
        ("--dtype", a["dtype"], capturing.DTYPES, "float32"),
    ):
        if value not in allowed:  # every option is checked before the model loads
            raise ConfigError(f"{flag} {value!r} is not one of {', '.join(allowed)}; fix: e.g. {flag} {example}")
    check_output_dir(a["out"], "--out", force=True)
    corp, backend = _corpus(a["corpus"], a["speaker"], a["limit"]), _backend(a["model"])
    options = {"pool": a["pool"], "dtype": a["dtype"], "batch_size": a["batch_size"]}
    cap = capturing.capture_corpus(backend, corp, site_list, a["out"], **options)
    rows = sum(c.rows for c in cap.clips)
    console.print(
        f"captured {len(cap.clips)} clip(s), {rows} row(s) per site, {len(cap.sites)} site(s) -> {a['out']}",
        highlight=False,
    )


@verb(
    mech_app,
    "direction",
    directions.FLAGS,
    examples="Examples:\n\nasr-audit mech direction --a caps/slt --b caps/rms --name voice-slt --json sweep.json",
)
def direction(a: Args) -> None:
    """Diff-in-means direction between two captures, with a layer sweep of held-out AUC."""
    sets = capturing.load_capture(a["set_a"]), capturing.load_capture(a["set_b"])
    sites = split_list(a["sites"], "--sites")
    rows, chosen, d = directions.sweep_direction(
        a["name"], *sets, sites, a["site"], k=a["k"], holdout=a["holdout"], seed=a["seed"]
    )
    path = save_direction(d, a["directions"] or cache_dir() / "directions")
    for r in rows:
        console.print(
            f"{r.site:28s} AUC {r.auc:.3f}  |d| {r.norm:.3f}{' *' if r.site == chosen else ''}", highlight=False
        )
    console.print(f"direction {a['name']!r} at {chosen} (k={a['k']}) -> {path}", highlight=False)
    write_json(a["json_out"], {"sweep": [r.to_dict() for r in rows], "site": chosen, "direction": d.to_dict()})


@verb(
    mech_app,
    "steer",
    (CORPUS, SEED, STORE, JSON),
    options=FLAGS.values(),
    examples="Examples:\n\nasr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction voice-slt --speaker flite-slt\n\nasr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction decision-L0,decision-L1,decision-L2,decision-L3 --mode clamp --clamp-at 0.5 --speaker flite-slt\n\nasr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction omission-L1,omission-L2 --mode clamp --positions 1:2 --gate voice-L0 --gate-at 0.5",
)
def steer(a: Args) -> None:
    """Run under an intervention and its controls; accept-ref on planted sites, flips, WER (the mech
    probe of asr-audit run, on one PyTorch model with hook sites)."""
    run = mech_steer_from(a["corpus"], a.given, a.surface, seed=a["seed"], store=a["store"])
    for arm in run.steer.arms:
        r, wer = arm.accept_ref, "-" if arm.wer is None else f"{arm.wer:.3f}"
        rate = f"{r.rate:.3f} [{r.low:.3f}, {r.high:.3f}]" if r.n else "undefined (no sites)"
        opened = f"  gate open {arm.n_open}/{arm.n_clips}" if arm.n_open is not None else ""
        console.print(
            f"{arm.label:12s} accept-ref {rate} ({r.k}/{r.n})  flips ref->spoken {arm.ref_to_spoken}, "
            f"spoken->ref {arm.spoken_to_ref}  WER {wer}{opened}",
            highlight=False,
        )
    share = run.steer.effect_share()
    console.print("effect share: " + ("undefined (clean rate 0)" if share is None else f"{share:.3f}"), highlight=False)
    write_json(a["json_out"], {**run.table(), "hypotheses": {k: dict(v) for k, v in run.steer.hypotheses.items()}})


@verb(
    mech_app,
    "patch",
    patching.FLAGS,
    examples="Examples:\n\nasr-audit mech patch -m organism-benchmark -c set/calib-test.jsonl --truth set --speaker flite-slt --donor-model whisper-tiny.en-pt --sites encoder.out,decoder.layers.3.out",
)
def patch(a: Args) -> None:
    """Activation patching: P(reference rendering) per planted edit, before and after a site swap (a
    PyTorch model with hook sites and the score capability)."""
    donor_model, speaker = a["donor_model"], a["donor_speaker"]
    if donor_model is None and speaker is None:
        raise ConfigError("patching needs a donor; fix: pass --donor-model SPEC and/or --donor-speaker VOICE")
    corp, truth, backend = _corpus(a["corpus"], a["speaker"], a["limit"]), load_truth(a["truth"]), _backend(a["model"])
    donor = _backend(donor_model) if donor_model else None
    voice = (
        patching.voice_donor(load_clips(a["corpus"]), a["corpus"], truth, speaker, backend.max_duration)
        if speaker
        else None
    )
    label = "+".join(x for x in (donor_model and f"model {donor_model}", speaker and f"voice {speaker}") if x)
    sites = split_list(a["sites"], "--sites") or []
    result = patching.patch_corpus(backend, corp, truth, sites, label, donor_audio=voice, donor_backend=donor)
    for r in result.table():
        console.print(
            f"{r.kind:13s} {r.condition:50s} n={r.n:3d}  P(ref) {r.median_full:.3f} -> {r.median_patched:.3f}  "
            f"toward audio {r.toward_audio:.2f}",
            highlight=False,
        )
    err_console.print(f"{len(result.edits)} edit(s) patched", highlight=False)
    write_json(a["json_out"], result.to_dict())
