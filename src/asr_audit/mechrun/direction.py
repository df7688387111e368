"""Directions from two captures, with a layer sweep of held-out separability.

Set A and set B are two pooled captures (:mod:`asr_audit.mechrun.capture`, one row per clip) at
the same sites: the paper's pairing is the same clip spliced with a benchmark donor vs a
conversational donor; also the same sentences in two voices, or two corpora. When both sets hold
the same number of clips in the same order the rows are *pairs* (the split keeps pairs together
and the rank-k subspace is the SVD of the paired differences); otherwise each set is split on
its own and only rank 1 is available.

:func:`layer_sweep` fits the diff-in-means on a seeded share of the pairs and reports, per site,
the AUC of the held-out projections (A above B); :func:`make_direction` builds the direction at
one site from all rows and records its provenance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import ConfigError
from asr_audit.mech.directions import Direction, auc, diff_in_means, direction_from_sets, heldout_auc, split_pairs, unit
from asr_audit.mechrun.capture import Capture
from asr_audit.mechrun.probe import DIRECTIONS
from asr_audit.options import REQUIRED, CliFlag
from asr_audit.probes.core.flags import JSON, SEED

#: ``asr-audit mech direction``'s flags
FLAGS = (
    CliFlag("set_a", Path, REQUIRED, "Capture folder of set A (e.g. benchmark voice / benchmark donor).", ("--a",)),
    CliFlag("set_b", Path, REQUIRED, "Capture folder of set B (e.g. other voice / conversational donor).", ("--b",)),
    CliFlag("name", str, REQUIRED, "Save the direction under this name."),
    CliFlag("site", str, None, "Build it at this site (default: the best held-out AUC)."),
    CliFlag("sites", str, None, "Sites to sweep (default: every site of both captures)."),
    CliFlag("k", int, 1, "Rank: k > 1 keeps the top-k SVD subspace of paired differences.", minimum=1),
    CliFlag("holdout", float, 0.5, "Share of pairs held out to score each layer."),
    SEED,
    DIRECTIONS,
    JSON,
)

#: ``asr-audit mech direction --help``'s worked example: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit mech direction --a caps/slt --b caps/rms --name voice-slt --json sweep.json",
        "a diff-in-means direction at the best held-out layer",
    ),
)


@dataclass(frozen=True, slots=True)
class SweepRow:
    site: str
    auc: float
    norm: float  # |diff-in-means| over all rows
    n_fit: int
    n_heldout: int

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def is_paired(a: Capture, b: Capture) -> bool:
    return len(a.clips) == len(b.clips) and len(a.clips) > 0


def _check(a: Capture, b: Capture, sites: Sequence[str]) -> None:
    if a.model.get("key") != b.model.get("key"):
        raise ConfigError(
            f"captures {a.root} and {b.root} come from different models; fix: capture both with one backend"
        )
    for s in sites:
        for c in (a, b):
            if s not in c.sites:
                raise ConfigError(f"capture {c.root} has no site {s!r}; captured: {', '.join(c.sites)}")


def layer_sweep(
    a: Capture, b: Capture, sites: Sequence[str] | None = None, *, holdout: float = 0.5, seed: int = 0
) -> list[SweepRow]:
    """Held-out AUC of the diff-in-means projection at every site (same seeded split for all sites)."""
    sites = list(sites or [s for s in a.sites if s in b.sites])
    _check(a, b, sites)
    rng = np.random.default_rng(seed)
    if is_paired(a, b):
        fit, held = split_pairs(len(a.clips), holdout, rng)
        fit_a = fit_b = fit
        held_a = held_b = held
    else:
        fit_a, held_a = split_pairs(len(a.clips), holdout, rng)
        fit_b, held_b = split_pairs(len(b.clips), holdout, rng)
    out = []
    for s in sites:
        xa, xb = a.pooled(s), b.pooled(s)
        if is_paired(a, b):
            score = heldout_auc(xa, xb, fit_a, held_a)
        else:
            score = _unpaired_auc(xa, xb, fit_a, held_a, fit_b, held_b)
        out.append(
            SweepRow(s, score, float(np.linalg.norm(xa.mean(0) - xb.mean(0))), len(fit_a), len(held_a) + len(held_b))
        )
    return out


def _unpaired_auc(
    xa: np.ndarray, xb: np.ndarray, fa: np.ndarray, ha: np.ndarray, fb: np.ndarray, hb: np.ndarray
) -> float:
    d = unit(diff_in_means(xa[fa], xb[fb]))
    return auc(xa[ha] @ d, xb[hb] @ d)


def best_site(rows: Sequence[SweepRow]) -> str:
    """The site with the highest held-out AUC (the earliest on ties)."""
    if not rows:
        raise ConfigError("the layer sweep has no sites")
    return max(rows, key=lambda r: (r.auc, -rows.index(r))).site


def make_direction(
    name: str, a: Capture, b: Capture, site: str, *, k: int = 1, extra: dict[str, Any] | None = None
) -> Direction:
    """The diff-in-means direction at ``site`` from all rows (rank ``k`` needs paired sets)."""
    _check(a, b, [site])
    if k > 1 and not is_paired(a, b):
        raise ConfigError(f"rank k={k} needs paired sets (the same number of clips, in pair order)")
    provenance = {
        "model": a.model,
        "site": site,
        "k": k,
        "paired": is_paired(a, b),
        "set_a": {"capture": str(a.root), "ids": a.ids(), "audio_hashes": [c.audio_hash for c in a.clips]},
        "set_b": {"capture": str(b.root), "ids": b.ids(), "audio_hashes": [c.audio_hash for c in b.clips]},
        **(extra or {}),
    }
    return direction_from_sets(name, site, a.pooled(site), b.pooled(site), k=k, provenance=provenance)


def sweep_direction(
    name: str,
    a: Capture,
    b: Capture,
    sites: Sequence[str] | None,
    site: str | None,
    *,
    k: int,
    holdout: float,
    seed: int,
) -> tuple[list[SweepRow], str, Direction]:
    """The layer sweep of ``sites`` (every site of both captures by default), the chosen site
    (``site``, else the best held-out AUC) and the direction ``name`` built there (its record keeps
    the seed, the held-out share and the site's held-out AUC)."""
    rows = layer_sweep(a, b, sites, holdout=holdout, seed=seed)
    chosen = site or best_site(rows)
    heldout = {r.site: r.auc for r in rows}.get(chosen)
    extra = {"seed": seed, "holdout": holdout, "heldout_auc": heldout}
    return rows, chosen, make_direction(name, a, b, chosen, k=k, extra=extra)


def sweep_lines(rows: Sequence[SweepRow], chosen: str, name: str, k: int, path: Path) -> list[str]:
    """The sweep as ``asr-audit mech direction`` prints it: a line per site (``*``: the chosen one),
    then the direction ``name`` (rank ``k``) saved at ``path``."""
    lines = [f"{r.site:28s} AUC {r.auc:.3f}  |d| {r.norm:.3f}{' *' if r.site == chosen else ''}" for r in rows]
    return [*lines, f"direction {name!r} at {chosen} (k={k}) -> {path}"]
