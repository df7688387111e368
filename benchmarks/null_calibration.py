"""Null-calibration benchmark: how often does each flag of the audit fire on an honest model?

For every probe that can flag a model, simulate many datasets from null worlds (honest models,
identical behaviour in every condition) and planted worlds (known copying / known effects), run
the probe's real code (:mod:`asr_audit.testing.null_worlds`) and print one table: the flag's
nominal level, its false-positive rate with a Wilson 95% interval, power at the planted effect
and the minimum detectable effect of the grid. A flag whose false-positive rate exceeds its
nominal level beyond Monte-Carlo error is marked FAIL; "ok" needs its one-sided 95% upper bound
below 1.5x the nominal level (else "inconclusive"). Documented in ``docs/validity.md``.

    python benchmarks/null_calibration.py --n-datasets 60 --only switch
    python benchmarks/null_calibration.py --seed 901 --only refdis --n-datasets 20 --json t.json   # a tuning seed
    # the shipped rates (about 6 min on 2 cores, 20-50 min on a busy machine): seed 7717, fixed before it ran
    python benchmarks/null_calibration.py --seed 7717 --n-datasets 500 --n refdis=250 --n gate=100 \
        --n battery=1000 --jobs 2 --write-data

Seeds: the worlds, statistics and thresholds were tuned only on
:data:`asr_audit.testing.null_worlds.TUNING_SEEDS` (900-909); the shipped rates come from
:data:`~asr_audit.testing.null_worlds.EVALUATION_SEED` (7718; the earlier evaluation seeds, 2026 and
7717, are in docs/validity.md), both fixed in the commit before the evaluation run. ``--write-data`` (one full run: every probe) stores every row with its provenance
(the hash of :data:`~asr_audit.testing.null_worlds.CODE_FILES`, date, command, seeds) and a small
check run in ``src/asr_audit/data/null_calibration.json``
(:data:`asr_audit.stats.flags.MEASURED_FPR_FILE`), which the report cites and
``tests/stats/test_null_calibration.py::test_shipped_rates_reproduce`` recomputes. Exit code 1
when a flag in use is FAIL (retired rules, shown for comparison, never fail the run).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from asr_audit.stats.flags import MEASURED_FPR_FILE, REGENERATE
from asr_audit.testing.null_worlds import (
    CODE_FILES,
    PROBES,
    TUNING_SEEDS,
    Calibration,
    calibrate,
    check_run,
    code_hash,
    format_table,
)

ROW_KEYS = ("probe", "flag", "setting", "level", "k_null", "n_null", "fpr", "fpr_ci_low", "fpr_ci_high", "status")
MORE_KEYS = (
    "planted",
    "power",
    "power_ci_low",
    "power_ci_high",
    "power_grid",
    "mde",
    "null_mean",
    "null_se",
    "seconds",
)


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-datasets", type=int, default=500, help="simulated datasets per probe (default 500)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the one generator every world draws from")
    ap.add_argument(
        "--only",
        choices=PROBES,
        action="append",
        help="run only this probe (repeatable); default: all of " + ", ".join(PROBES),
    )
    ap.add_argument("--json", type=Path, help="also write every row (with the power grid) as JSON here")
    ap.add_argument(
        "--write-data",
        action="store_true",
        help=f"store every row, its provenance and a check run in {MEASURED_FPR_FILE.name} "
        "(one full run only: no --only)",
    )
    ap.add_argument(
        "--n",
        metavar="PROBE=N",
        action="append",
        default=[],
        help="datasets for one probe instead of --n-datasets (repeatable), e.g. --n refdis=300",
    )
    ap.add_argument("--jobs", type=int, default=1, help="probes run in this many processes (same rows)")
    ap.add_argument(
        "--table-from-data",
        type=Path,
        metavar="JSON",
        help="print the Markdown table of a stored run (the data file or a --json file) and exit",
    )
    args = ap.parse_args(argv)
    if args.table_from_data:
        print(table_from_data(args.table_from_data))
        return 0
    sizes: dict[str, int] = {}
    for item in args.n:
        name, _, value = item.partition("=")
        if name not in PROBES or not value.isdigit() or int(value) < 1:
            ap.error(f"--n {item!r} must be PROBE=N with PROBE one of {', '.join(PROBES)} and N >= 1")
        sizes[name] = int(value)
    if args.n_datasets < 1:
        ap.error(f"--n-datasets {args.n_datasets} must be >= 1")
    if args.write_data and args.only:
        ap.error("--write-data stores the rates of one full run: drop --only")
    options: dict[str, dict[str, object]] = {}
    probes = args.only or list(PROBES)
    rows = []
    t0 = time.perf_counter()
    n_of = {p: sizes.get(p, args.n_datasets) for p in probes}
    jobs = [(probe, n_of[probe], args.seed, options.get(probe, {})) for probe in probes]
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for got in pool.map(run_probe, jobs):
                rows += got
    else:
        for job in jobs:
            rows += run_probe(job)
    wall = time.perf_counter() - t0
    print(
        f"null calibration: datasets per probe {n_of}, seed {args.seed}"
        + (" (a tuning seed)" if args.seed in TUNING_SEEDS else "")
        + f", {wall:.0f} s ({platform.python_version()}, numpy {np.__version__})\n"
    )
    print(format_table(rows))
    failed = [r for r in rows if r.status == "FAIL" and not r.retired]
    print(
        f"\n{len(failed)} of {len(rows)} flags above their nominal rate beyond Monte-Carlo error"
        + (": " + "; ".join(f"{r.flag} ({r.setting})" for r in failed) if failed else "")
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "n_datasets": n_of,
                    "seed": args.seed,
                    "options": options,
                    "seconds": round(wall, 1),
                    "probes": probes,
                    "rows": [r.to_dict() for r in rows],
                    "provenance": {
                        "command": " ".join(["python", "benchmarks/null_calibration.py", *sys.argv[1:]]),
                        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "code_hash": code_hash(),
                        "code_files": list(CODE_FILES),
                        "tuning_seeds": list(TUNING_SEEDS),
                    },
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    if args.write_data:
        write_data(rows, n_of, args.seed, MEASURED_FPR_FILE, wall)
        say(f"wrote {MEASURED_FPR_FILE}")
    return 1 if failed else 0


def table_from_data(path: Path) -> str:
    """The Markdown table of a stored run (``--write-data`` or ``--json`` file): every row, as the
    benchmark prints it (docs/validity.md's Results are this output)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    head = (
        "probe",
        "flag",
        "setting",
        "nominal",
        "FPR [95% CI]",
        "k / n",
        "null estimate",
        "power at planted [95% CI]",
        "MDE",
        "status",
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in data["rows"]:
        est = "-" if r.get("null_mean") is None else f"{r['null_mean']:+.3f}"
        power = (
            "-" if r.get("power") is None else f"{r['power']:.2f} [{r['power_ci_low']:.2f}, {r['power_ci_high']:.2f}]"
        )
        if r.get("planted") is not None and power != "-":
            power = f"c/delta = {r['planted']:g}: {power}"
        grid = r.get("power_grid") or {}
        reached = [float(e) for e, g in grid.items() if g["n"] and g["k"] / g["n"] >= 0.8]
        mde = "-" if not grid else (f"{min(reached):g}" if reached else f"> {max(float(e) for e in grid):g}")
        cells = (
            r["probe"],
            f"`{r['flag']}`",
            r["setting"],
            f"{r['level']:.3f}",
            f"{r['fpr']:.3f} [{r['fpr_ci_low']:.3f}, {r['fpr_ci_high']:.3f}]",
            f"{r['k_null']} / {r['n_null']}",
            est,
            power,
            mde,
            r["status"],
        )
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def run_probe(job: tuple[str, int, int, dict[str, object]]) -> list[Calibration]:
    """One probe's rows; one child generator per probe (``[seed, its index]``), so ``--only PROBE``
    and ``--jobs`` reproduce that probe's rows of a full sequential run."""
    probe, n, seed, options = job
    say(f"{probe}: {n} datasets")
    rows = calibrate(probe, np.random.default_rng([seed, PROBES.index(probe)]), n, progress=say, **options)
    say(f"{probe}: done")
    return rows


def write_data(
    rows: list[Calibration],
    n_of: dict[str, int],
    seed: int,
    path: Path,
    seconds: float = 0.0,
    check: dict[str, object] | None = None,
) -> None:
    """Every row of one full run, as the report reads it (:func:`asr_audit.stats.flags.measured_fpr`),
    with its provenance: the hash of the code that made it (:func:`asr_audit.testing.null_worlds.code_hash`),
    the date, the command, the evaluation and tuning seeds, and a small check run
    (:data:`asr_audit.testing.null_worlds.CHECK_RUN`) that ``tests/stats/test_null_calibration.py``
    recomputes to catch drift."""
    keys = (*ROW_KEYS, *MORE_KEYS)
    data = {
        "what": "false-positive rate and power of each flag in null and planted worlds (docs/validity.md)",
        "regenerate": REGENERATE,
        "command": " ".join(["python", "benchmarks/null_calibration.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d"),
        "code_hash": code_hash(),
        "code_files": list(CODE_FILES),
        "n_datasets": max(n_of.values()),
        "n_datasets_by_probe": n_of,
        "seed": seed,
        "tuning_seeds": list(TUNING_SEEDS),
        "seconds": round(seconds, 1),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "check": check_run(seed) if check is None else check,
        "rows": [{k: r.to_dict()[k] for k in keys} | {"n_datasets": n_of[r.probe]} for r in rows],
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
