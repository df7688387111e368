"""Throughput of ``asr-audit refdis`` against a re-implementation of the public code.

For each size N it writes a seeded synthetic prediction set (N clips x 10 models, planted
reference errors; panel = 4 honest models), then in this one process times

* **baseline**: ``benchmarks/baseline_refdis.py`` (the public code's approach: normalize where
  used, re-align every question, reference normalizer and difflib);
* **ours cold**: ``load_predictions`` + ``run_refdis(preset anchor, loo=False)`` with the
  normalizer cache cleared first (``clear_normalize_cache``) and a fresh alignment cache;
* **ours warm**: the same call again: normalized text is cached, the alignment cache is fresh;
* **ours hot** (for information): the same call reusing the first call's ``AlignmentCache``;
* **mining cold / warm**: only the baseline's share of the work (load, normalize, mine, count
  accept-ref), without WER and the WER-inflation bootstrap.

Times are CPU seconds of this process and of its finished child processes (normalization
workers, ``--workers``), best of ``--repeat`` runs for ours, one baseline run, since the
machine may be shared. It prints clips x models per second and the speed-up over the
baseline (exit status 0 whether or not the targets are met), and checks that the
edits (clip, kind, position, tokens, indices, panel counts, consensus CER, every verdict) and
each model's accept-ref counts are identical (exit status 1 if not). ``run_refdis`` does more than the baseline: it
also scores accept-ref by kind and position and computes WER and WER inflation with a
1,000-resample bootstrap per model; all of that is inside the timings.

    python benchmarks/refdis_throughput.py                  # N = 2,000 and 20,000
    python benchmarks/refdis_throughput.py --quick          # N = 500, a smoke run
    python benchmarks/refdis_throughput.py --sizes 2000 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline_refdis import run_baseline

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.refdis import REF, Edit, mine, preset_params
from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
from asr_audit.probes.predfiles.refdis_result import RefdisResult
from asr_audit.probes.predfiles.refdis_run import run_refdis
from asr_audit.testing.synthetic import make_prediction_set
from asr_audit.text.align import AlignmentCache
from asr_audit.text.normalize import clear_normalize_cache, get_normalizer

TARGET_COLD, TARGET_WARM = 10.0, 50.0


def as_baseline_edits(edits: Sequence[Edit]) -> list[dict]:
    """Our edits in the baseline's vocabulary (kind delete/insert, chunk tokens for insertions)."""
    out = []
    for e in edits:
        out.append(
            {
                "clip_id": e.clip_id,
                "kind": e.legacy_kind,
                "position": e.position,
                "ref_tokens": list(e.ref_tokens) if e.legacy_kind == "delete" else e.alt_text.split(),
                "ref_indices": list(e.ref_indices),
                "n_panel_agree": e.n_panel_agree,
                "n_panel": e.n_panel,
                "consensus_cer": e.consensus_cer,
                "verdicts": dict(e.verdicts),
            }
        )
    return out


def first_difference(ours: list[dict], theirs: list[dict]) -> str:
    for a, b in zip(ours, theirs):
        if a != b:
            return f"ours:     {a}\nbaseline: {b}"
    return f"ours has {len(ours)} edits, the baseline {len(theirs)}"


def cpu_seconds() -> float:
    """CPU seconds of this process plus its finished child processes (normalization workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(fn, *args, **kwargs):
    """``fn``'s result and its (CPU seconds incl. worker processes, wall seconds)."""
    gc.collect()
    c0, t0 = cpu_seconds(), time.perf_counter()
    out = fn(*args, **kwargs)
    return out, (cpu_seconds() - c0, time.perf_counter() - t0)


def ours(folder: Path, panel: list[str], cache: AlignmentCache | None = None, workers: int = 1) -> RefdisResult:
    """The full probe: load, normalize, mine, accept-ref by kind/position, WER inflation (bootstrap)."""
    preds = load_predictions(folder)
    return run_refdis(preds, panel, preset_params("anchor", loo=False), cache=cache, normalize_workers=workers)


def ours_mining(folder: Path, panel: list[str]) -> tuple[list[Edit], dict[str, tuple[int, int]]]:
    """Only the work the baseline does: load, normalize, mine, count accept-ref (no WER)."""
    preds = load_predictions(folder)
    models = preds.models
    clips = prepare_clips(preds, models, get_normalizer("whisper"), text2num=True)
    edits = list(mine(clips, panel, models, preset_params("anchor", loo=False)).edits)
    rates = {}
    for m in models:
        judged = [e.verdicts[m] for e in edits if e.verdicts[m] is not None]
        rates[m] = (sum(v == REF for v in judged), len(judged))
    return edits, rates


def best_of(repeat: int, fn, *args, cold: bool = False):
    """The last result and the fastest (CPU, wall) of ``repeat`` runs; ``cold`` clears the normalizer cache."""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        if cold:
            clear_normalize_cache()
        out, t = timed(fn, *args)
        best = min(best, t)
    return out, best


def profile_top(fn, limit: int = 22) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(limit)
    return buf.getvalue()


def bench_size(
    n_clips: int, seed: int, workdir: Path, profile: bool, repeat: int = 3, workers: int = 1
) -> dict[str, object]:
    folder = workdir / f"synthetic-{n_clips}"
    synth, t_gen = timed(make_prediction_set, n_clips, 10, rng=np.random.default_rng([seed, n_clips]), folder=folder)
    panel = synth.panel(4)
    pairs = n_clips * len(synth.models)
    print(
        f"\n== N = {n_clips:,} clips x {len(synth.models)} models = {pairs:,} clip-models "
        f"(generated in {t_gen[1]:.1f} s; {len(synth.planted):,} planted errors; panel {','.join(panel)})"
    )

    (base_edits, base_rates), t_base = timed(run_baseline, folder, panel)
    get_normalizer("whisper")  # built once per process, as the CLI does
    # best of `repeat` runs: other processes share this machine
    cold, t_cold = best_of(repeat, ours, folder, panel, cold=True)
    warm, t_warm = best_of(repeat, ours, folder, panel)
    hot_cache = AlignmentCache()
    ours(folder, panel, hot_cache)
    hot, t_hot = best_of(repeat, ours, folder, panel, hot_cache)
    (mined_cold, rates_cold), t_mine_cold = best_of(repeat, ours_mining, folder, panel, cold=True)
    (mined_warm, rates_warm), t_mine_warm = best_of(repeat, ours_mining, folder, panel)
    extra = []
    if workers > 1:  # cold with forked normalization workers (their CPU time is counted)
        par, t_par = best_of(repeat, ours, folder, panel, None, workers, cold=True)
        if as_baseline_edits(par.edits) != as_baseline_edits(cold.edits) or [s.to_dict() for s in par.scores] != [
            s.to_dict() for s in cold.scores
        ]:
            raise SystemExit(f"ours cold with {workers} workers differs from ours cold")
        extra.append((f"cold {workers}proc", t_par))

    ours_edits = as_baseline_edits(cold.edits)
    ours_rates = {s.model: (s.accept_ref.k, s.accept_ref.n) for s in cold.scores}
    if [s.to_dict() for s in warm.scores] != [s.to_dict() for s in cold.scores] or [
        s.to_dict() for s in hot.scores
    ] != [s.to_dict() for s in cold.scores]:
        raise SystemExit("ours warm/hot scores (accept-ref, WER, WER inflation) differ from ours cold")
    for label, edits, rates in (
        ("warm", warm.edits, None),
        ("hot", hot.edits, None),
        ("mining cold", mined_cold, rates_cold),
        ("mining warm", mined_warm, rates_warm),
    ):
        if as_baseline_edits(edits) != ours_edits or rates not in (None, ours_rates):
            raise SystemExit(f"ours {label} differs from ours cold")
    if ours_edits != base_edits:
        raise SystemExit("edits differ from the baseline:\n" + first_difference(ours_edits, base_edits))
    if ours_rates != base_rates:
        raise SystemExit(f"accept-ref counts differ:\nours:     {ours_rates}\nbaseline: {base_rates}")

    rows = [
        ("baseline", t_base),
        ("ours cold", t_cold),
        ("ours warm", t_warm),
        ("ours hot", t_hot),
        ("mining cold", t_mine_cold),
        ("mining warm", t_mine_warm),
        *extra,
    ]
    print(f"(CPU seconds of this process and its workers; ours: best of {repeat} runs each; baseline: one run)")
    print(f"{'':12s} {'CPU s':>8s} {'wall s':>8s} {'clip-models/s':>14s} {'x baseline':>11s}")
    for label, (cpu, wall) in rows:
        print(f"{label:12s} {cpu:8.2f} {wall:8.2f} {pairs / cpu:14,.0f} {t_base[0] / cpu:11.1f}")
    print(f"identical: {len(ours_edits):,} edits, verdicts and accept-ref counts of {len(ours_rates)} models")
    speed_cold, speed_warm, speed_hot = (t_base[0] / t[0] for t in (t_cold, t_warm, t_hot))
    print(
        f"targets: cold >= {TARGET_COLD:.0f}x: {'met' if speed_cold >= TARGET_COLD else 'NOT met'} "
        f"({speed_cold:.1f}x); warm >= {TARGET_WARM:.0f}x: "
        f"{'met' if speed_warm >= TARGET_WARM else 'NOT met'} ({speed_warm:.1f}x with a fresh alignment "
        f"cache, {speed_hot:.1f}x reusing the process's alignment cache)"
    )
    if profile:
        clear_normalize_cache()
        print("\n-- profile, ours cold (cumulative) --")
        print(profile_top(lambda: ours(folder, panel)))
        print("-- profile, ours warm (cumulative) --")
        print(profile_top(lambda: ours(folder, panel)))
    return {
        "n_clips": n_clips,
        "n_models": len(synth.models),
        "clip_models": pairs,
        "n_edits": len(ours_edits),
        "cpu_seconds": {label: round(t[0], 3) for label, t in rows},
        "wall_seconds": {label: round(t[1], 3) for label, t in rows},
        "speedup_cpu": {label: round(t_base[0] / t[0], 2) for label, t in rows[1:]},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="2000,20000", help="comma-separated clip counts (default 2000,20000)")
    ap.add_argument("--quick", action="store_true", help="one small size (500 clips): a smoke run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="runs of ours per variant; the fastest counts (default 3)")
    ap.add_argument("--profile", action="store_true", help="cProfile ours cold and warm after timing")
    ap.add_argument(
        "--workdir", type=Path, default=None, help="where to write the synthetic sets (default: a temp dir)"
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the results as JSON here")
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="also time ours cold with this many forked normalization workers (default 1: no)",
    )
    args = ap.parse_args(argv)
    sizes = [500] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        for n in sizes:
            results.append(bench_size(n, args.seed, workdir, args.profile, max(1, args.repeat), args.workers))
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
