"""One progress display for a run: overall and per model, clips/s, RTFx and ETA (rich)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn


class RunProgress:
    """Context manager; ``callback(model)`` gives a ``(n_clips, audio_s, compute_s)`` hook."""

    def __init__(self, jobs: Sequence[tuple[str, int]], enabled: bool = True) -> None:
        self.enabled = enabled and len(jobs) > 0
        self.progress = Progress(
            TextColumn("{task.description:<28}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>9} {task.fields[rtfx]:>10}"),
            TimeRemainingColumn(),
            disable=not self.enabled,
            transient=False,
            redirect_stdout=False,
            redirect_stderr=False,
            refresh_per_second=4,
            console=None if sys.stderr.isatty() else None,
        )
        self.totals: dict[str, int] = {}
        for model, n in jobs:
            self.totals[model] = self.totals.get(model, 0) + n
        self.overall: TaskID | None = None
        self.tasks: dict[str, TaskID] = {}
        self.stats: dict[str, list[float]] = {}

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        self.overall = self.progress.add_task("all models", total=sum(self.totals.values()), rate="", rtfx="")
        for model, n in self.totals.items():
            self.tasks[model] = self.progress.add_task(f"  {model}", total=n, rate="", rtfx="")
            self.stats[model] = [0.0, 0.0, 0.0]  # clips computed-or-cached, audio s, compute s
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def callback(self, model: str):  # noqa: ANN201
        def hook(n_clips: int, audio_s: float, compute_s: float) -> None:
            st = self.stats[model]
            st[0] += n_clips
            st[1] += audio_s
            st[2] += compute_s
            task = self.progress.tasks[self.tasks[model]]
            elapsed = task.elapsed or 0.0
            rate = f"{st[0] / elapsed:.1f} c/s" if elapsed > 0 else ""
            rtfx = f"RTFx {st[1] / st[2]:.1f}" if st[2] > 0 else "cached"
            self.progress.update(self.tasks[model], advance=n_clips, rate=rate, rtfx=rtfx)
            if self.overall is not None:
                self.progress.update(self.overall, advance=n_clips)

        return hook
