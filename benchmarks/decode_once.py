"""The demo's warm rerun with the organisms' weights read eagerly or only when needed, in one process (issue 30).

``asr-audit demo --out DIR`` once (the first run: benchmark, organism, every transcript), then
this script reruns the demo into the same folder ``--runs`` times per arm, the arms alternating
run by run so that both see the same load:

* **baseline**: the organism and control load their weights when the demo starts (``lazy=False``);
* **decode-once**: as shipped (the organisms read their weights only if something must be decoded).

Both arms key derived audio by its recipe (the battery hands the pool recipes, and transcription
looks a recipe key up before it builds the clip), so neither builds a derived clip on a rerun;
the first measurement of this script (commit ``2abc70a``) also compared the eager realization
the battery used before, which saved about 1% of the rerun's CPU.

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

    load = organism.load_organism
    arms = {"baseline": _eager_organism(load), "decode-once": load}
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, cache {os.environ.get('ASR_AUDIT_CACHE_DIR')}")
    _rerun(args.out)  # warm-up: imports, page cache, and the recipe index learns every derived clip
    times: dict[str, list[tuple[float, float]]] = {"baseline": [], "decode-once": []}
    outputs: set[bytes] = set()
    for k in range(args.runs):
        for arm, loader in arms.items():
            organism.load_organism = loader  # the demo imports it when it runs
            wall, cpu, d, results = _rerun(args.out)
            outputs.add(results)
            times[arm].append((wall, cpu))
            print(
                f"run {k + 1} {arm:12s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
                f"computed {d['computed']}, reused {d['reused']}, derived built {d['derived_built']}, "
                f"found {d['derived_known']}  load {os.getloadavg()[0]:.1f}"
            )
    organism.load_organism = load
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
