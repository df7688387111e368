"""The edit-locus table's intervals (issue 27: patching with intervals on >= 50 edits)."""

from __future__ import annotations

import numpy as np

from asr_audit.mechrun.patch import EditPatch, PatchResult, median_change_interval
from asr_audit.stats.intervals import wilson


def _result(n: int, n_clips: int, fell: int) -> PatchResult:
    rng = np.random.default_rng(3)
    edits = []
    for i in range(n):
        full = float(rng.uniform(0.6, 1.0))
        patched = full - 0.5 if i < fell else min(1.0, full + 0.05)
        edits.append(EditPatch(f"clip{i * n_clips // n}", i, "omission", "", full, {"enc <- B": patched}))
    return PatchResult({}, ("enc <- B",), tuple(edits))


def test_share_interval_is_wilson_when_each_clip_holds_one_edit() -> None:
    (row,) = [r for r in _result(60, 60, 57).table() if r.kind == "all"]
    w = wilson(57, 60)
    assert (row.n, row.toward_audio) == (60, 0.95)
    assert (row.toward_low, row.toward_high) == (w.low, w.high)
    assert row.change_low <= row.median_change <= row.change_high < 0  # most edits fell by 0.5


def test_intervals_widen_when_edits_share_clips_and_are_seeded() -> None:
    one = [r for r in _result(60, 60, 40).table() if r.kind == "all"][0]
    few = [r for r in _result(60, 4, 40).table() if r.kind == "all"][0]
    assert few.toward_high - few.toward_low > one.toward_high - one.toward_low  # 4 clusters, not 60 edits
    assert _result(60, 4, 40).table(seed=5) == _result(60, 4, 40).table(seed=5)


def test_median_interval_resamples_whole_clips() -> None:
    change = np.array([-1.0, -1.0, -1.0, 0.0])
    mid, low, high = median_change_interval(change, ["a", "a", "a", "b"], np.random.default_rng(0), 500)
    assert mid == -1.0 and low == -1.0 and high == 0.0  # a draw of clip b alone has median 0
