"""A caller's alignment cache is used even when it starts empty (an empty cache is falsy)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.refdis import preset_params
from asr_audit.probes.predfiles.refdis_run import run_refdis
from asr_audit.testing.synthetic import make_prediction_set
from asr_audit.text.align import AlignmentCache


def test_an_empty_cache_passed_in_is_filled_and_reused(tmp_path: Path) -> None:
    s = make_prediction_set(40, 5, rng=np.random.default_rng(2), folder=tmp_path, copy_shares=())
    preds = load_predictions(tmp_path)
    cache = AlignmentCache()
    first = run_refdis(preds, s.panel(4), preset_params("anchor"), cache=cache, n_resamples=10)
    assert len(cache) > 0
    filled = len(cache)
    second = run_refdis(preds, s.panel(4), preset_params("anchor"), cache=cache, n_resamples=10)
    assert len(cache) == filled  # nothing new to align
    assert second.to_dict() == first.to_dict()
