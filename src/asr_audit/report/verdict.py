"""Plain-language verdicts that never say more than the intervals allow.

A sentence that accuses a model (copying, WER inflation) cites the false-positive rate of the
flag behind it, measured on simulated honest models (:func:`asr_audit.stats.flags.fpr_note`,
``docs/validity.md``), in the setting the model was scored in (tested model, or panel member
with or without leave-one-out).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.stats.flags import fpr_note, refdis_setting


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


MIN_EDITS_FOR_A_CLAIM = 10  # below this, an interval is too wide for any claim about copying


def acceptref_sentence(m: Mapping[str, Any], *, loo: bool = True) -> str:
    """One sentence on a model's accept-ref (a refdis ``models`` entry).

    ``loo`` (the run's leave-one-out setting) says which measured
    false-positive rate a claim cites (:func:`asr_audit.stats.flags.refdis_setting`).

    >>> acceptref_sentence({"n_eligible": 340, "n_ref": 92, "accept_ref": 0.27, "ci_low": 0.22, "ci_high": 0.33})  # doctest: +ELLIPSIS
    "reproduces reference errors on 27% of disagreements [22%, 33%], n=340: it often writes the reference where the audio says otherwise (flag's false-positive rate ...% [...%, ...%] in ... simulated datasets of honest models, docs/validity.md)"
    >>> acceptref_sentence({"n_eligible": 340, "n_ref": 92, "accept_ref": 0.27, "ci_low": 0.22, "ci_high": 0.33,
    ...                     "in_panel": True}, loo=False)
    'reproduces reference errors on 27% of disagreements [22%, 33%], n=340: it often writes the reference where the audio says otherwise (not calibrated: a panel member scored without leave-one-out is judged on edits it mined, docs/validity.md)'
    >>> acceptref_sentence({"n_eligible": 340, "n_ref": 10, "accept_ref": 0.03, "ci_low": 0.02, "ci_high": 0.05})
    'reproduces reference errors on 3% of disagreements [2%, 5%], n=340: it transcribes the audio, not the reference'
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
    note = fpr_note("refdis.copies_reference", refdis_setting(m, loo=loo))
    if m["ci_low"] >= 0.20:
        return base + f": it often writes the reference where the audio says otherwise {note}"
    if m["ci_low"] >= 0.05:
        return base + f": some reference copying, more than a faithful transcriber shows {note}"
    if n < 30:
        return base + ": too few judged edits to tell"
    return base + ": not distinguishable from a faithful transcriber at this sample size"


def inflation_sentence(m: Mapping[str, Any], *, loo: bool = True) -> str:
    """One sentence on WER inflation (points) with its bootstrap interval.

    >>> inflation_sentence({"wer_inflation": 1.4, "wer_inflation_ci_low": 0.9, "wer_inflation_ci_high": 1.9})  # doctest: +ELLIPSIS
    "WER would be 1.4 points higher [0.9, 1.9] against corrected references: the reference errors flatter its benchmark score (flag's false-positive rate ...% [...%, ...%] in ... simulated datasets of honest models, docs/validity.md)"
    >>> inflation_sentence({"wer_inflation": -1.4, "wer_inflation_ci_low": -1.9, "wer_inflation_ci_high": -0.9})
    'WER would be 1.4 points lower [0.9, 1.9] against corrected references: the reference errors cost it, as expected of a model that listens'
    """
    x, lo, hi = m["wer_inflation"], m["wer_inflation_ci_low"], m["wer_inflation_ci_high"]
    if x is None or lo is None or hi is None:
        return "WER undefined (—): no reference word to score"
    if m.get("wer") == m.get("wer_corrected") and lo == hi == 0:
        return "WER inflation not measured (—): no edit corrected its references"
    if lo > 0:
        return (
            f"WER would be {x:.1f} points higher [{lo:.1f}, {hi:.1f}] against corrected references: "
            "the reference errors flatter its benchmark score "
            + fpr_note("refdis.wer_inflated", refdis_setting(m, loo=loo))
        )
    if hi < 0:
        return (
            f"WER would be {-x:.1f} points lower [{-hi:.1f}, {-lo:.1f}] against corrected references: "
            "the reference errors cost it, as expected of a model that listens"
        )
    return f"no measurable WER inflation ({x:+.1f} points [{lo:+.1f}, {hi:+.1f}])"


def model_verdict(m: Mapping[str, Any], *, loo: bool = True) -> str:
    """The report's verdict line for one refdis model entry (``loo``: the run's)."""
    return f"{acceptref_sentence(m, loo=loo)}; {inflation_sentence(m, loo=loo)}."
