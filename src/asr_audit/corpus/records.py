"""Records shared by the corpus loaders: prediction rows and files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

Seconds = float


@dataclass(frozen=True, slots=True)
class PredictionRow:
    """One clip in one model's prediction file.

    ``hypothesis`` is ``None`` when the model gave no output (null / absent field) and ``""``
    when it gave an empty one: the two are kept distinct.
    """

    clip_id: str
    reference: str
    hypothesis: str | None
    duration: Seconds | None = None
    time: Seconds | None = None
    language: str | None = None
    speaker: str | None = None
    line: int = 0  # line (or row) number in the source file, for error messages


@dataclass(frozen=True, slots=True)
class PredictionFile:
    """One model's predictions, keyed by clip id."""

    model: str
    path: Path
    dataset: str | None
    split: str | None
    rows: Mapping[str, PredictionRow]
    # role (id / ref / hyp) -> the column it was read from (the first rows' columns)
    columns: Mapping[str, str] = field(default_factory=dict)
