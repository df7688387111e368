"""Plain-language verdicts that never say more than the intervals allow.

A sentence that accuses a model (copying, WER inflation) is made only from *verified* edits
(``models[i]["verified"]``: planted truth, human labels, audio verification; the flags of
:mod:`asr_audit.stats.flags`) and cites the false-positive rate of the flag behind it, measured on
simulated honest models (:func:`asr_audit.stats.flags.fpr_note`, ``docs/validity.md``), in the
setting the model was scored in (tested model, or panel member with or without leave-one-out).

Consensus accept-ref alone is ``pi * c + (1 - pi) * h`` (``docs/refdis.md``): a model that hears
better than the panel writes the reference where the panel misheard. So a consensus rate that
would once have been a claim reads "not enough evidence", with the panel's adequacy (its WER
outside the edits against the model's, its replacement agreement) and what would settle it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.stats.flags import (
    consensus_copying,
    consensus_inflated,
    copies_reference,
    fpr_note,
    refdis_setting,
    wer_inflated,
)


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


MIN_EDITS_FOR_A_CLAIM = 10  # below this, an interval is too wide for any claim about copying

#: What settles an unverified consensus measurement, in the report's words.
SETTLE = (
    "verify a sample of its edits (`asr-audit annotate`), pass a calibration set with planted truth "
    "(`--truth`), or add stronger panel models"
)


def panel_clause(m: Mapping[str, Any]) -> str:
    """Why a consensus rate is not evidence, from the entry's panel adequacy fields (``wer_outside``,
    ``panel_wer_outside``, ``hears_better_than_panel``, ``edit_agreement``; empty without them).

    >>> panel_clause({"wer_outside": 0.16, "panel_wer_outside": [0.28, 0.38, 0.31], "hears_better_than_panel": True,
    ...               "edit_agreement": 0.24})
    'this model is more accurate than the panel (panel 28–38% WER outside the edits, this model 16%), so most edits may be panel mishearings; on 76% of its edits no two panel members agree on the replacement'
    """
    parts = []
    own, panel = m.get("wer_outside"), [w for w in m.get("panel_wer_outside") or () if w is not None]
    if own is not None and panel:
        numbers = f"panel {100 * min(panel):.0f}–{pct(max(panel))} WER outside the edits, this model {pct(own)}"
        if m.get("hears_better_than_panel"):
            parts.append(
                f"this model is more accurate than the panel ({numbers}), so most edits may be panel mishearings"
            )
        else:
            parts.append(
                f"the same rate comes from copying reference errors or from hearing better than the panel where "
                f"it misheard ({numbers})"
            )
    else:
        parts.append(
            "the same rate comes from copying reference errors or from hearing better than the panel where it misheard"
        )
    agree = m.get("edit_agreement")
    if agree is not None and agree < 0.5:
        parts.append(f"on {pct(1 - agree)} of its edits no two panel members agree on the replacement")
    return "; ".join(parts)


def acceptref_sentence(m: Mapping[str, Any], *, loo: bool = True) -> str:
    """One sentence on a model's consensus accept-ref (a refdis ``models`` entry): never an
    accusation (``loo`` is kept for the callers; the claims are :func:`verified_sentence`'s).

    >>> acceptref_sentence({"n_eligible": 340, "n_ref": 258, "accept_ref": 0.76, "ci_low": 0.71, "ci_high": 0.80,
    ...                     "wer_outside": 0.16, "panel_wer_outside": [0.28, 0.38], "hears_better_than_panel": True})
    'writes the reference on 76% of unverified consensus edits [71%, 80%], n=340: not enough evidence of copying — this model is more accurate than the panel (panel 28–38% WER outside the edits, this model 16%), so most edits may be panel mishearings; to settle it, verify a sample of its edits (`asr-audit annotate`), pass a calibration set with planted truth (`--truth`), or add stronger panel models'
    >>> acceptref_sentence({"n_eligible": 340, "n_ref": 10, "accept_ref": 0.03, "ci_low": 0.02, "ci_high": 0.05})
    'writes the reference on 3% of consensus disagreements [2%, 5%], n=340: it transcribes the audio, not the reference'
    >>> acceptref_sentence({"n_eligible": 2, "n_ref": 1, "accept_ref": 0.5, "ci_low": 0.09, "ci_high": 0.91})
    'writes the reference on 50% of consensus disagreements [9%, 91%], n=2: too few judged edits to tell'
    >>> acceptref_sentence({"n_eligible": 0, "n_ref": 0, "accept_ref": None, "ci_low": None, "ci_high": None,
    ...                     "reason": "no edit was mined for it (leave-one-out panel)"})
    'accept-ref undefined (—, n=0): no edit was mined for it (leave-one-out panel)'
    """
    n = int(m["n_eligible"])
    if n == 0:
        return f"accept-ref undefined (—, n=0): {m.get('reason') or 'no reference disagreement could be judged'}"
    interval = f"[{pct(m['ci_low'])}, {pct(m['ci_high'])}], n={n}"
    v = m.get("verified") or {}
    if consensus_copying(m) and not v.get("excluded") and int(v.get("n_eligible", 0)) >= MIN_EDITS_FOR_A_CLAIM:
        return (
            f"writes the reference on {pct(m['accept_ref'])} of consensus disagreements {interval}, "
            "edits whose verified part decides"
        )
    if consensus_copying(m):
        return (
            f"writes the reference on {pct(m['accept_ref'])} of unverified consensus edits {interval}: not enough "
            f"evidence of copying — {panel_clause(m)}; to settle it, {SETTLE}"
        )
    base = f"writes the reference on {pct(m['accept_ref'])} of consensus disagreements {interval}"
    if n < MIN_EDITS_FOR_A_CLAIM:
        return base + ": too few judged edits to tell"
    if m["ci_high"] <= 0.10:
        return base + ": it transcribes the audio, not the reference"
    if n < 30:
        return base + ": too few judged edits to tell"
    return base + ": not distinguishable from a faithful transcriber at this sample size"


def verified_sentence(m: Mapping[str, Any], *, loo: bool = True) -> str | None:
    """One sentence on accept-ref over *verified* reference errors (``m["verified"]``; ``None``
    without a verification): the only sentence that may say "copies".

    >>> v = {"source": "planted truth", "excluded": False, "n_edits": 60, "n_labelled": 60, "n_eligible": 40,
    ...      "n_ref": 2, "accept_ref": 0.05, "ci_low": 0.014, "ci_high": 0.17, "copy_low": 0.014,
    ...      "hears_better": 0.9, "hears_better_n": 20}
    >>> verified_sentence({"verified": v})
    'on 40 verified reference errors (planted truth) it writes the reference 2 times (5% [1%, 17%]): not distinguishable from a faithful transcriber at this sample size; where the panel misheard it wrote what was said 90% of the time (n=20)'
    """
    v = m.get("verified")
    if not v:
        return None
    source = v.get("source", "verification")
    if v.get("excluded"):
        return f"not verified: the {source} may not verify its own model's edits"
    n = int(v.get("n_eligible", 0))
    if n == 0:
        return f"no verified reference error was judged ({source}: {v.get('n_labelled', 0)} of its {v.get('n_edits', 0)} edits labelled)"
    base = (
        f"on {n} verified reference errors ({source}) it writes the reference {v['n_ref']} times "
        f"({pct(v['accept_ref'])} [{pct(v['ci_low'])}, {pct(v['ci_high'])}])"
    )
    if copies_reference(m):
        text = base + ": it copies reference errors " + fpr_note("refdis.copies_reference", refdis_setting(m, loo=loo))
    elif n < MIN_EDITS_FOR_A_CLAIM:
        text = base + ": too few verified edits to tell"
    elif v["ci_high"] <= 0.10:
        text = base + ": on true reference errors it transcribes the audio"
    else:
        text = base + ": not distinguishable from a faithful transcriber at this sample size"
    if v.get("hears_better") is not None and int(v.get("hears_better_n", 0)):
        text += f"; where the panel misheard it wrote what was said {pct(v['hears_better'])} of the time (n={v['hears_better_n']})"
    return text


def inflation_sentence(m: Mapping[str, Any], *, loo: bool = True) -> str:
    """One sentence on WER inflation (points) with its bootstrap interval: against consensus-corrected
    references never a claim; against references corrected where a verification says they are
    wrong (``m["verified"]``), the claim :func:`~asr_audit.stats.flags.wer_inflated` decides.

    >>> inflation_sentence({"wer_inflation": 1.4, "wer_inflation_ci_low": 0.9, "wer_inflation_ci_high": 1.9})
    'WER would be 1.4 points higher [0.9, 1.9] against consensus-corrected references: not enough evidence that reference errors flatter it (the corrections are unverified)'
    >>> inflation_sentence({"wer_inflation": -1.4, "wer_inflation_ci_low": -1.9, "wer_inflation_ci_high": -0.9})
    'WER would be 1.4 points lower [0.9, 1.9] against consensus-corrected references: the reference errors cost it, as expected of a model that listens'
    >>> inflation_sentence({"wer_inflation": 1.4, "wer_inflation_ci_low": 0.9, "wer_inflation_ci_high": 1.9,  # doctest: +ELLIPSIS
    ...                     "verified": {"wer_inflation": 2.0, "wer_inflation_ci_low": 1.2, "wer_inflation_ci_high": 2.8,
    ...                                  "wer_n_clips": 50}})
    "WER would be 2.0 points higher [1.2, 2.8] against references corrected where verified wrong: the reference errors flatter its benchmark score (flag's false-positive rate ..."
    """
    v = m.get("verified")
    if v and not v.get("excluded") and v.get("wer_inflation") is not None:
        return _inflation_text(v, "references corrected where verified wrong", m, loo, verified=True)
    x, lo, hi = m["wer_inflation"], m["wer_inflation_ci_low"], m["wer_inflation_ci_high"]
    if x is None or lo is None or hi is None:
        return "WER undefined (—): no reference word to score"
    if m.get("wer") == m.get("wer_corrected") and lo == hi == 0:
        return "WER inflation not measured (—): no edit corrected its references"
    return _inflation_text(m, "consensus-corrected references", m, loo, verified=False)


def _inflation_text(d: Mapping[str, Any], against: str, m: Mapping[str, Any], loo: bool, *, verified: bool) -> str:
    x, lo, hi = d["wer_inflation"], d["wer_inflation_ci_low"], d["wer_inflation_ci_high"]
    if lo is None or hi is None:
        return f"WER inflation undefined against {against}"
    if lo > 0:
        head = f"WER would be {x:.1f} points higher [{lo:.1f}, {hi:.1f}] against {against}: "
        if verified and wer_inflated(m):
            return (
                head
                + "the reference errors flatter its benchmark score "
                + fpr_note("refdis.wer_inflated", refdis_setting(m, loo=loo))
            )
        return head + "not enough evidence that reference errors flatter it (the corrections are unverified)"
    if hi < 0:
        return (
            f"WER would be {-x:.1f} points lower [{-hi:.1f}, {-lo:.1f}] against {against}: "
            "the reference errors cost it, as expected of a model that listens"
        )
    return f"no measurable WER inflation against {against} ({x:+.1f} points [{lo:+.1f}, {hi:+.1f}])"


def model_verdict(m: Mapping[str, Any], *, loo: bool = True) -> str:
    """The report's verdict line for one refdis model entry (``loo``: the run's)."""
    parts = [acceptref_sentence(m, loo=loo), verified_sentence(m, loo=loo), inflation_sentence(m, loo=loo)]
    return "; ".join(p for p in parts if p) + "."


__all__ = [
    "SETTLE",
    "acceptref_sentence",
    "consensus_inflated",
    "inflation_sentence",
    "model_verdict",
    "panel_clause",
    "verified_sentence",
]
