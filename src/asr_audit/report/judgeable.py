"""Which report sections have nothing to judge, and why: such a section collapses to one line.

A corpus too small for a probe (five clips mine one edit; no convention arm reaches its minimum)
still produces a result, with every estimate undefined or too uncertain to support any claim.
The report shows such a section as one line saying why, instead of a page of dashes; its numbers
stay in ``results.json`` and its CSV tables are still written.

:func:`why_unjudgeable` reads one probe result entry (the shapes the probes' ``to_dict`` write);
a probe with no rule here never collapses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from asr_audit.stats.flags import MIN_EDITS_FOR_A_CLAIM

Result = Mapping[str, Any]


def _refdis(r: Result) -> str | None:
    models = r.get("models", [])
    if any(int(m.get("n_eligible", 0)) >= MIN_EDITS_FOR_A_CLAIM for m in models):
        return None
    n_edits = int(r.get("n_edits", 0))
    return (
        f"{n_edits} reference error{'s' if n_edits != 1 else ''} mined on {r.get('n_clips', 0)} clips; "
        f"no model has the {MIN_EDITS_FOR_A_CLAIM} judged edits a verdict needs"
    )


def _switch_rate(r: Result) -> str | None:
    rows = [*r.get("rows", []), *r.get("pooled", [])]
    if any(row.get("switch") is not None for row in rows):
        return None
    minimum = r.get("params", {}).get("min_per_arm")
    return (
        f"no convention family reaches {minimum} eligible items per arm on {r.get('n_clips', 0)} clips"
        if minimum is not None
        else f"no convention family has a defined switch rate on {r.get('n_clips', 0)} clips"
    )


def _battery(r: Result) -> str | None:
    if any(int(c.get("n", 0)) > 0 for c in r.get("cells", [])):
        return None
    return "no item could be judged under any condition"


def _masked(r: Result) -> str | None:
    if any(int(m.get("n", 0)) > 0 for m in r.get("models", [])):
        return None
    return "no masked item passed the intelligibility gate for any model"


def _miner_calibration(r: Result) -> str | None:
    if int(r.get("recall", {}).get("n", 0)) > 0 or int(r.get("precision", {}).get("n", 0)) > 0:
        return None
    return "no planted error and no mined edit on these clips"


RULES: dict[str, Callable[[Result], str | None]] = {
    "refdis": _refdis,
    "switch_rate": _switch_rate,
    "battery": _battery,
    "masked": _masked,
    "miner_calibration": _miner_calibration,
}


def why_unjudgeable(entry: Mapping[str, Any]) -> str | None:
    """Why the section of probe result ``entry`` has no judgeable item (``None``: it has some).

    >>> why_unjudgeable({"probe": "refdis", "result": {"n_edits": 1, "n_clips": 5, "models": [{"n_eligible": 1}]}})
    '1 reference error mined on 5 clips; no model has the 10 judged edits a verdict needs'
    >>> why_unjudgeable({"probe": "refdis", "result": {"models": [{"n_eligible": 31}]}}) is None
    True
    >>> why_unjudgeable({"probe": "lift", "result": {}}) is None
    True
    """
    rule = RULES.get(str(entry.get("probe")))
    result = entry.get("result")
    if rule is None or not isinstance(result, Mapping):
        return None
    try:
        return rule(result)
    except (TypeError, ValueError, AttributeError):  # an unexpected shape: show the section as it is
        return None
