"""Prediction-file probes at leaderboard scale, timed as whole processes (issue 15).

Two cases, each command run as a child process whose wall time, CPU time (user + system) and
peak resident set size come from ``os.wait4``:

* **leaderboard** (``--clips`` x ``--models``, default 100,000 x 40): ``asr-audit refdis`` with a
  4-model panel and the default settings (anchor preset, leave-one-out), first *cold* (an empty
  text cache in a fresh ``$ASR_AUDIT_CACHE_DIR``) then *warm* (the same files with other
  parameters, ``--majority 0.75``). Targets: cold under 3 minutes, peak RSS under 4 GiB.
* **whole process** (``--whole`` clips x 10 models, default 10,000): the paper's CLI
  (``benchmarks/baseline_refdis.py``, a re-implementation of its public scoring code) against
  ``asr-audit refdis --preset anchor --no-loo`` cold, and warm with ``--majority 0.75`` after a
  run that filled the cache. Targets: cold at least 10x faster, warm at least 50x.

The children run with compiled bytecode (``PYTHONPYCACHEPREFIX`` in the temporary folder,
filled by ``compileall`` first), as an installed package does.

Wall time is what the issue's targets name; on a machine shared with other jobs it mostly
measures the others, so the CPU time ratios are printed beside it. The sets are synthetic (:mod:`asr_audit.testing.synthetic`; the leaderboard case tiles a 20,000-
clip base set under new clip ids, as ``refdis_memory.py`` does, so every string is distinct).

    python benchmarks/refdis_scale.py                        # both cases (the leaderboard case takes minutes)
    python benchmarks/refdis_scale.py --clips 0              # only the whole-process comparison
    python benchmarks/refdis_scale.py --whole 0 --clips 20000 --models 10   # a smaller leaderboard case
    python benchmarks/refdis_scale.py --clips 0 --src /work/main/src        # another checkout (before/after)
    python benchmarks/refdis_scale.py --clips 0 --json-dir /tmp/after       # keep each run's --json result (diff two trees)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(HERE))
from refdis_memory import child, make_rows_set  # noqa: E402 - the benchmarks folder is not a package

JSON_DIR: Path | None = None  # --json-dir: each refdis run writes its --json result there


def refdis_cmd(folder: Path, panel: list[str], *extra: str, name: str = "") -> list[str]:
    out = ["--json", str(JSON_DIR / f"{name}.json")] if JSON_DIR is not None and name else []
    return [
        sys.executable,
        "-m",
        "asr_audit",
        "refdis",
        "--preds",
        str(folder),
        "--panel",
        ",".join(panel),
        *extra,
        *out,
    ]


def row(label: str, got: tuple[float, float, float, int, list[str]], base: tuple[float, float] | None = None) -> None:
    """One run's line; ``load`` is the machine's 1-minute load average when the run ended (this
    machine is shared: wall time over a few cores' worth of load measures the other jobs too)."""
    wall, cpu, rss, rc, _ = got
    ratio = f"{base[0] / wall:7.1f}x {base[1] / cpu:7.1f}x" if base else " " * 17
    print(f"{label:40s} {wall:8.1f} {cpu:8.1f} {rss:9,.0f} {rc:5d} {os.getloadavg()[0]:5.1f} {ratio}", flush=True)


def header() -> None:
    print(
        f"{'run':40s} {'wall s':>8s} {'CPU s':>8s} {'peak MB':>9s} {'exit':>5s} {'load':>5s} "
        f"{'x paper (wall, CPU)':>19s}"
    )


def leaderboard(workdir: Path, clips: int, models: int, base: int, seed: int, env: dict[str, str]) -> bool:
    folder = workdir / f"rows-{models}x{clips}"
    t0 = time.perf_counter()
    names = make_rows_set(folder, clips, models, base, seed)
    print(f"\n== leaderboard: {clips:,} clips x {models} models ({time.perf_counter() - t0:.0f} s to make the set)")
    panel = names[:4]
    header()
    cold = child(refdis_cmd(folder, panel, name=f"leaderboard-{models}x{clips}-cold"), env)
    row("asr-audit refdis cold", cold)
    warm = child(refdis_cmd(folder, panel, "--majority", "0.75", name=f"leaderboard-{models}x{clips}-warm"), env)
    row("asr-audit refdis warm (--majority 0.75)", warm)
    ok_time, ok_rss = cold[0] < 180, max(cold[2], warm[2]) < 4096
    print(
        f"targets: cold under 3 min: {'met' if ok_time else 'NOT met'} ({cold[0]:.0f} s); "
        f"peak RSS under 4 GiB: {'met' if ok_rss else 'NOT met'} ({max(cold[2], warm[2]):,.0f} MB)"
    )
    return cold[3] == 0 and warm[3] == 0


def whole_process(workdir: Path, clips: int, seed: int, env: dict[str, str]) -> bool:
    from asr_audit.testing.synthetic import make_prediction_set

    folder = workdir / f"whole-{clips}"
    if not folder.is_dir():
        make_prediction_set(clips, rng=np.random.default_rng(seed), folder=folder)
    panel = ["honest-01", "honest-02", "honest-03", "honest-04"]
    print(f"\n== whole process: {clips:,} clips x 10 models (panel {','.join(panel)})")
    header()
    paper = child([sys.executable, str(HERE / "baseline_refdis.py"), str(folder), "--panel", ",".join(panel)], env)
    row("paper's CLI (baseline_refdis.py)", paper)
    anchor = ("--preset", "anchor", "--no-loo")
    cold = child(refdis_cmd(folder, panel, *anchor, name=f"whole-{clips}-cold"), env)
    base = (paper[0], paper[1])
    row("asr-audit refdis cold", cold, base)
    warm = child(refdis_cmd(folder, panel, *anchor, "--majority", "0.75", name=f"whole-{clips}-warm"), env)
    row("asr-audit refdis warm (--majority 0.75)", warm, base)
    again = child(refdis_cmd(folder, panel, *anchor, "--majority", "0.75"), env)
    row("asr-audit refdis warm, same parameters", again, base)
    for what, (p, co, wa) in (("wall", (paper[0], cold[0], warm[0])), ("CPU", (paper[1], cold[1], warm[1]))):
        c, w = p / co, p / wa
        print(
            f"targets ({what} time): cold >= 10x: {'met' if c >= 10 else 'NOT met'} ({c:.1f}x); "
            f"warm >= 50x: {'met' if w >= 50 else 'NOT met'} ({w:.1f}x)"
        )
    return paper[3] == 0 and cold[3] == 0 and warm[3] == 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clips", type=int, default=100_000, help="clips of the leaderboard case (0: skip it)")
    ap.add_argument("--models", type=int, default=40, help="models of the leaderboard case")
    ap.add_argument("--base", type=int, default=20_000, help="clips generated before tiling (default 20,000)")
    ap.add_argument("--whole", type=int, default=10_000, help="clips of the whole-process case (0: skip it)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None, help="keep the generated sets here (reused)")
    ap.add_argument(
        "--json-dir", type=Path, default=None, help="write each refdis run's --json result here (to diff two trees)"
    )
    ap.add_argument(
        "--src",
        type=Path,
        default=SRC,
        help="the asr_audit source tree to time (default this checkout's; another checkout's src gives before/after)",
    )
    args = ap.parse_args(argv)
    global JSON_DIR
    if args.json_dir is not None:
        args.json_dir.mkdir(parents=True, exist_ok=True)
        JSON_DIR = args.json_dir.resolve()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, "
        f"asr_audit from {args.src}"
    )
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        # Every child reads compiled bytecode, as from an installed package (pip compiles it):
        # with PYTHONDONTWRITEBYTECODE set, each process would compile asr_audit's modules anew.
        base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base_env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.src), str(HERE)], env=base_env, check=True)
        for case in ("whole", "leaderboard"):
            cache = Path(tempfile.mkdtemp(dir=tmp, prefix="cache-"))  # every case starts cold
            env = {**base_env, "PYTHONPATH": str(args.src), "ASR_AUDIT_CACHE_DIR": str(cache)}
            if case == "whole" and args.whole:
                ok &= whole_process(workdir, args.whole, args.seed, env)
            if case == "leaderboard" and args.clips:
                ok &= leaderboard(workdir, args.clips, args.models, args.base, args.seed, env)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
