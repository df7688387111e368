"""Plain corpus WER per model of a prediction set, under one normalizer (pure functions).

For a corpus where reference disagreement cannot run (its panel is too small, or its language
has no panel here), WER is still defined: every clip with a reference counts; a clip a model
left unanswered counts as an empty hypothesis (every reference word deleted), so a missing clip
never lowers the WER.
"""

from __future__ import annotations

from typing import Any

from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.text.align import corpus_wer
from asr_audit.text.normalize import normalize_many


def wer_by_model(preds: PredictionSet, normalizer: str) -> list[dict[str, Any]]:
    """Per model: clips scored, clips without a hypothesis, and corpus WER under ``normalizer``
    (None without reference words).
    """

    ids = list(preds.references)
    refs = [t.split() for t in normalize_many(normalizer, [preds.references[c] for c in ids])]
    out = []
    for model in preds.models:
        raw = [preds.hypothesis(model, c) for c in ids]
        hyps = [t.split() for t in normalize_many(normalizer, [h or "" for h in raw])]
        out.append(
            {
                "model": model,
                "n_clips": len(ids),
                "n_missing": sum(h is None for h in raw),
                "wer": corpus_wer(zip(refs, hyps)) if any(refs) else None,
            }
        )
    return out
