"""The demo's warm rerun with and without derived audio keyed by its recipe, in one process (issue 30).

``asr-audit demo --out DIR`` once (the first run: benchmark, organism, every transcript), then
this script reruns the demo into the same folder ``--runs`` times per arm, the arms alternating
run by run so that both see the same load:

* **baseline**: as before issue 30's decode-once work: the battery builds every derived clip
  before the store lookup (``realize_once`` replaced by the eager realization it used before) and
  the organism and control load their weights when the demo starts (``lazy=False``);
* **decode-once**: as shipped (a derived clip whose every transcript is stored is not built; the
  organisms read their weights only if something must be decoded).

One warm-up rerun first (imports, the page cache). Each run prints wall and CPU seconds, the
decode counts and the 1-minute load average; then the medians and their ratio. Both arms must
write byte-identical ``results.json`` (checked). Numbers in benchmarks/README.md.

    ASR_AUDIT_CACHE_DIR=~/.cache/asr-audit python benchmarks/decode_once.py --out DEMO_DIR --runs 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def _eager(realize: Any, ctx: Any, store: Any, backends: Any) -> Any:
    """The pre-recipe battery: every unit realized here (a recipe only where the executor builds it)."""
    return realize(ctx.transcribe is not None)


def _eager_organism(load: Any) -> Any:
    def eager(*args: Any, **kwargs: Any) -> Any:
        return load(*args, **{**kwargs, "lazy": False})

    return eager


def _rerun(out: Path) -> tuple[float, float, dict[str, Any], bytes]:
    from asr_audit.cli import main

    t0, c0 = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["demo", "--out", str(out), "--no-progress"])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if code != 0:
        raise SystemExit(f"the demo rerun exited {code}")
    import json

    decodes = json.loads((out / "run.json").read_text())["decodes"]
    return wall, cpu, decodes, (out / "results.json").read_bytes()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="a demo output folder the demo has run in once")
    ap.add_argument("--runs", type=int, default=3, help="reruns per arm (default 3)")
    args = ap.parse_args(argv)
    if not (args.out / "store.sqlite").is_file():
        print(f"{args.out}: no demo store; fix: run `asr-audit demo --out {args.out}` once first")
        return 2
    import asr_audit.organism.backend as organism
    import asr_audit.probes.battery.battery as battery

    shipped, load = battery.realize_once, organism.load_organism
    arms = {"baseline": (_eager, _eager_organism(load)), "decode-once": (shipped, load)}
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, cache {os.environ.get('ASR_AUDIT_CACHE_DIR')}")
    _rerun(args.out)  # warm-up: imports, page cache, and the recipe index learns every derived clip
    times: dict[str, list[tuple[float, float]]] = {"baseline": [], "decode-once": []}
    outputs: set[bytes] = set()
    for k in range(args.runs):
        for arm, (plan, loader) in arms.items():
            battery.realize_once = plan  # the arm's battery planning
            organism.load_organism = loader  # the demo imports it when it runs
            wall, cpu, d, results = _rerun(args.out)
            outputs.add(results)
            times[arm].append((wall, cpu))
            print(
                f"run {k + 1} {arm:12s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
                f"computed {d['computed']}, reused {d['reused']}, derived built {d['derived_built']}, "
                f"found {d['derived_known']}  load {os.getloadavg()[0]:.1f}"
            )
    battery.realize_once, organism.load_organism = shipped, load
    if len(outputs) != 1:
        print("results.json differs between the arms")
        return 1
    med = {arm: tuple(statistics.median(x[i] for x in v) for i in (0, 1)) for arm, v in times.items()}
    for arm, (wall, cpu) in med.items():
        print(f"median {arm:12s} wall {wall:6.2f} s  cpu {cpu:6.2f} s")
    (bw, bc), (nw, nc) = med["baseline"], med["decode-once"]
    print(f"decode-once / baseline: wall {nw / bw:.3f}, cpu {nc / bc:.3f}; results.json identical in both arms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
