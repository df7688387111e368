"""``asr-audit mech capture|direction|steer|patch``: the white-box layer on PyTorch backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import app, console, err_console, examples, split_list
from asr_audit.cli.common import CORPUS_HELP as _CORPUS_HELP
from asr_audit.cli.common import STORE_HELP as _STORE_HELP
from asr_audit.cli.common import load_clips, write_json
from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.outputs import check_output_file

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

_DIRS_HELP = "Folder of saved directions (default: <cache>/directions)."


def _directions_dir(value: Path | None) -> Path:
    if value is not None:
        return value
    from asr_audit.paths import cache_dir

    return cache_dir() / "directions"


def _corpus(corpus: str, speaker: str | None, limit: int | None) -> Any:
    from asr_audit.corpus.clips import Corpus

    corp = load_clips(corpus)
    if speaker:
        keep = set(split_list(speaker, "--speaker") or [])
        clips = tuple(c for c in corp.clips if c.speaker in keep)
        if not clips:
            raise ConfigError(f"--speaker {speaker}: no clip of {corpus} has that speaker; fix: check the manifest")
        corp = Corpus(corp.name, corp.split, corp.source, clips)
    if limit:
        corp = Corpus(corp.name, corp.split, corp.source, corp.clips[:limit])
    return corp


def _backend(spec: str) -> Any:
    from asr_audit.models.base import SITES, load_backend, require_capability

    backend = load_backend(spec)
    require_capability(backend, SITES)
    return backend


@mech_app.command(
    "capture",
    epilog="Examples:\n\nasr-audit mech capture -m whisper-tiny.en-pt -c calib/calib-test.jsonl --sites encoder.layers.2.out,decoder.layers.2.out --pool mean -o caps/slt --speaker flite-slt",
)
def capture(
    model: str = typer.Option(..., "--model", "-m", help="A PyTorch model spec with hook sites."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    sites: str = typer.Option(..., "--sites", help="Hook sites, comma-separated (e.g. encoder.layers.2.out)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the per-site arrays and manifest.json."),
    pool: str = typer.Option("none", "--pool", help="none (a row per frame / token) | mean (a row per clip)."),
    dtype: str = typer.Option("float32", "--dtype", help="float32 | float16 on disk."),
    speaker: str | None = typer.Option(None, "--speaker", help="Only clips of these speakers, comma-separated."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips."),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Clips per forward pass."),
) -> None:
    """Capture activations at hook sites, streamed to disk (decoder sites teacher-forced on the reference)."""
    from asr_audit.audio.io import load_audio
    from asr_audit.mech.sites import parse_site
    from asr_audit.mechrun.capture import DTYPES, POOLS
    from asr_audit.mechrun.capture import capture as run_capture
    from asr_audit.outputs import check_output_dir

    site_list = split_list(sites, "--sites") or []
    if not site_list:
        raise ConfigError("--sites is empty; fix: e.g. --sites encoder.layers.2.out")
    for s in site_list:
        parse_site(s)
    if pool not in POOLS:  # every option is checked before the model loads
        raise ConfigError(f"--pool {pool!r} is not one of {', '.join(POOLS)}; fix: e.g. --pool mean")
    if dtype not in DTYPES:
        raise ConfigError(f"--dtype {dtype!r} is not one of {', '.join(DTYPES)}; fix: e.g. --dtype float32")
    check_output_dir(out, "--out", force=True)
    corp = _corpus(corpus, speaker, limit)
    backend = _backend(model)
    texts = [c.reference for c in corp.clips] if any(parse_site(s)[0] == "decoder" for s in site_list) else None
    cap = run_capture(
        backend,
        ((c.id, load_audio(c, backend.max_duration)) for c in corp.clips),
        site_list,
        out,
        texts=texts,
        pool=pool,
        dtype=dtype,
        batch_size=batch_size,
    )
    rows = sum(c.rows for c in cap.clips)
    console.print(
        f"captured {len(cap.clips)} clip(s), {rows} row(s) per site, {len(cap.sites)} site(s) -> {out}", highlight=False
    )


@mech_app.command(
    "direction",
    epilog="Examples:\n\nasr-audit mech direction --a caps/slt --b caps/rms --name voice-slt --json sweep.json",
)
def direction(
    set_a: Path = typer.Option(..., "--a", help="Capture folder of set A (e.g. benchmark voice / benchmark donor)."),
    set_b: Path = typer.Option(..., "--b", help="Capture folder of set B (e.g. other voice / conversational donor)."),
    name: str = typer.Option(..., "--name", help="Save the direction under this name."),
    site: str | None = typer.Option(None, "--site", help="Build it at this site (default: the best held-out AUC)."),
    sites: str | None = typer.Option(None, "--sites", help="Sites to sweep (default: every site of both captures)."),
    k: int = typer.Option(1, "--k", min=1, help="Rank: k > 1 keeps the top-k SVD subspace of paired differences."),
    holdout: float = typer.Option(0.5, "--holdout", help="Share of pairs held out to score each layer."),
    seed: int = typer.Option(0, "--seed", help="Seed of the fit / held-out split."),
    directions: Path | None = typer.Option(None, "--directions", help=_DIRS_HELP),
    json_out: Path | None = typer.Option(None, "--json", help="Write the layer sweep and the direction's record."),
) -> None:
    """Diff-in-means direction between two captures, with a layer sweep of held-out AUC."""
    from asr_audit.mech.directions import save_direction
    from asr_audit.mechrun.capture import load_capture
    from asr_audit.mechrun.direction import best_site, layer_sweep, make_direction

    check_output_file(json_out, "--json")
    a, b = load_capture(set_a), load_capture(set_b)
    rows = layer_sweep(a, b, split_list(sites, "--sites"), holdout=holdout, seed=seed)
    chosen = site or best_site(rows)
    auc_by_site = {r.site: r.auc for r in rows}
    d = make_direction(
        name, a, b, chosen, k=k, extra={"seed": seed, "holdout": holdout, "heldout_auc": auc_by_site.get(chosen)}
    )
    path = save_direction(d, _directions_dir(directions))
    for r in rows:
        mark = " *" if r.site == chosen else ""
        console.print(f"{r.site:28s} AUC {r.auc:.3f}  |d| {r.norm:.3f}{mark}", highlight=False)
    console.print(f"direction {name!r} at {chosen} (k={k}) -> {path}", highlight=False)
    write_json(json_out, {"sweep": [r.to_dict() for r in rows], "site": chosen, "direction": d.to_dict()})


@mech_app.command(
    "steer",
    epilog="Examples:\n\nasr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction voice-slt --speaker flite-slt\n\nasr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction decision-L0,decision-L1,decision-L2,decision-L3 --mode clamp --clamp-at 0.5 --speaker flite-slt\n\nasr-audit mech steer -m organism-benchmark -c set/calib-test.jsonl --truth set --direction omission-L1,omission-L2 --mode clamp --positions 1:2 --gate voice-L0 --gate-at 0.5",
)
def steer(
    model: str = typer.Option(..., "--model", "-m", help="A PyTorch model spec with hook sites."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    truth: Path = typer.Option(..., "--truth", help="Folder with truth.jsonl (calibration or organism set)."),
    name: str = typer.Option(
        ...,
        "--direction",
        help="Name of a saved direction; several, comma-separated: each at its own site, applied together.",
    ),
    mode: str = typer.Option(
        "ablate",
        "--mode",
        help="ablate (project out: h.d -> 0) | mean-ablate (h.d -> set B's mean) | induce (add alpha * d) | "
        "clamp (h.d capped at set B's mean + clamp-at * |d|; positions at or below untouched).",
    ),
    alpha: float = typer.Option(1.0, "--alpha", help="Induction strength (multiples of the direction)."),
    clamp_at: float = typer.Option(
        0.0, "--clamp-at", help="Clamp: the cap above set B's mean, in multiples of |d| (0: B's mean, 1: A's)."
    ),
    trigger_at: float | None = typer.Option(
        None,
        "--trigger-at",
        help="Clamp: move only projections beyond B's mean + this * |d|, down to the cap (default: the cap).",
    ),
    k: int = typer.Option(1, "--k", min=1, help="Ablation rank (needs a direction saved with k or more)."),
    site: str | None = typer.Option(None, "--site", help="Apply at these sites (default: the direction's site)."),
    positions: str | None = typer.Option(
        None,
        "--positions",
        help="Decoder sites: edit only absolute token positions P0:P1 (prompt included; len(prompt)-1 predicts "
        "the first text token). Default: every position.",
    ),
    gate: str | None = typer.Option(
        None,
        "--gate",
        help="Gate every arm on this saved decoder-site direction: edit only the clips whose unedited activation "
        "at the prompt end projects above --gate-at (the others decode clean; controls keep the same gate).",
    ),
    gate_at: float = typer.Option(
        0.5, "--gate-at", help="Gate threshold above set B's mean, in multiples of |d| (0.5: midway to set A's)."
    ),
    n_random: int = typer.Option(3, "--n-random", min=0, help="Random-direction controls (one per seed)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random and shuffled controls."),
    speaker: str | None = typer.Option(None, "--speaker", help="Only clips of these speakers, comma-separated."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips."),
    wer_field: str = typer.Option("faithful", "--wer-field", help="Manifest field the WER is measured against."),
    directions: Path | None = typer.Option(None, "--directions", help=_DIRS_HELP),
    store: Path | None = typer.Option(None, "--store", help=_STORE_HELP),
    json_out: Path | None = typer.Option(None, "--json", help="Write the arms, flips and transcripts."),
) -> None:
    """Run under an intervention and its controls; accept-ref on planted sites, flips, WER (the mech
    probe of asr-audit run, on one model)."""
    from asr_audit.api import mech_steer_from
    from asr_audit.mechrun.probe import CLI_FLAGS

    check_output_file(json_out, "--json")
    values = {
        "model": model, "direction": name, "directions": directions, "site": site, "mode": mode, "alpha": alpha,
        "clamp_at": clamp_at, "trigger_at": trigger_at, "positions": positions, "gate": gate, "gate_at": gate_at,
        "k": k, "n_random": n_random, "truth": truth, "speakers": speaker, "limit": limit, "wer_field": wer_field,
    }  # fmt: skip
    values = {key: str(v) if isinstance(v, Path) else v for key, v in values.items()}
    run = mech_steer_from(corpus, values, Surface.cli(**CLI_FLAGS), seed=seed, store=store)
    result = run.steer
    for a in result.arms:
        r = a.accept_ref
        wer = f"{a.wer:.3f}" if a.wer is not None else "-"
        rate = f"{r.rate:.3f} [{r.low:.3f}, {r.high:.3f}]" if r.n else "undefined (no sites)"
        opened = f"  gate open {a.n_open}/{a.n_clips}" if a.n_open is not None else ""
        console.print(
            f"{a.label:12s} accept-ref {rate} ({r.k}/{r.n})  flips ref->spoken {a.ref_to_spoken}, "
            f"spoken->ref {a.spoken_to_ref}  WER {wer}{opened}",
            highlight=False,
        )
    share = result.effect_share()
    console.print(
        f"effect share: {share:.3f}" if share is not None else "effect share: undefined (clean rate 0)", highlight=False
    )
    write_json(json_out, {**run.table(), "hypotheses": {k2: dict(v) for k2, v in result.hypotheses.items()}})


@mech_app.command(
    "patch",
    epilog="Examples:\n\nasr-audit mech patch -m organism-benchmark -c set/calib-test.jsonl --truth set --speaker flite-slt --donor-model whisper-tiny.en-pt --sites encoder.out,decoder.layers.3.out",
)
def patch(
    model: str = typer.Option(..., "--model", "-m", help="A PyTorch model spec with hook sites (score capability)."),
    corpus: str = typer.Option(..., "--corpus", "-c", help=_CORPUS_HELP),
    truth: Path = typer.Option(..., "--truth", help="Folder with truth.jsonl (calibration or organism set)."),
    sites: str = typer.Option("encoder.out", "--sites", help="Sites to patch, comma-separated."),
    donor_model: str | None = typer.Option(
        None, "--donor-model", help="Patch from this model's run (same architecture)."
    ),
    donor_speaker: str | None = typer.Option(
        None, "--donor-speaker", help="Patch from the same sentence said by this speaker (truth set's clips)."
    ),
    speaker: str | None = typer.Option(None, "--speaker", help="Only clips of these speakers, comma-separated."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N clips."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the edit-locus table and per-edit values."),
) -> None:
    """Activation patching: P(reference rendering) per planted edit, before and after a site swap."""
    from asr_audit.audio.io import load_audio
    from asr_audit.calib.truth import load_truth
    from asr_audit.mechrun.patch import PatchCondition, edit_locus

    check_output_file(json_out, "--json")
    if donor_model is None and donor_speaker is None:
        raise ConfigError("patching needs a donor; fix: pass --donor-model SPEC and/or --donor-speaker VOICE")
    corp = _corpus(corpus, speaker, limit)
    t = load_truth(truth)
    backend = _backend(model)
    donor = _backend(donor_model) if donor_model else None
    donor_audio = None
    if donor_speaker:
        full = load_clips(corpus)
        by_id = {c.id: c for c in full.clips}
        by_sentence = {info.sentence_id: info.clip_id for info in t.clips.values() if info.speaker == donor_speaker}
        cache: dict[str, Any] = {}

        def donor_audio(clip_id: str, samples: Any) -> Any:
            info = t.clips.get(clip_id)
            other = by_sentence.get(info.sentence_id) if info else None
            if other is None or other not in by_id:
                raise ConfigError(
                    f"clip {clip_id}: no clip of the same sentence by {donor_speaker} in {corpus}; fix: check --donor-speaker"
                )
            if other not in cache:
                cache[other] = load_audio(by_id[other], backend.max_duration)
            return cache[other]

    label = "+".join(
        x
        for x in (f"model {donor_model}" if donor_model else "", f"voice {donor_speaker}" if donor_speaker else "")
        if x
    )
    conditions = [
        PatchCondition(f"{s} <- {label}", s, donor_audio=donor_audio, donor_backend=donor)
        for s in split_list(sites, "--sites") or []
    ]
    ids = {c.id for c in corp.clips}
    audio = {c.id: load_audio(c, backend.max_duration) for c in corp.clips}
    items = [it for it in t.errors() if it.clip_id in ids]
    result = edit_locus(backend, items, audio, {c.id: c.reference for c in corp.clips}, conditions)
    for r in result.table():
        console.print(
            f"{r.kind:13s} {r.condition:50s} n={r.n:3d}  P(ref) {r.median_full:.3f} -> {r.median_patched:.3f}  "
            f"toward audio {r.toward_audio:.2f}",
            highlight=False,
        )
    err_console.print(f"{len(result.edits)} edit(s) patched", highlight=False)
    write_json(json_out, result.to_dict())
