"""The paper's published per-model accept-ref aggregates, shipped with the package."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from asr_audit.data import DATA_DIR
from asr_audit.errors import ConfigError
from asr_audit.stats.intervals import wilson

PUBLISHED_DIR = DATA_DIR / "published"


@dataclass(frozen=True, slots=True)
class PublishedModel:
    """One model's accept-ref on one published dataset (consensus panel, paper preset)."""

    dataset: str
    model: str
    in_panel: bool
    k: int
    n: int
    rate: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, slots=True)
class PublishedSet:
    name: str  # file stem, e.g. vox_en_newwl4
    dataset: str
    panel: tuple[str, ...]
    params: dict
    models: tuple[PublishedModel, ...]


def available_published() -> list[str]:
    """Names of the shipped aggregates (file stems)."""
    return sorted(p.name.removesuffix("_aggregate.json") for p in PUBLISHED_DIR.glob("*_aggregate.json"))


def load_published(name: str = "vox_en_newwl4", path: Path | None = None) -> PublishedSet:
    """Load a shipped aggregate by name (see :func:`available_published`) or from ``path``."""

    if path is None:
        if name not in available_published():
            raise ConfigError(f"unknown published set {name!r}; available: {', '.join(available_published())}")
        path = PUBLISHED_DIR / f"{name}_aggregate.json"
    d = json.loads(Path(path).read_text(encoding="utf-8"))
    models = []
    for row in d["benchmaxx_leaderboard"]:
        k, n = int(row["accepted_ref"]), int(row["eligible_runs"])
        r = wilson(k, n)
        models.append(
            PublishedModel(d["dataset"], row["model"], bool(row.get("in_whitelist")), k, n, r.rate, r.low, r.high)
        )
    models.sort(key=lambda m: (-m.rate, m.model))
    return PublishedSet(name, d["dataset"], tuple(d.get("whitelist", ())), dict(d.get("params", {})), tuple(models))
