"""Null-calibration benchmark: how often does each flag of the audit fire on an honest model?

For every probe that can flag a model, simulate many datasets from null worlds (honest models,
identical behaviour in every condition) and planted worlds (known copying / known effects), run
the probe's real code (:mod:`asr_audit.testing.null_worlds`) and print one table: the flag's
nominal level, its false-positive rate with a Wilson 95% interval, power at the planted effect
and the minimum detectable effect of the grid. A flag whose false-positive rate exceeds its
nominal level beyond Monte-Carlo error (the Wilson interval lies above it) is marked FAIL and the
script exits 1. Documented in ``docs/validity.md``.

    python benchmarks/null_calibration.py                       # 500 datasets per probe (~15-30 min, 2 cores)
    python benchmarks/null_calibration.py --n-datasets 60 --only switch
    python benchmarks/null_calibration.py --seed 1 --json null-calibration.json
    python benchmarks/null_calibration.py --only refdis --refdis-errors 0.03,0.10   # noisier models
    python benchmarks/null_calibration.py --n-datasets 500 --seed 0 --write-data   # the rates the report cites
    python benchmarks/null_calibration.py --only gate --n-datasets 150 --seed 0 --update-data  # one probe's rows

``--write-data`` (a full run only: every probe, default worlds) stores each flag's measured
false-positive rate in ``src/asr_audit/data/null_calibration.json``
(:data:`asr_audit.stats.flags.MEASURED_FPR_FILE`), which the report's verdict sentences cite.
``--update-data`` (with ``--only``) replaces only the rows of the probes run, each row carrying its
own dataset count, seed and date; the other probes' rows stay as their full run wrote them.
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
from asr_audit.testing.null_worlds import PROBES, Calibration, calibrate, format_table


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
        "--refdis-errors",
        metavar="LO,HI",
        default=None,
        help="per-word drop and substitution rates of the refdis world's models (default 0.01,0.05)",
    )
    ap.add_argument(
        "--write-data",
        action="store_true",
        help=f"store the measured false-positive rates the report cites in {MEASURED_FPR_FILE.name} "
        "(a full run only: no --only, no --refdis-errors)",
    )
    ap.add_argument(
        "--update-data",
        action="store_true",
        help=f"replace only the --only probes' rows in {MEASURED_FPR_FILE.name} (each row keeps its own "
        "dataset count, seed and date)",
    )
    args = ap.parse_args(argv)
    if args.n_datasets < 1:
        ap.error(f"--n-datasets {args.n_datasets} must be >= 1")
    if args.write_data and (args.only or args.refdis_errors):
        ap.error("--write-data stores the rates of a full run: drop --only and --refdis-errors")
    if args.update_data and (not args.only or args.refdis_errors or args.write_data):
        ap.error(
            "--update-data replaces the rows of the --only probes: name them, drop --refdis-errors and --write-data"
        )
    options: dict[str, dict[str, object]] = {}
    if args.refdis_errors:
        try:
            lo, hi = (float(x) for x in args.refdis_errors.split(","))
        except ValueError:
            ap.error(f"--refdis-errors {args.refdis_errors!r} must be two rates LO,HI, e.g. 0.03,0.10")
        if not 0 <= lo <= hi < 1:
            ap.error(f"--refdis-errors {args.refdis_errors!r} needs 0 <= LO <= HI < 1")
        options["refdis"] = {"error_range": (lo, hi)}
    probes = args.only or list(PROBES)
    rows = []
    t0 = time.perf_counter()
    for probe in probes:
        # one child generator per probe, so --only PROBE reproduces that probe's rows of a full run
        rng = np.random.default_rng([args.seed, PROBES.index(probe)])
        say(f"{probe}: {args.n_datasets} datasets")
        rows += calibrate(probe, rng, args.n_datasets, progress=say, **options.get(probe, {}))
    wall = time.perf_counter() - t0
    print(
        f"null calibration: {args.n_datasets} datasets per probe, seed {args.seed}, "
        f"{wall:.0f} s ({platform.python_version()}, numpy {np.__version__})\n"
    )
    print(format_table(rows))
    failed = [r for r in rows if r.status == "FAIL"]
    print(
        f"\n{len(failed)} of {len(rows)} flags above their nominal rate beyond Monte-Carlo error"
        + (": " + "; ".join(f"{r.flag} ({r.setting})" for r in failed) if failed else "")
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "n_datasets": args.n_datasets,
                    "seed": args.seed,
                    "options": options,
                    "seconds": round(wall, 1),
                    "probes": probes,
                    "rows": [r.to_dict() for r in rows],
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    if args.write_data:
        write_data(rows, args.n_datasets, args.seed, MEASURED_FPR_FILE)
        say(f"wrote {MEASURED_FPR_FILE}")
    if args.update_data:
        update_data(rows, probes, args.n_datasets, args.seed, MEASURED_FPR_FILE)
        say(f"updated the {', '.join(probes)} rows of {MEASURED_FPR_FILE}")
    return 1 if failed else 0


def write_data(rows: list[Calibration], n_datasets: int, seed: int, path: Path) -> None:
    """Each flag's measured false-positive rate, by setting, as the report reads it
    (:func:`asr_audit.stats.flags.measured_fpr`)."""
    keys = ("probe", "flag", "setting", "level", "k_null", "n_null", "fpr", "fpr_ci_low", "fpr_ci_high", "status")
    data = {
        "what": "false-positive rate of each flag on simulated honest models (docs/validity.md)",
        "regenerate": REGENERATE,
        "date": time.strftime("%Y-%m-%d"),
        "n_datasets": n_datasets,
        "seed": seed,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "rows": [{k: r.to_dict()[k] for k in keys} for r in rows],
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def update_data(rows: list[Calibration], probes: list[str], n_datasets: int, seed: int, path: Path) -> None:
    """Replace the rows of ``probes`` in the stored rates with ``rows``, each stamped with its own
    dataset count, seed and date (:func:`asr_audit.stats.flags.measured_fpr` reads them)."""
    keys = ("probe", "flag", "setting", "level", "k_null", "n_null", "fpr", "fpr_ci_low", "fpr_ci_high", "status")
    data = json.loads(path.read_text(encoding="utf-8"))
    kept = [r for r in data["rows"] if r["probe"] not in probes]
    stamp = {"n_datasets": n_datasets, "seed": seed, "date": time.strftime("%Y-%m-%d")}
    data["rows"] = kept + [{**{k: r.to_dict()[k] for k in keys}, **stamp} for r in rows]
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
