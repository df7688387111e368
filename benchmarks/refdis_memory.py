"""Peak memory and wall time of ``asr-audit refdis`` on large prediction sets (issue 12, defect 15).

Two cases, each run as ``asr-audit refdis --preds DIR --panel ... --no-loo`` in a child process
whose peak resident set size comes from ``os.wait4`` (the child's own ``ru_maxrss``):

* **rows**: ``--clips`` clips x ``--models`` models (default 200,000 x 4). A base set of at most
  ``--base`` clips comes from :func:`asr_audit.testing.synthetic.make_prediction_set`; larger
  sets tile it under new clip ids, appending a word unique to the clip to its reference and
  every hypothesis, so every string stays distinct (the worst case for memory: nothing is
  shared by chance);
* **long**: one hypothesis of ``--hyp-mb`` megabytes (default 5) in a small set (100 clips x 4
  models), the rest as generated.

``--compare SRC`` also runs each case with ``PYTHONPATH=SRC`` (e.g. another checkout's ``src``)
and prints this tree's wall time and peak RSS as ratios of that baseline's; ``--tracemalloc``
instead runs the rows case in this process under :mod:`tracemalloc` and prints the top
allocation sites at the peak.

    python benchmarks/refdis_memory.py                               # 4 x 200,000 rows; a 5 MB hypothesis
    python benchmarks/refdis_memory.py --compare /work/main/src      # ratios against another tree
    python benchmarks/refdis_memory.py --clips 1000000 --hyp-mb 50   # the issue's sizes
    python benchmarks/refdis_memory.py --clips 50000 --tracemalloc   # who holds the memory
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parent.parent / "src"
N_MODELS_LONG, N_CLIPS_LONG = 4, 100


def _suffix_word(index: int) -> str:
    """A lowercase word unique to ``index`` that every normalizer keeps as one token."""
    letters = "bcdfghjklmnpqrstvwxz"
    out = ["q"]
    while True:
        index, r = divmod(index, len(letters))
        out.append(letters[r])
        if not index:
            return "".join(out)


def make_rows_set(folder: Path, n_clips: int, n_models: int, base: int, seed: int) -> list[str]:
    """Write ``n_models`` files of ``n_clips`` rows into ``folder``; return the model names (panel first)."""
    from asr_audit.testing.synthetic import make_prediction_set

    if folder.is_dir() and any(folder.iterdir()):
        return sorted(p.name.split("_DATASET_")[0][len("MODEL_") :] for p in folder.glob("*.jsonl"))
    n_base = min(n_clips, base)
    with tempfile.TemporaryDirectory() as tmp:
        synth = make_prediction_set(
            n_base, n_models, rng=np.random.default_rng(seed), folder=tmp, copy_shares=(0.9,) if n_models > 3 else ()
        )
        folder.mkdir(parents=True, exist_ok=True)
        for path in sorted(Path(tmp).glob("*.jsonl")):
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            with open(folder / path.name, "w", encoding="utf-8") as out:
                for c in range(n_clips):
                    row = dict(rows[c % n_base])
                    if c >= n_base:
                        word = _suffix_word(c)
                        row["audio_filepath"] = f"synthetic/clip-{c + 1:07d}.wav"
                        row["text"] = f"{row['text']} {word}"
                        if row["pred_text"] is not None:
                            row["pred_text"] = f"{row['pred_text']} {word}"
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return list(synth.models)


def make_long_set(folder: Path, megabytes: float, seed: int) -> list[str]:
    """A small set whose first model's first hypothesis is ``megabytes`` MB of words."""
    if folder.is_dir() and any(folder.iterdir()):
        return sorted(p.name.split("_DATASET_")[0][len("MODEL_") :] for p in folder.glob("*.jsonl"))
    models = make_rows_set(folder, N_CLIPS_LONG, N_MODELS_LONG, N_CLIPS_LONG, seed)
    path = next(folder.glob(f"MODEL_{models[0]}_DATASET_*.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    words = (row["pred_text"] + " ").encode("utf-8")
    repeat = max(1, int(megabytes * 1e6) // len(words))
    row["pred_text"] = (words * repeat).decode("utf-8").strip()
    lines[0] = json.dumps(row, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return models


def child(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, int, list[str]]:
    """(wall s, CPU s, peak RSS MB, exit status, output lines) of one child process, from ``os.wait4``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    rss_mb = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 2**20
    lines = output.decode("utf-8", "replace").strip().splitlines()
    return wall, usage.ru_utime + usage.ru_stime, rss_mb, os.waitstatus_to_exitcode(status), lines


def run_cli(src: Path, folder: Path, panel: list[str], workers: int) -> tuple[float, float, int, str]:
    """(wall seconds, peak RSS in MB, exit status, last output line) of one ``refdis`` child process."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "asr_audit", "refdis", "--preds", str(folder), "--panel", ",".join(panel)]
    cmd += ["--no-loo", "--normalize-workers", str(workers), "--no-text-cache"]
    wall, _, rss_mb, rc, lines = child(cmd, env)
    return wall, rss_mb, rc, (lines[-1] if lines else "")


def trace(folder: Path, panel: list[str], top: int) -> None:
    """Run the steps of ``refdis`` here under tracemalloc; print each step's peak, and the top
    allocation sites held after loading and after normalizing (the inputs mining works on)."""
    import tracemalloc

    sys.path.insert(0, str(SRC))
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import mine, preset_params
    from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.text.align import AlignmentCache
    from asr_audit.text.anchor import anchor_normalizer
    from asr_audit.text.normalize import clear_normalize_cache, get_normalizer

    def report(step: str, snapshot: bool = False) -> None:
        cur, peak = tracemalloc.get_traced_memory()
        print(f"{step}: {cur / 1e6:,.0f} MB held, step peak {peak / 1e6:,.0f} MB")
        if snapshot:
            for stat in tracemalloc.take_snapshot().statistics("lineno")[:top]:
                print(f"  {stat.size / 1e6:9,.1f} MB  {stat.traceback[0]}")
        tracemalloc.reset_peak()

    params = preset_params("anchor", loo=False)
    norm = anchor_normalizer(get_normalizer("whisper"))
    tracemalloc.start(4)
    preds = load_predictions(folder)
    report("load_predictions", snapshot=True)
    cache = AlignmentCache()
    clips = prepare_clips(preds, preds.models, norm, True, cache=cache)
    report("prepare_clips", snapshot=True)
    mining = mine(clips, panel, preds.models, params, cache)
    report(f"mine ({len(mining.edits):,} edits)", snapshot=True)
    del clips, mining, cache
    clear_normalize_cache()
    report("(dropped the steps' results and the normalizer cache)")
    result = run_refdis(preds, panel, params, normalize_workers=1)
    report(f"run_refdis from scratch ({len(result.edits):,} edits)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clips", type=int, default=200_000, help="clips per model in the rows case (0: skip it)")
    ap.add_argument("--models", type=int, default=4, help="models in the rows case (panel: all but the last)")
    ap.add_argument("--hyp-mb", type=float, default=5.0, help="size of the long hypothesis in MB (0: skip it)")
    ap.add_argument("--base", type=int, default=20_000, help="clips generated before tiling (default 20,000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1, help="--normalize-workers of the runs (default 1)")
    ap.add_argument("--compare", type=Path, default=None, help="a baseline tree's src folder to run as well")
    ap.add_argument("--workdir", type=Path, default=None, help="keep the generated sets here (reused)")
    ap.add_argument("--tracemalloc", action="store_true", help="trace the rows case in this process instead")
    ap.add_argument("--top", type=int, default=15, help="allocation sites printed with --tracemalloc")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        cases = []
        if args.clips:
            folder = workdir / f"rows-{args.models}x{args.clips}"
            t0 = time.perf_counter()
            models = make_rows_set(folder, args.clips, args.models, args.base, args.seed)
            print(f"rows: {args.models} x {args.clips:,} rows in {folder} ({time.perf_counter() - t0:.1f} s to make)")
            panel = models[:-1] if len(models) > 3 else models
            if args.tracemalloc:
                trace(folder, panel, args.top)
                return 0
            cases.append((f"rows {args.models} x {args.clips:,}", folder, panel))
        if args.hyp_mb:
            folder = workdir / f"long-{args.hyp_mb:g}MB"
            models = make_long_set(folder, args.hyp_mb, args.seed)
            cases.append((f"one {args.hyp_mb:g} MB hypothesis", folder, models[:-1]))
        trees = [("this tree", SRC)] + ([("baseline", args.compare)] if args.compare else [])
        print(f"{'case':28s} {'tree':10s} {'wall s':>8s} {'peak MB':>9s} {'exit':>5s}")
        failed = False
        for label, folder, panel in cases:
            got = {}
            for name, src in trees:
                wall, rss, rc, last = run_cli(src, folder, panel, args.workers)
                got[name] = (wall, rss)
                failed |= rc != 0 and name == "this tree"
                print(f"{label:28s} {name:10s} {wall:8.1f} {rss:9,.0f} {rc:5d}  {last[:70]}")
            if args.compare:
                (w1, r1), (w0, r0) = got["this tree"], got["baseline"]
                print(f"{label:28s} {'ratio':10s} {w1 / w0:8.2f} {r1 / r0:9.2f}   (this tree / baseline)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
