"""Bytes the Ray executor puts in the object store for a battery: shipped audio against recipes.

For every condition of a small battery over the bundled LibriVox clips (files, as a cluster's
shared storage or URLs would hold them), each realized clip (and a splice's donor part) is made
twice, as the Ray executor would send it to an actor:

* **shipped audio** — built on the driver (``realize``) and sent as 16 kHz samples, the way audio
  only the driver can build travels (and the way the battery's derived audio would travel without
  recipes);
* **recipe** — ``realize(..., lazy=True)`` made portable by the executor (``ray_exec._portable``):
  the original clip's path, the transforms, the seed and the donors' clip paths.

Sizes are ``pickle`` protocol 5 lengths of the clip lists, numpy buffers included (what Ray
serializes a task's arguments with). Both forms are then loaded and their audio hashes compared,
so a run that prints numbers also checks that the recipes build the driver's samples bit for bit.
Needs flite for the voice condition (left out without it); Ray itself is not needed.

Run::

    python benchmarks/ray_recipes.py
    python benchmarks/ray_recipes.py --repeat 10 --conditions noise:10db,donor:bench8s
"""

from __future__ import annotations

import argparse
import json
import pickle
import shutil
import time

DEFAULT = "noise:10db,reverb:0.6,truncate:1w0.25s,donor:bench8s,noise:10db+donor:conv8s,voice:flite-slt+noise:5db"


def _clips(repeat: int) -> list:
    from dataclasses import replace

    from asr_audit.corpus.spec import load_corpus
    from asr_audit.data import LIBRIVOX_MANIFEST

    base = load_corpus(str(LIBRIVOX_MANIFEST)).clips
    return [replace(c, id=f"{c.id}#{k}") for k in range(repeat) for c in base]


def main(argv: list[str] | None = None) -> int:
    from asr_audit.audio.io import load_clip_audio
    from asr_audit.probes.battery.conditions import ConditionContext, parse_condition, realize
    from asr_audit.runner.ray_exec import _portable

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conditions", default=DEFAULT, help="comma-separated battery conditions")
    ap.add_argument("--repeat", type=int, default=1, help="copies of the 4 LibriVox clips (new ids, same files)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    clips = _clips(args.repeat)
    spoken = {c.id: " ".join([*c.reference.split()[:2], "really", *c.reference.split()[3:]]) for c in clips}
    rows = []
    print(f"{len(clips)} clips (LibriVox fixture x {args.repeat}), seed {args.seed}")
    print(f"{'condition':34} {'sent':>5} {'shipped audio':>14} {'recipes':>10} {'ratio':>7}  identical")
    for text in args.conditions.split(","):
        cond = parse_condition(text)
        if cond.voice is not None and not shutil.which("flite"):
            print(f"{text:34} skipped: flite is not installed")
            continue
        span = (2, 3) if cond.truncate is not None else None
        eager_ctx = ConditionContext(clips, args.seed, spoken)
        lazy_ctx = ConditionContext(clips, args.seed, spoken)
        t0 = time.perf_counter()
        eager = [realize(cond, c, eager_ctx, span) for c in clips]
        t_eager = time.perf_counter() - t0
        t0 = time.perf_counter()
        lazy = [realize(cond, c, lazy_ctx, span, lazy=True) for c in clips]
        t_lazy = time.perf_counter() - t0
        sent_eager = [r.clip for r in eager] + [r.donor for r in eager if r.donor]
        sent_lazy = [_portable(c, None) for c in [r.clip for r in lazy] + [r.donor for r in lazy if r.donor]]
        shipped = len(pickle.dumps(sent_eager, protocol=5))
        recipes = len(pickle.dumps(sent_lazy, protocol=5))
        same = all(
            load_clip_audio(a).audio_hash == load_clip_audio(b).audio_hash for a, b in zip(sent_eager, sent_lazy)
        )
        print(f"{text:34} {len(sent_lazy):5d} {shipped:14,d} {recipes:10,d} {shipped / recipes:6.0f}x  {same}")
        rows.append(
            {
                "condition": text,
                "clips_sent": len(sent_lazy),
                "shipped_audio_bytes": shipped,
                "recipe_bytes": recipes,
                "identical": same,
                "driver_realize_s": round(t_eager, 3),
                "driver_plan_s": round(t_lazy, 3),
            }
        )
    total_s, total_r = sum(r["shipped_audio_bytes"] for r in rows), sum(r["recipe_bytes"] for r in rows)
    if rows:
        print(
            f"{'total':34} {sum(r['clips_sent'] for r in rows):5d} {total_s:14,d} {total_r:10,d} {total_s / total_r:6.0f}x"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
