"""Warm ``refdis`` re-runs of two source trees, alternated, as whole processes (issue 15).

The warm target (at least 50x faster than the paper's CLI at 10,000 clips x 10 models) is a
difference of a few tenths of a second on a 1.5 s process, which one run on a shared machine
cannot resolve. This times ``asr-audit refdis --preset anchor --no-loo --majority 0.75`` (the
warm run of ``refdis_scale.py``) ``--runs`` times per tree, the trees alternating run by run so
that both see the same load, and prints every run (wall, CPU = user + system, peak RSS, load
average) and the medians. Each tree gets a text cache of its own, filled by one cold run first;
the children read compiled bytecode, as an installed package does.

    python benchmarks/refdis_warm.py --src /work/main/src --src src --runs 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from refdis_memory import child  # noqa: E402 - the benchmarks folder is not a package

PANEL = "honest-01,honest-02,honest-03,honest-04"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", type=Path, action="append", required=True, help="an asr_audit source tree (give two)")
    ap.add_argument("--runs", type=int, default=7, help="warm runs per tree (default 7)")
    ap.add_argument("--clips", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None, help="keep the generated set here (reused)")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = (args.workdir or Path(tmp)) / f"whole-{args.clips}"
        if not folder.is_dir():
            sys.path.insert(0, str(args.src[-1]))
            from asr_audit.testing.synthetic import make_prediction_set

            make_prediction_set(args.clips, rng=np.random.default_rng(args.seed), folder=folder)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        cmd = [sys.executable, "-m", "asr_audit", "refdis", "--preds", str(folder), "--panel", PANEL]
        cmd += ["--preset", "anchor", "--no-loo"]
        envs = []
        for k, src in enumerate(args.src):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], env=base, check=True)
            env = {**base, "PYTHONPATH": str(src.resolve()), "ASR_AUDIT_CACHE_DIR": str(Path(tmp) / f"cache-{k}")}
            if child(cmd, env)[3] != 0:  # the cold run that fills this tree's cache
                print(f"{src}: the cold run failed")
                return 1
            envs.append(env)
        got: list[list[tuple[float, float]]] = [[] for _ in args.src]
        print(f"{'tree':40s} {'wall s':>7s} {'CPU s':>7s} {'peak MB':>8s} {'load':>5s}")
        for _ in range(args.runs):
            for k, src in enumerate(args.src):
                wall, cpu, rss, rc, lines = child([*cmd, "--majority", "0.75"], envs[k])
                if rc != 0:
                    print("\n".join(lines[-5:]))
                    return 1
                got[k].append((wall, cpu))
                print(f"{str(src):40s} {wall:7.2f} {cpu:7.2f} {rss:8,.0f} {os.getloadavg()[0]:5.1f}", flush=True)
        for src, runs in zip(args.src, got):
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(f"median {str(src):33s} {wall:7.2f} {cpu:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
