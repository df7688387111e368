"""The demo's shipped organism pair: measure low-rank truncations, and write the package file (issue 30).

``asr-audit demo`` needs an organism and its control trained on its generated benchmark (80
sentences, seed 0, :data:`asr_audit.cli.demo.DEMO_ORGANISM`): minutes of training on two cores.
The package ships that pair as the trained-minus-base differences, each matrix truncated to rank
``--rank`` by SVD, in float16 (:mod:`asr_audit.organism.shipped`); the demo uses it only when it
matches what the demo would train here.

``--write`` builds the demo's set and trains the pair exactly as ``asr-audit demo --train-organism``
does (in ``--work``, default ``<cache>/demo-organism``; a pair trained there or by a demo whose
output folder ``--from`` names is reused when its settings match), then writes
``src/asr_audit/data/organism/demo-pair.{safetensors,json}`` with provenance (code hash of the
organism modules, commit, date, command, seed, set and base hashes, torch version)::

    python benchmarks/demo_organism.py --write

``--ranks 8,16,32,64`` measures what truncation costs before choosing: for each kind and rank,
the share of clips whose greedy transcript equals the full pair's, on the clips the demo's
verdicts rest on (every benchmark-voice clip, and the ``flite-rms`` clips the battery's voice
condition uses), with the transcripts' match to the record and to the faithful text; encoder
states computed once (float32) and every variant decoded from them::

    python benchmarks/demo_organism.py --ranks 8,16,32,64 --from DEMO_OUT [--per-voice N] [--json out.json]

``--compare TRAINED_OUT SHIPPED_OUT`` prints the summary rows of two demo output folders side by
side (``asr-audit demo --train-organism --out TRAINED_OUT`` and ``asr-audit demo --out
SHIPPED_OUT``): the organism's rows with their numbers, and any row whose verdict differs (exit 1)::

    python benchmarks/demo_organism.py --compare DEMO_TRAINED DEMO_SHIPPED
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RANK = 32
# what the provenance's code hash covers
CODE = (
    "asr_audit.organism",
    "asr_audit.models.whisper_torch",
    "asr_audit.models.whisper_convert",
    "asr_audit.models.hf",
    "asr_audit.cli.demo",
)


def _settings(seed: int) -> tuple[Any, Any, int]:
    from asr_audit.cli.demo import DEMO_ORGANISM as d
    from asr_audit.organism.data import OrganismSetConfig
    from asr_audit.organism.train import TrainConfig

    return (
        OrganismSetConfig(n_sentences=d.n_sentences),
        TrainConfig(steps=d.steps, lr=d.lr, batch_size=d.batch_size, seed=seed),
        d.control_steps,
    )


def trained_pair(work: Path, seed: int) -> tuple[Path, dict[str, Path], float, bool]:
    """The demo's set in ``work/generated-benchmark`` and the pair trained here in ``work/organism``
    (trained now unless a matching pair trained here is there); ``(set dir, paths, seconds,
    trained now)``."""
    from asr_audit.organism.pipeline import ensure_organisms, ensure_set
    from asr_audit.organism.shipped import origin
    from asr_audit.organism.weights import load_delta

    config, train, control_steps = _settings(seed)
    set_dir = work / "generated-benchmark"
    t0 = time.perf_counter()
    ensure_set(set_dir, config, seed, print)
    paths, trained_now = ensure_organisms(
        set_dir,
        work / "organism",
        seed=seed,
        config=config,
        train_config=train,
        control_steps=control_steps,
        say=print,
    )
    for kind, path in paths.items():
        where = origin(load_delta(path).meta)
        if where != "trained here":
            raise SystemExit(f"{path}: the {kind} delta is a {where}, not trained here; pass another --work")
    return set_dir, paths, time.perf_counter() - t0, trained_now


def truncation_error(trained: Any, base: Any, rank: int) -> tuple[float, float]:
    """Relative Frobenius error of the packed difference: the worst tensor's, and over all tensors."""
    import numpy as np

    from asr_audit.organism.shipped import compress, expand

    rebuilt = expand(compress(trained, base, rank), base)
    worst, err2, norm2 = 0.0, 0.0, 0.0
    for n, v in trained.items():
        e = float(np.linalg.norm(rebuilt[n].astype(np.float64) - v))
        d = float(np.linalg.norm(v.astype(np.float64) - base[n]))
        worst, err2, norm2 = max(worst, e / max(d, 1e-12)), err2 + e * e, norm2 + d * d
    return worst, (err2 / norm2) ** 0.5


def write(work: Path, seed: int, rank: int) -> int:
    import torch

    from asr_audit.data import DEMO_ORGANISM_MANIFEST
    from asr_audit.organism.data import load_organism_set
    from asr_audit.organism.shipped import WRITE_COMMAND, base_tensors, recipe, set_hash, write_shipped
    from asr_audit.organism.weights import load_delta
    from asr_audit.provenance import file_hash, make_provenance

    config, train, control_steps = _settings(seed)
    set_dir, paths, seconds, trained_now = trained_pair(work, seed)
    deltas = {k: load_delta(p) for k, p in paths.items()}
    set_sha = set_hash(load_organism_set(set_dir))
    command = WRITE_COMMAND + (f" --rank {rank}" if rank != DEFAULT_RANK else "")
    prov = make_provenance(
        CODE,
        (seed,),
        {
            "set": set_sha,
            "base_weights": deltas["benchmark"].base_hash,
            **{f"{k}_delta": file_hash(p) for k, p in paths.items()},
        },
        files=("benchmarks/demo_organism.py",),
        root=ROOT,
        command=command.split(),
    ).to_dict()
    weights = DEMO_ORGANISM_MANIFEST.with_suffix(".safetensors")
    base = base_tensors(sorted(deltas["benchmark"].tensors))
    errors = {k: truncation_error(d.tensors, base, rank) for k, d in deltas.items()}
    for kind, (worst, total) in errors.items():
        print(f"{kind}: rank {rank} keeps the difference to {total:.3f} relative error overall, {worst:.3f} at worst")
    pair = write_shipped(
        weights,
        DEMO_ORGANISM_MANIFEST,
        deltas,
        base,
        rank,
        recipe_=recipe(seed, config, train, control_steps),
        set_sha=set_sha,
        provenance={
            **prov,
            "torch": torch.__version__,
            # a pair reused from --work / --from was trained by the same recipe (bit-identical tensors
            # on one machine); its training seconds are in each kind's metadata
            "pair_trained_now": trained_now,
            "set_and_pair_seconds": round(seconds, 1),
            "relative_error": {
                k: {"worst_tensor": round(w, 4), "overall": round(t, 4)} for k, (w, t) in errors.items()
            },
        },
    )
    full = sum(p.stat().st_size for p in paths.values())
    print(
        f"wrote {weights} ({weights.stat().st_size / 1e6:.2f} MB; the two float32 deltas: {full / 1e6:.1f} MB) "
        f"and {DEMO_ORGANISM_MANIFEST}; sha256 {pair.sha256[:12]}; set and pair {seconds:.0f} s "
        f"({'trained now' if trained_now else 'reused'})"
    )
    return 0


def _eval_clips(set_dir: Path, per_voice: int | None) -> tuple[list[dict], list[Any]]:
    """The benchmark-voice clips and the flite-rms clips (rows and 16 kHz waveforms; the first
    ``per_voice`` of each voice by clip id when given)."""
    from asr_audit.cli.demo import BATTERY_VOICE
    from asr_audit.organism.data import load_organism_set
    from asr_audit.organism.train import read_wav

    oset = load_organism_set(set_dir)
    voices = [oset.meta["config"]["benchmark_voice"], BATTERY_VOICE]
    rows = []
    for voice in voices:
        rows += sorted(oset.rows(voices=[voice]), key=lambda r: r["id"])[:per_voice]
    return rows, [read_wav(oset.audio_path(r)) for r in rows]


def measure(work: Path, seed: int, ranks: list[int], out: Path | None, per_voice: int | None = None) -> int:
    import numpy as np
    import torch

    from asr_audit.organism.evaluate import decode_states, swap_weights
    from asr_audit.organism.pipeline import load_base
    from asr_audit.organism.shipped import base_tensors, compress, expand
    from asr_audit.organism.train import model_state, trainable_names
    from asr_audit.organism.weights import load_delta
    from asr_audit.provenance import file_hash, make_provenance
    from asr_audit.text.normalize import get_normalizer

    set_dir, paths, _, _ = trained_pair(work, seed)
    rows, audio = _eval_clips(set_dir, per_voice)
    backend = load_base()
    base_state = model_state(backend.torch_model, trainable_names(backend.torch_model))
    t0 = time.perf_counter()
    states = []
    with torch.inference_mode():
        for i in range(0, len(audio), 8):
            states += list(backend._encoder_states(audio[i : i + 8]).numpy())
    print(f"encoded {len(audio)} clips in {time.perf_counter() - t0:.0f} s")
    norm = get_normalizer("whisper")
    table = []
    for kind, path in paths.items():
        delta = load_delta(path)
        base = base_tensors(sorted(delta.tensors))
        variants: dict[str, Any] = {"full": delta.tensors}
        for r in ranks:
            variants[f"rank {r}"] = expand(compress(delta.tensors, base, r), base)
        texts: dict[str, list[str]] = {}
        for name, tensors in variants.items():
            swap_weights(backend, tensors)
            texts[name] = decode_states(backend, states, batch=8)
            swap_weights(backend, base_state)
        for name, hyp in texts.items():
            err = {
                n: float(
                    np.linalg.norm(variants[name][n] - delta.tensors[n])
                    / max(np.linalg.norm(delta.tensors[n] - base[n]), 1e-12)
                )
                for n in delta.tensors
            }
            for voice in dict.fromkeys(r["speaker"] for r in rows):
                idx = [i for i, r in enumerate(rows) if r["speaker"] == voice]
                row = {
                    "kind": kind,
                    "variant": name,
                    "voice": voice,
                    "n": len(idx),
                    "same_as_full": sum(hyp[i] == texts["full"][i] for i in idx) / len(idx),
                    "equals_record": sum(norm(hyp[i]) == norm(rows[i]["text"]) for i in idx) / len(idx),
                    "equals_faithful": sum(norm(hyp[i]) == norm(rows[i]["faithful"]) for i in idx) / len(idx),
                    "max_rel_error": max(err.values()),
                }
                table.append(row)
                print(
                    f"{kind:9} {name:8} {voice:9} n={row['n']:3} same-as-full {row['same_as_full']:.3f} "
                    f"record {row['equals_record']:.3f} faithful {row['equals_faithful']:.3f} "
                    f"max rel. error of the difference {row['max_rel_error']:.3f}"
                )
    if out is not None:
        prov = make_provenance(
            CODE,
            (seed,),
            {f"{k}_delta": file_hash(p) for k, p in paths.items()},
            files=("benchmarks/demo_organism.py",),
            root=ROOT,
        )
        data = {"ranks": ranks, "per_voice": per_voice, "rows": table, "provenance": prov.to_dict()}
        out.write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


COMPARED = ("verdict", "reasons", "accept_ref", "ci_low", "ci_high", "n_ref", "wer_inflation", "wer")


def compare(trained_out: Path, shipped_out: Path) -> int:
    """Print the demo's summary rows (results.json) of a run with the pair trained here and one with
    the shipped pair, side by side; exit 1 when any verdict differs."""
    rows = {}
    for label, out in (("trained", trained_out), ("shipped", shipped_out)):
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        print(f"{label}: {out} ({results.get('title', '')})")
        rows[label] = {(r["model"], r["corpus"], r["section"]): r for r in results["summary"]}
    differ = 0
    for key in sorted(set(rows["trained"]) | set(rows["shipped"])):
        a, b = rows["trained"].get(key, {}), rows["shipped"].get(key, {})
        same = a.get("verdict") == b.get("verdict")
        differ += not same
        if key[0].startswith("organism") or not same:
            print(f"{'  ' if same else '!!'} {key[0]:20} {key[1]:20} {key[2][:40]:40}")
            for f in COMPARED:
                if a.get(f) is not None or b.get(f) is not None:
                    print(f"     {f:14} trained {a.get(f)!s:40} shipped {b.get(f)!s}")
    print(f"{differ} verdict(s) differ of {len(set(rows['trained']) | set(rows['shipped']))} rows")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    from asr_audit.paths import cache_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="write the shipped pair into the package data")
    ap.add_argument("--ranks", default="", help="comma-separated ranks to measure against the full pair")
    ap.add_argument("--rank", type=int, default=DEFAULT_RANK, help="the rank --write ships")
    ap.add_argument("--work", type=Path, default=None, help="set and training folder (default <cache>/demo-organism)")
    ap.add_argument(
        "--from", dest="from_", type=Path, default=None, help="a demo output folder to take set and pair from"
    )
    ap.add_argument("--json", type=Path, default=None, help="write the --ranks table here")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("TRAINED_OUT", "SHIPPED_OUT"), default=None)
    ap.add_argument("--per-voice", type=int, default=None, help="--ranks: only the first N clips of each voice")
    args = ap.parse_args(argv)
    seed = 0  # the demo's default seed: the only one shipped
    work = args.from_ or args.work or cache_dir() / "demo-organism"
    if args.compare:
        return compare(*args.compare)
    if args.ranks:
        return measure(work, seed, [int(r) for r in args.ranks.split(",")], args.json, args.per_voice)
    if args.write:
        return write(work, seed, args.rank)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
