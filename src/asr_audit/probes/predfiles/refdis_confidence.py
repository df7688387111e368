"""How sure the consensus panel is that the reference is wrong at one mined edit: a confidence in [0, 1].

The miner's false positives are mishearings the whole panel shares (on the calibration benchmark,
``docs/calibration.md``: "poorest" heard as "paris", "cut" as "cup"). A shared mishearing looks
like a reference error to the vote, but it leaves three traces a real reference error does not:

* **the panel disagrees on what was said** — every member missed the reference word, but each
  wrote something else ("paris", "parish", "pours"); a real error is corrected the same way by
  everyone (an unrecorded "thank you", a spurious "Madam President" that nobody says).
  *Agreement* = the share of the eligible panel whose rendering of the span equals the edit's
  rendering exactly;
* **the rendering is a near-miss of the reference** — a mishearing sounds like the reference word,
  so it is spelled like it; a wrong record usually is another word entirely. *Distance* = the
  consensus character error of the reference span against the panel's rendering (the miner's
  artefact filter drops edits below 0.30; near it, mishearings dominate);
* **it does not repeat** — where several clips carry the same reference (one sentence read by
  several voices, or a benchmark's duplicated prompts), a reference error is mined on all of them
  (the record is wrong in every reading), a mishearing on the reading it happened in. *Repeat* =
  the share of the clips sharing the reference on which the same correction was mined; absent
  (``None``) when the reference occurs once, as in most benchmarks.

:func:`edit_confidence` combines them (see its docstring); the miner keeps an edit when its
confidence is at least ``RefdisParams.min_confidence``. Pure functions of the evidence record.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Consensus character error from which a rendering counts as another word entirely (distance 1).
FAR_CER = 0.6
#: The calibrated operating point (``--min-confidence``), chosen on tuning seeds (docs/calibration.md).
DEFAULT_MIN_CONFIDENCE = 0.4


@dataclass(frozen=True, slots=True)
class EditEvidence:
    """What the panel's transcripts say about one edit (every share in [0, 1])."""

    votes: float  # share of the eligible panel that made the edit (n_panel_agree / n_panel)
    agreement: float  # share of the eligible panel that wrote the edit's rendering exactly
    consensus_cer: float | None  # median character error of the span vs the panel (None: an insertion)
    repeat: float | None = None  # share of clips with the same reference that carry the same correction

    def to_dict(self) -> dict[str, float | None]:
        return {
            "votes": round(self.votes, 3),
            "agreement": round(self.agreement, 3),
            "consensus_cer": self.consensus_cer,
            "repeat": None if self.repeat is None else round(self.repeat, 3),
        }


def distance_score(consensus_cer: float | None) -> float:
    """How far the panel's rendering is from the reference's, as a share: ``consensus_cer / FAR_CER``
    capped at 1; an insertion (no reference span, words the record lacks) is 1.

    >>> distance_score(0.3), distance_score(0.9), distance_score(None)
    (0.5, 1.0, 1.0)
    """
    if consensus_cer is None:
        return 1.0
    return min(1.0, max(0.0, consensus_cer) / FAR_CER)


def repeat_factor(repeat: float | None) -> float:
    """The weight of the repeat evidence: halfway between 1 and the repeat share (``(1 + repeat) / 2``),
    1 when the reference occurs once. Halfway, not the share itself: the panel misses a real error on
    some readings too (a garbled opener), so a single reading is doubt, not disproof.

    >>> repeat_factor(None), repeat_factor(1.0), repeat_factor(0.5)
    (1.0, 1.0, 0.75)
    """
    return 1.0 if repeat is None else (1.0 + repeat) / 2


def edit_confidence(evidence: EditEvidence) -> float:
    """The edit's confidence: ``votes * agreement * distance * repeat_factor``, rounded to 3 decimals
    (:func:`distance_score`, :func:`repeat_factor`).

    Each factor is a share in [0, 1] that is 1 for the typical reference error (the whole panel
    writes one correction that is another word, on every reading); each trace of a shared
    mishearing lowers the product. A product, not a mean: one failed trace is enough to doubt
    the edit.

    >>> edit_confidence(EditEvidence(votes=1.0, agreement=1.0, consensus_cer=1.0))
    1.0
    >>> edit_confidence(EditEvidence(votes=1.0, agreement=1 / 3, consensus_cer=0.4))
    0.222
    >>> edit_confidence(EditEvidence(votes=1.0, agreement=1.0, consensus_cer=None, repeat=0.5))
    0.75
    """
    conf = evidence.votes * evidence.agreement * distance_score(evidence.consensus_cer)
    conf *= repeat_factor(evidence.repeat)
    return round(min(1.0, max(0.0, conf)), 3)


__all__ = ["DEFAULT_MIN_CONFIDENCE", "FAR_CER", "EditEvidence", "distance_score", "edit_confidence", "repeat_factor"]
