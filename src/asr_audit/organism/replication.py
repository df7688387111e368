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
    file), ``other code`` (the run's code hash is not the frozen one: not a replication) or
    ``other recipe`` (frozen code run with other training or set settings: not a replication;
    ``missed`` then says how it differs)."""

    part: str
    seed: int
    outcome: str
    n_met: int
    n_targets: int
    missed: tuple[str, ...]
    code: str  # "frozen" | the run's commit or code hash prefix | "" when not run

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


TRAIN_KEYS = ("steps", "lr", "batch_size", "warmup", "clip_norm")
"""The training settings a run must share with its freeze record (the seed is the run's own)."""


def recipe_differences(recipe: Mapping[str, Any] | None, result: Mapping[str, Any] | None) -> tuple[str, ...]:
    """How a run's recipe differs from the frozen one: each trained model's settings
    (:data:`TRAIN_KEYS`, ``result["train"][model]["train"]``) against ``recipe["train"]``, and the
    run's set configuration against ``recipe["set_config"]`` where the record states one (the code
    hash alone does not see a command-line setting). Empty when they agree or nothing is stated.

    >>> recipe = {"train": {"steps": 200, "lr": 0.0005}, "set_config": {"masked_variants": 16}}
    >>> run = {"train": {"m": {"train": {"steps": 112, "lr": 0.0005}}}, "set": {"config": {"masked_variants": 16}}}
    >>> recipe_differences(recipe, run)
    ('m: steps 112, frozen 200',)
    """
    if not recipe or not result:
        return ()
    out = []
    want = recipe.get("train") or {}
    for model, meta in sorted((result.get("train") or {}).items()):
        got = (meta or {}).get("train") or {}
        out += [
            f"{model}: {k} {got.get(k)}, frozen {want[k]}" for k in TRAIN_KEYS if k in want and got.get(k) != want[k]
        ]
    if "set_config" in recipe and ((result.get("set") or {}).get("config")) != recipe["set_config"]:
        out.append("set configuration differs from the frozen set_config")
    return tuple(out)


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
            differs = recipe_differences(frozen.get("recipes", {}).get(part), rec.get(part))
            if not same:
                outcome = "other code"
            elif differs:
                outcome, missed = "other recipe", differs
            else:
                outcome = "pass" if targets and not missed else "miss"
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


__all__ = [
    "SECTIONS",
    "TRAIN_KEYS",
    "SeedRow",
    "recipe_differences",
    "replication_rate",
    "replication_table",
    "seed_rows",
]
