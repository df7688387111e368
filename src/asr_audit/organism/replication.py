"""Replication of the positive controls on evaluation seeds fixed before any run (issue 27).

A *freeze record* (``benchmarks/results/frozen-recipes-<date>.json``, committed and tagged before
any evaluation run) names the recipes, the targets and intervals, the code hash they run with
and the evaluation seeds per section. Each evaluation run writes one result file per (section,
seed) with ``benchmarks/validity.py --json`` (its ``targets`` and its provenance record). This
module turns the two into the replication table: one row per planned seed, **every** seed shown
whether it passed, missed, was not run or ran other code, and the replication rate per section
(seeds that met every target of the section / seeds run with the frozen code). Pure functions of
the dictionaries; reading the files is the script's job.

>>> frozen = {"evaluation_seeds": {"memorizer": [5, 6]}, "provenance": {"code_hash": "h"}}
>>> rec = {"seed": 5, "provenance": {"code_hash": "h"},
...        "targets": [{"section": "1 memorizer", "claim": "c", "status": "met", "met": True}]}
>>> rows = seed_rows(frozen, {("memorizer", 5): rec})
>>> [(r.seed, r.outcome) for r in rows]
[(5, 'pass'), (6, 'not run')]
>>> replication_rate(rows, "memorizer")
(1, 1, 2)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SECTIONS = {"memorizer": "1 memorizer", "donor": "2 donor"}
"""Freeze-record section name -> the targets' ``section`` label (:mod:`asr_audit.organism.validity`)."""


@dataclass(frozen=True, slots=True)
class SeedRow:
    """One planned evaluation seed of one section: ``outcome`` is ``pass`` (every target of the
    section met), ``miss`` (some target not met, undefined or not run), ``not run`` (no result
    file) or ``other code`` (the run's code hash is not the frozen one: not a replication)."""

    part: str
    seed: int
    outcome: str
    n_met: int
    n_targets: int
    missed: tuple[str, ...]
    code: str  # "frozen" | the run's commit or code hash prefix | "" when not run

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def seed_rows(frozen: Mapping[str, Any], records: Mapping[tuple[str, int], Mapping[str, Any] | None]) -> list[SeedRow]:
    """Every planned (section, seed) of the freeze record, judged from ``records`` (the result
    files' dictionaries keyed by (section, seed); a missing key: not run)."""
    want = str((frozen.get("provenance") or {}).get("code_hash", ""))
    rows = []
    for part, seeds in frozen.get("evaluation_seeds", {}).items():
        label = SECTIONS.get(part, part)
        for seed in seeds:
            rec = records.get((part, int(seed)))
            if rec is None:
                rows.append(SeedRow(part, int(seed), "not run", 0, 0, (), ""))
                continue
            targets = [t for t in rec.get("targets", []) if t.get("section") == label]
            missed = tuple(f"{t['claim']} ({t['status']})" for t in targets if t.get("met") is not True)
            n_met = len(targets) - len(missed)
            prov = rec.get("provenance") or {}
            same = bool(want) and prov.get("code_hash") == want
            code = "frozen" if same else str(prov.get("commit") or prov.get("code_hash") or "no provenance")[:12]
            outcome = "other code" if not same else ("pass" if targets and not missed else "miss")
            rows.append(SeedRow(part, int(seed), outcome, n_met, len(targets), missed, code))
    return rows


def replication_rate(rows: Sequence[SeedRow], part: str) -> tuple[int, int, int]:
    """(seeds passed, seeds run with the frozen code, seeds planned) of one section."""
    mine = [r for r in rows if r.part == part]
    ran = [r for r in mine if r.outcome in ("pass", "miss")]
    return sum(r.outcome == "pass" for r in ran), len(ran), len(mine)


def replication_table(rows: Sequence[SeedRow]) -> str:
    """GitHub-markdown table of every planned seed, then one rate line per section."""
    header = ["section", "seed", "outcome", "targets met", "code", "missed"]
    cells = [
        [
            r.part,
            str(r.seed),
            r.outcome,
            f"{r.n_met}/{r.n_targets}" if r.n_targets else "-",
            r.code or "-",
            "; ".join(r.missed),
        ]
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(header, *cells)]

    def line(c: Sequence[str]) -> str:
        return "| " + " | ".join(x.ljust(w) for x, w in zip(c, widths)) + " |"

    out = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(c) for c in cells), ""]
    for part in dict.fromkeys(r.part for r in rows):
        k, n, planned = replication_rate(rows, part)
        out.append(f"{part}: replicated on {k} of {n} seeds run with the frozen code ({planned} planned)")
    return "\n".join(out)


__all__ = ["SECTIONS", "SeedRow", "replication_rate", "replication_table", "seed_rows"]
