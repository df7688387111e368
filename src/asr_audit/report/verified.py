"""The verified-edits table ``asr-audit refdis --labels`` prints, from a verified refdis result dict.

Reads ``result["verification"]`` (:func:`asr_audit.probes.predfiles.verified_labels.with_labels`:
the miner's precision overall and per edit kind, annotator agreement) and each model's
``verified`` entry (:class:`~asr_audit.probes.predfiles.verified.VerifiedScore`): accept-ref on
verified reference errors (the copy rate c) and on edits where the reference was right (the
hears-better rate h), each with its interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from asr_audit.report.format import fmt_ci, fmt_rate


def _rate(r: Mapping[str, Any] | None) -> str:
    if not r or r.get("n", 0) == 0:
        return "— (n = 0)"
    return f"{fmt_rate(r['rate'])} {fmt_ci(r['ci_low'], r['ci_high'])} (n = {r['n']})"


def verification_lines(d: Mapping[str, Any]) -> list[str]:
    """What the verification says of the miner: its precision overall and per edit kind, and the
    annotators' agreement (Cohen's kappa with its interval)."""
    v = d.get("verification") or {}
    counts = v.get("counts", {})
    lines = [
        f"verified edits — {v.get('source', '?')} ({v.get('name', '?')}): {v.get('n_labelled', 0)} edits labelled "
        f"({', '.join(f'{k} {n}' for k, n in counts.items())})",
        f"miner precision (share of judged edits where the panel is right): {_rate(v.get('miner_precision'))}",
    ]
    for kind, r in (v.get("miner_precision_by_kind") or {}).items():
        lines.append(f"  {kind}: {_rate(r)}")
    for a in v.get("agreement") or []:
        who = " vs ".join(a["annotators"])
        if a.get("kappa") is None:
            lines.append(f"agreement {who}: Cohen's kappa undefined (n = {a['n']})")
        else:
            lines.append(
                f"agreement {who}: Cohen's kappa {a['kappa']:.2f} {fmt_ci(a['ci_low'], a['ci_high'])} "
                f"on {a['n']} edits both labelled"
            )
    lines.extend(str(n) for n in v.get("notes", []))
    return lines


def verified_table(d: Mapping[str, Any]) -> Table:
    """One row per model: verified accept-ref (c) and the hears-better rate (h) with 95% intervals."""
    t = Table(
        title="accept-ref on verified edits (c: reference wrong; h: reference right, the panel misheard)",
        title_justify="left",
    )
    for col in ("model", "verified accept-ref c", "95% CI", "n", "hears better h", "95% CI", "n"):
        t.add_column(col, justify="left" if col == "model" else "right")
    for m in d.get("models", []):
        v = m.get("verified") or {}
        if v.get("excluded"):
            t.add_row(m["model"], "excluded", "", "", "", "", "")
            continue
        t.add_row(
            m["model"],
            fmt_rate(v.get("accept_ref")),
            fmt_ci(v.get("ci_low"), v.get("ci_high")),
            str(v.get("n_eligible", 0)),
            fmt_rate(v.get("hears_better")),
            fmt_ci(v.get("hears_better_ci_low"), v.get("hears_better_ci_high")),
            str(v.get("hears_better_n", 0)),
        )
    return t
