"""The refdis result records: one model's scores, and a run's result with its JSON form.

:class:`RefdisResult` carries every parameter, the normalizer and the seed, so its
:meth:`~RefdisResult.to_dict` (``asr-audit refdis --json``) is reproducible on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from asr_audit.probes.predfiles.inflation import Inflation
from asr_audit.probes.predfiles.refdis import Edit, Mining, RefdisParams
from asr_audit.stats.intervals import Rate

if TYPE_CHECKING:
    from asr_audit.probes.predfiles.adequacy import PanelAdequacy
    from asr_audit.probes.predfiles.verified import Verification


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelScore:
    """One model's accept-ref and WER figures."""

    model: str
    in_panel: bool
    accept_ref: Rate
    n_clips: int  # clips with at least one eligible edit
    by_kind: Mapping[str, Rate]
    by_position: Mapping[str, Rate]
    inflation: Inflation
    # verdicts "other" (the model wrote neither rendering: not eligible); None under the public
    # code's exact rule (--preset anchor --no-loo), which has no such outcome
    n_other: int | None = None
    # why accept-ref is undefined (no eligible verdict); None when it is defined
    reason: str | None = None

    def to_dict(self) -> dict[str, object]:
        r, inf = self.accept_ref, self.inflation
        rate, low, high = r.estimate()  # None when no edit was judged (n = 0)
        return {
            "model": self.model,
            "in_panel": self.in_panel,
            "accept_ref": rate,
            "n_ref": r.k,
            "n_eligible": r.n,
            "ci_low": low,
            "ci_high": high,
            **({"reason": self.reason} if r.n == 0 else {}),
            **({} if self.n_other is None else {"n_other": self.n_other}),
            "n_clips": self.n_clips,
            "by_kind": {k: v.to_dict() for k, v in self.by_kind.items()},
            "by_position": {k: v.to_dict() for k, v in self.by_position.items()},
            "wer": inf.wer,
            "wer_ci_low": inf.wer_ci_low,
            "wer_ci_high": inf.wer_ci_high,
            "wer_corrected": inf.wer_corrected,
            "wer_inflation": inf.inflation,
            "wer_inflation_ci_low": inf.ci_low,
            "wer_inflation_ci_high": inf.ci_high,
            "wer_n_clips": inf.n_clips,
            "wer_n_words": inf.n_words,
            "wer_coverage": inf.coverage,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RefdisResult:
    """Edits, per-model scores and everything needed to reproduce them."""

    params: RefdisParams
    normalizer: Mapping[str, object]
    mode: str  # "panel" | "two-reference"
    source: str
    n_clips: int
    panel: tuple[str, ...]
    mining: Mining
    scores: tuple[ModelScore, ...]
    seed: int
    n_resamples: int
    references: Mapping[str, str]  # normalized reference of every clip with an edit (for display)
    merge_compounds: bool = False  # WER counted with kaldialign's merge_compounds (the leaderboard's)
    # what a verification step said of the edits (``None``: no verification), and each model's WER
    # inflation with only the edits it labels reference-wrong applied
    verification: Verification | None = None
    verified_inflation: Mapping[str, Inflation] = field(default_factory=dict)
    adequacy: PanelAdequacy | None = None  # the panel's own measure of itself (consensus mode)

    @property
    def edits(self) -> tuple[Edit, ...]:
        return self.mining.edits

    def score(self, model: str) -> ModelScore:
        return next(s for s in self.scores if s.model == model)

    def to_dict(self) -> dict[str, object]:
        models = [s.model for s in self.scores]
        out: dict[str, object] = {
            "probe": "refdis",
            "mode": self.mode,
            "source": self.source,
            "params": self.params.to_dict(),
            "normalizer": dict(self.normalizer),
            "wer_scoring": wer_scoring(self.merge_compounds),
            "seed": self.seed,
            "bootstrap_resamples": self.n_resamples,
            "n_clips": self.n_clips,
            "panel": list(self.panel),
            "n_edits": len(self.mining.edits),
            "edits": [e.to_dict() for e in self.mining.edits],
            "loo_edits": {m: [e.to_dict() for e in es] for m, es in self.mining.loo_edits.items()},
            "models": [
                {**s.to_dict(), **({} if self.adequacy is None else self.adequacy.model_fields(s.model))}
                for s in self.scores
            ],
            "references": dict(self.references),
        }
        if self.adequacy is not None:
            out["panel_adequacy"] = self.adequacy.to_dict(models)
        if self.verification is None:
            return out
        from asr_audit.probes.predfiles.verified import verified_inflation_fields, with_verification

        verified = with_verification(out, self.verification)
        verified["models"] = [
            {
                **m,
                "verified": {
                    **m["verified"],
                    **verified_inflation_fields(
                        None if m["verified"]["excluded"] else self.verified_inflation.get(m["model"])
                    ),
                },
            }
            for m in verified["models"]
        ]
        return verified


def wer_scoring(merge_compounds: bool) -> dict[str, object]:
    """How WER was counted, recorded in every refdis output.

    >>> wer_scoring(True)["merge_compounds"], wer_scoring(False)["merge_compounds"]
    (True, False)
    """
    return {
        "merge_compounds": merge_compounds,
        "label": "kaldialign edit distance, merge_compounds=True (the Open ASR Leaderboard's WER)"
        if merge_compounds
        else "word-level Levenshtein (kaldialign edit distance, no compound merging)",
    }
