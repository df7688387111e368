"""Plain corpus WER per model of a prediction set, under one normalizer (pure functions).

For a corpus where reference disagreement cannot run (its panel is too small, or its language
has no panel here), WER is still defined: every clip with a reference counts; a clip a model
left unanswered counts as an empty hypothesis (every reference word deleted), so a missing clip
never lowers the WER.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.options import Reader, Surface
from asr_audit.probes.core.probe import FunctionProbe, ProbeInputs, probe
from asr_audit.text.align import corpus_wer
from asr_audit.text.languages import scoring_normalizer
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


@dataclass(frozen=True, slots=True)
class WerOptions:
    """The ``wer`` probe's options: the corpus ``language`` (ISO 639-1), whose normalizer scores it."""

    language: str = "en"

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface) -> WerOptions:
        language = Reader(values, surface, ("language",), "wer").values.get("language", "en")
        if not isinstance(language, str) or not language.strip():
            raise surface.error("language", language, "must be a language code", 'write e.g. "es"')
        return cls(language)


def _run_wer(inputs: ProbeInputs, options: WerOptions) -> dict[str, Any]:
    """WER per model of a corpus (the spec's normalizer becomes the corpus language's, as for
    refdis), with the panel the corpus has: where it holds fewer than two models, reference
    disagreement is undefined and the report says so."""
    normalizer = scoring_normalizer(inputs.normalizer, options.language)
    return {
        "language": options.language,
        "normalizer": normalizer,
        "panel": list(inputs.panel),
        "models": wer_by_model(inputs.predictions, normalizer),
    }


#: the ``wer`` probe (``[probes.wer]``; no verb: ``asr-audit refdis`` reports WER with the rest)
WER: FunctionProbe[WerOptions, dict[str, Any]] = probe(
    "wer",
    ("language",),
    "plain corpus WER per model under the corpus language's normalizer",
    WerOptions.from_mapping,
    _run_wer,
)
