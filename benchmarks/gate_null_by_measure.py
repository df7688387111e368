"""Which measure makes the regression gate fire on two equally good models?

Runs the gate's null world of the null-calibration benchmark (``calibrate_gate`` in
:mod:`asr_audit.testing.null_worlds`, no planted grid) and counts, at the boundary setting (every
minimum effect 0), how often each measure was tested and which measures fired. Documented in
``docs/gate.md``.

    python benchmarks/gate_null_by_measure.py --seed 1 --n-datasets 120
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from asr_audit.testing import null_worlds

BOUNDARY = "equal models, min effect 0 (boundary)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-datasets", type=int, default=120)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    counts: collections.Counter[str] = collections.Counter()
    original = null_worlds._Tally.null

    def null(self: Any, result: Mapping[str, Any]) -> None:
        if self.setting == BOUNDARY:
            for t in result["tests"]:
                counts[f"{t['measure']} {t['status']}"] += 1
            counts["datasets fired"] += result["decision"] == "regression"
        original(self, result)

    null_worlds._Tally.null = null  # type: ignore[method-assign]
    try:
        rows = null_worlds.calibrate("gate", np.random.default_rng([args.seed, 99]), args.n_datasets, grid=())
    finally:
        null_worlds._Tally.null = original  # type: ignore[method-assign]
    print(f"gate null world, seed {args.seed}, {args.n_datasets} datasets, boundary setting:")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    for r in rows:
        print(f"  {r.setting}: {r.k_null}/{r.n_null}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
