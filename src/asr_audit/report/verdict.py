"""Plain-language verdicts that never say more than the intervals allow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


MIN_EDITS_FOR_A_CLAIM = 10  # below this, an interval is too wide for any claim about copying


def acceptref_sentence(m: Mapping[str, Any]) -> str:
    """One sentence on a model's accept-ref (a refdis ``models`` entry).

    >>> acceptref_sentence({"n_eligible": 340, "n_ref": 92, "accept_ref": 0.27, "ci_low": 0.22, "ci_high": 0.33})
    'reproduces reference errors on 27% of disagreements [22%, 33%], n=340: it often writes the reference where the audio says otherwise'
    >>> acceptref_sentence({"n_eligible": 2, "n_ref": 1, "accept_ref": 0.5, "ci_low": 0.09, "ci_high": 0.91})
    'reproduces reference errors on 50% of disagreements [9%, 91%], n=2: too few judged edits to tell'
    >>> acceptref_sentence({"n_eligible": 0, "n_ref": 0, "accept_ref": None, "ci_low": None, "ci_high": None,
    ...                     "reason": "no edit was mined for it (leave-one-out panel)"})
    'accept-ref undefined (—, n=0): no edit was mined for it (leave-one-out panel)'
    """
    n = int(m["n_eligible"])
    if n == 0:
        return f"accept-ref undefined (—, n=0): {m.get('reason') or 'no reference disagreement could be judged'}"
    base = (
        f"reproduces reference errors on {pct(m['accept_ref'])} of disagreements "
        f"[{pct(m['ci_low'])}, {pct(m['ci_high'])}], n={n}"
    )
    if n < MIN_EDITS_FOR_A_CLAIM:
        return base + ": too few judged edits to tell"
    if m["ci_high"] <= 0.10:
        return base + ": it transcribes the audio, not the reference"
    if m["ci_low"] >= 0.20:
        return base + ": it often writes the reference where the audio says otherwise"
    if m["ci_low"] >= 0.05:
        return base + ": some reference copying, more than a faithful transcriber shows"
    if n < 30:
        return base + ": too few judged edits to tell"
    return base + ": not distinguishable from a faithful transcriber at this sample size"


def inflation_sentence(m: Mapping[str, Any]) -> str:
    """One sentence on WER inflation (points) with its bootstrap interval.

    >>> inflation_sentence({"wer_inflation": 1.4, "wer_inflation_ci_low": 0.9, "wer_inflation_ci_high": 1.9})
    'WER would be 1.4 points higher [0.9, 1.9] against corrected references: the reference errors flatter its benchmark score'
    """
    x, lo, hi = m["wer_inflation"], m["wer_inflation_ci_low"], m["wer_inflation_ci_high"]
    if x is None or lo is None or hi is None:
        return "WER undefined (—): no reference word to score"
    if m.get("wer") == m.get("wer_corrected") and lo == hi == 0:
        return "WER inflation not measured (—): no edit corrected its references"
    if lo > 0:
        return (
            f"WER would be {x:.1f} points higher [{lo:.1f}, {hi:.1f}] against corrected references: "
            "the reference errors flatter its benchmark score"
        )
    if hi < 0:
        return (
            f"WER would be {-x:.1f} points lower [{-hi:.1f}, {-lo:.1f}] against corrected references: "
            "the reference errors cost it, as expected of a model that listens"
        )
    return f"no measurable WER inflation ({x:+.1f} points [{lo:+.1f}, {hi:+.1f}])"


def model_verdict(m: Mapping[str, Any]) -> str:
    """The report's verdict line for one refdis model entry."""
    return f"{acceptref_sentence(m)}; {inflation_sentence(m)}."
