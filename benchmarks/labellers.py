"""Simulated labellers: does verified accept-ref recover the planted copy rate within its interval?

Issue 26's "done when": on worlds with planted truth (``asr_audit.testing.labellers``: synthetic
prediction sets with planted reference errors and panel mishearings, mined by refdis) a labeller
right with probability q labels a stratified sample of the edits, a second labeller a subset; for
every scored model (honest and copying, inside the panel and outside it, i.e. hearing worse or
better than the panel) the table counts the seeds whose interval holds the planted copy rate:

* ``plain`` — Wilson's interval on the labels as if they were truth;
* ``bounded`` — ``[copy_low, copy_high]``, the labels' precision estimated from the double-labelled
  agreement (``verified.labelled_precision``).

Also the share of seeds in which the copying flag's rule (``stats.flags.copies_reference``: >= 10
judged edits, the observed rate's Wilson upper bound > 0.10, the lower bound >= 0.05 — Wilson's for
``plain``, ``copy_low`` for ``bounded``) would fire. Every (world seed, labelling seed) pair is one
trial; worlds ``1..W``, labellings ``1000 + j`` for ``j < L``.

    python benchmarks/labellers.py [--worlds 20] [--labellings 10] [--q 1.0,0.95,0.9,0.8] \\
        [--out benchmarks/results/labellers.json]

Runtime: about 10 s a world on a busy 2-core machine (the refdis run), labellings milliseconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from asr_audit.stats.flags import COPYING_CI_LOW, FAITHFUL_CI_HIGH, MIN_EDITS_FOR_A_CLAIM
from asr_audit.testing.labellers import label_sample, make_world, model_kind, trials


def code_commit() -> str:
    """The checkout's commit, ``+dirty`` when ``src`` or ``benchmarks`` has uncommitted changes
    (also used by ``audio_verify.py``)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "src", "benchmarks"], capture_output=True, text=True)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _flag(lo: float, hi: float, n: int) -> bool:
    return n >= MIN_EDITS_FOR_A_CLAIM and hi > FAITHFUL_CI_HIGH and lo >= COPYING_CI_LOW


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", type=int, default=20)
    ap.add_argument("--labellings", type=int, default=10)
    ap.add_argument("--q", default="1.0,0.95,0.9,0.8", help="labeller accuracies")
    ap.add_argument("--n-sample", type=int, default=120, help="edits labelled per labelling")
    ap.add_argument("--n-double", type=int, default=60, help="of them, labelled twice")
    ap.add_argument("--mishear-rate", type=float, default=0.3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    qs = [float(x) for x in args.q.split(",")]
    t0 = time.time()
    # (q, kind, estimator) -> [covered, trials, flagged]
    table: dict[tuple[float, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    world_hashes = []
    for w in range(1, args.worlds + 1):
        with tempfile.TemporaryDirectory() as d:
            world = make_world(np.random.default_rng(w), d, mishear_rate=args.mishear_rate)
        world_hashes.append(hashlib.sha256(json.dumps(world.truth, sort_keys=True).encode()).hexdigest()[:16])
        for q in qs:
            for j in range(args.labellings):
                lab = label_sample(
                    np.random.default_rng([w, 1000 + j, int(q * 1000)]), world, q, args.n_sample, args.n_double
                )
                for t in trials(world, lab):
                    kind = model_kind(world, t.model)
                    for est, (lo, _) in (("plain", t.plain), ("bounded", t.bounded)):
                        cell = table[(q, kind, est)]
                        cell[0] += t.covers(est)
                        cell[1] += 1
                        # the contract's rule (stats/flags.py: copies_reference): the observed rate's
                        # Wilson upper bound, and the estimator's lower bound (copy_low when bounded)
                        cell[2] += _flag(lo, t.plain[1], t.n_eligible)
        print(f"[{time.strftime('%H:%M:%S')}] world {w}/{args.worlds}", file=sys.stderr, flush=True)
    rows = [
        {"q": q, "model": kind, "estimator": est, "covered": c, "trials": n, "coverage": round(c / n, 4), "flagged": f}
        for (q, kind, est), (c, n, f) in sorted(table.items(), key=lambda kv: (-kv[0][0], kv[0][1], kv[0][2]))
    ]
    print("| q | model | interval | covers the planted rate | flag fires |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['q']:g} | {r['model']} | {r['estimator']} | {r['covered']}/{r['trials']} ({r['coverage']:.3f}) | {r['flagged']}/{r['trials']} |"
        )
    elapsed = time.time() - t0
    print(f"{elapsed:.0f} s", file=sys.stderr)
    if args.out:
        out = {
            "benchmark": "labellers",
            "commit": code_commit(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": "python benchmarks/labellers.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "world_seeds": list(range(1, args.worlds + 1)),
            "labelling_seeds": [1000 + j for j in range(args.labellings)],
            "q": qs,
            "n_sample": args.n_sample,
            "n_double": args.n_double,
            "mishear_rate": args.mishear_rate,
            "world_truth_sha256_16": world_hashes,
            "seconds": round(elapsed),
            "rows": rows,
        }
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
