"""The report's first screen: one row per model x corpus with the headline verdict.

:func:`summary_rows` reads the results dictionary only (as every renderer does) and judges each
model on each corpus with the flags of :mod:`asr_audit.stats.flags`, the same rules the sections'
verdicts and the null-calibration benchmark use:

* **flagged** — a flag fired: copying on *verified* reference errors (``refdis.copies_reference``:
  the lower bound of the copy rate c >= 5% on >= 10 verified edits), WER inflation against
  references corrected where verified wrong (``refdis.wer_inflated``), or a battery condition
  (``battery.row``: Holm over every condition's paired difference against the original audio, over
  >= 30 sentences each, family-wise 5%: :func:`~asr_audit.stats.flags.battery_row_flagged`);
* **not enough evidence** — consensus accept-ref would once have been a claim (>= 10 edits, Wilson
  lower bound >= 5%) or the consensus WER inflation interval lies above 0, but no verified edits
  say whether the reference or the panel is wrong there: a model that hears better than the panel
  shows the same numbers (``docs/refdis.md``). The row says so, with the panel's adequacy, and
  what would settle it (:data:`~asr_audit.report.verdict.SETTLE`);
* **not flagged** — at least one of those tests had enough data to fire and none did;
* **not enough data** — no test had enough data (fewer than 10 judged edits and no battery
  difference over >= 30 sentences): silence, not innocence.

Each row carries the false-positive rate of the flag behind it, measured on simulated honest
models (``docs/validity.md``) in the setting the model was scored in; a row that is not flagged
carries the rate of the reference-disagreement test it passed.

It also holds the run summary's readable forms: :func:`norm_label`, :func:`display_path`,
:func:`short_hash`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asr_audit.report.verdict import SETTLE, panel_clause
from asr_audit.stats.flags import (
    MIN_CLUSTERS_FOR_A_CLAIM,
    MIN_EDITS_FOR_A_CLAIM,
    PANEL_MEMBER_NO_LOO,
    consensus_copying,
    consensus_inflated,
    copies_reference,
    holm_rejected,
    measured_fpr,
    refdis_setting,
    wer_inflated,
)

FLAGGED, NOT_FLAGGED, NOT_ENOUGH = "flagged", "not flagged", "not enough data"
NOT_ENOUGH_EVIDENCE = "not enough evidence"
VERDICTS = (FLAGGED, NOT_ENOUGH_EVIDENCE, NOT_FLAGGED, NOT_ENOUGH)
# the mark printed before each verdict, so the verdict reads without colour too
MARKS = {FLAGGED: "▲", NOT_ENOUGH_EVIDENCE: "…", NOT_FLAGGED: "✓", NOT_ENOUGH: "?"}
BATTERY_ROW_SETTING = "battery row: 6 conditions vs the original audio, Holm"  # its null-calibration setting


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRow:
    """One model on one corpus: its headline verdict and the numbers behind it (``None``: not measured)."""

    model: str
    corpus: str
    verdict: str
    reasons: tuple[str, ...]  # what raised the flag(s); empty unless flagged
    section: str  # the text whose report slug is the anchor of the row's section
    in_panel: bool = False
    accept_ref: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n_ref: int = 0
    n_eligible: int = 0
    wer: float | None = None  # 0-1
    wer_ci_low: float | None = None
    wer_ci_high: float | None = None
    wer_inflation: float | None = None  # points
    inflation_ci_low: float | None = None
    inflation_ci_high: float | None = None
    fpr: str = "—"  # the measured false-positive rate of the flag used, as text
    # the verified record (``models[i]["verified"]``) behind a refdis claim, when a source verified edits
    verified_source: str | None = None
    verified_accept_ref: float | None = None
    verified_ci_low: float | None = None
    verified_ci_high: float | None = None
    verified_n_ref: int = 0
    verified_n_eligible: int = 0
    # panel adequacy: the model's and its panel's median WER outside the mined edits (0-1)
    wer_outside: float | None = None
    panel_wer_outside: float | None = None
    # a "not enough evidence" row: the unverified measurement and what would settle it
    needs: str = ""

    @property
    def mark(self) -> str:
        return MARKS[self.verdict]

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


FLAG_LABELS = {
    "refdis.copies_reference": "copying",
    "refdis.wer_inflated": "WER inflation",
    "battery.difference": "audio",
    "battery.row": "audio",
}


def _fpr_text(flag: str, setting: str) -> str:
    """``"copying: 2.4% [1.4, 4.1]"`` for a measured flag, else why not (labelled by the flag)."""
    label = FLAG_LABELS.get(flag, flag)
    if setting == PANEL_MEMBER_NO_LOO:
        return f"{label}: not calibrated (panel member, no leave-one-out)"
    m = measured_fpr(flag, setting)
    if m is None:
        return f"{label}: not measured"
    return f"{label}: {100 * m.rate:.1f}% [{100 * m.low:.1f}, {100 * m.high:.1f}]"


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


def summary_rows(results: Mapping[str, Any]) -> list[SummaryRow]:
    """The verdict of every model on every corpus with a refdis or battery result, corpora in run
    order and models in the probe's order (see the module docstring for the rule)."""
    by_corpus: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
    for entry in results.get("probes", []):
        if entry.get("probe") in ("refdis", "battery"):
            by_corpus.setdefault(entry.get("corpus", ""), {}).setdefault(entry["probe"], []).append(entry["result"])
    rows: list[SummaryRow] = []
    for corpus, probes in by_corpus.items():
        refdis = {m["model"]: (r, m) for r in probes.get("refdis", []) for m in r["models"]}
        diffs: dict[str, list[Mapping[str, Any]]] = {}
        for b in probes.get("battery", []):
            for d in b.get("differences", []):
                diffs.setdefault(d["model"], []).append(d)
        models = list(dict.fromkeys([*refdis, *diffs]))
        for model in models:
            rows.append(_row(model, corpus, refdis.get(model), diffs.get(model, [])))
    return rows


def _row(
    model: str,
    corpus: str,
    refdis: tuple[Mapping[str, Any], Mapping[str, Any]] | None,
    diffs: Sequence[Mapping[str, Any]],
) -> SummaryRow:
    reasons: list[str] = []
    fprs: list[str] = []
    judged = False
    fields: dict[str, Any] = {}
    setting = None
    gap = ""
    if refdis is not None:
        r, m = refdis
        params = r.get("params", {})
        setting = refdis_setting(m, loo=bool(params.get("loo", True)))
        n = int(m.get("n_eligible", 0))
        v = m.get("verified") or {}
        verified_n = 0 if v.get("excluded") else int(v.get("n_eligible", 0))
        judged = n >= MIN_EDITS_FOR_A_CLAIM or verified_n >= MIN_EDITS_FOR_A_CLAIM
        if copies_reference(m):
            reasons.append(f"copies verified reference errors {int(v['n_ref'])}/{int(v['n_eligible'])}")
            fprs.append(_fpr_text("refdis.copies_reference", setting))
        if wer_inflated(m):
            reasons.append("WER inflated by verified reference errors")
            fprs.append(_fpr_text("refdis.wer_inflated", setting))
        gap = evidence_gap(m)
        fields = {
            "in_panel": bool(m.get("in_panel", False)),
            "accept_ref": _num(m.get("accept_ref")),
            "ci_low": _num(m.get("ci_low")) if m.get("accept_ref") is not None else None,
            "ci_high": _num(m.get("ci_high")) if m.get("accept_ref") is not None else None,
            "n_ref": int(m.get("n_ref", 0)),
            "n_eligible": n,
            "wer": _num(m.get("wer")),
            "wer_ci_low": _num(m.get("wer_ci_low")),
            "wer_ci_high": _num(m.get("wer_ci_high")),
            "wer_inflation": _num(m.get("wer_inflation")),
            "inflation_ci_low": _num(m.get("wer_inflation_ci_low")),
            "inflation_ci_high": _num(m.get("wer_inflation_ci_high")),
            "wer_outside": _num(m.get("wer_outside")),
            "panel_wer_outside": _num(m.get("panel_wer_outside_median")),
            **_verified_fields(v),
        }
    for d in diffs:
        if d.get("n_clusters") is not None and int(d["n_clusters"]) >= MIN_CLUSTERS_FOR_A_CLAIM:
            judged = True
    rejected = holm_rejected(diffs)  # family-wise over every condition feeding the row (battery_row_flagged)
    for i in rejected:
        d = diffs[i]
        reasons.append(
            f"{d['condition']} Δ {float(d['estimate']):+.2f} [{float(d['ci_low']):+.2f}, {float(d['ci_high']):+.2f}]"
        )
    if rejected:
        fprs.append(_fpr_text("battery.row", BATTERY_ROW_SETTING))
    if reasons:
        verdict = FLAGGED
    elif gap:
        verdict = NOT_ENOUGH_EVIDENCE
        fields["needs"] = gap
    elif judged:
        verdict = NOT_FLAGGED
        if setting is not None:
            fprs.append(_fpr_text("refdis.copies_reference", setting))
        elif diffs:
            fprs.append(_fpr_text("battery.row", BATTERY_ROW_SETTING))
    else:
        verdict = NOT_ENOUGH
    section = f"refdis-{corpus}" if refdis is not None else f"battery-{corpus}"
    return SummaryRow(
        model=model,
        corpus=corpus,
        verdict=verdict,
        reasons=tuple(reasons),
        section=section,
        fpr="; ".join(dict.fromkeys(fprs)) or "—",
        **fields,
    )


def _verified_fields(v: Mapping[str, Any]) -> dict[str, Any]:
    """The row's verified fields from a ``models[i]["verified"]`` record (empty: none)."""
    if not v or v.get("excluded"):
        return {}
    defined = v.get("accept_ref") is not None
    return {
        "verified_source": str(v.get("source", "")),
        "verified_accept_ref": _num(v.get("accept_ref")),
        "verified_ci_low": _num(v.get("ci_low")) if defined else None,
        "verified_ci_high": _num(v.get("ci_high")) if defined else None,
        "verified_n_ref": int(v.get("n_ref", 0)),
        "verified_n_eligible": int(v.get("n_eligible", 0)),
    }


def evidence_gap(m: Mapping[str, Any]) -> str:
    """Why a refdis ``models`` entry is "not enough evidence" (empty when it is not): its consensus
    accept-ref would once have been a claim, or its consensus WER inflation lies above 0, and no
    verified edits decide it (fewer than ``MIN_EDITS_FOR_A_CLAIM`` verified edits for the first,
    no verified inflation for the second). The text gives the unverified measurement, the panel's
    adequacy and what would settle it.

    >>> evidence_gap({"n_eligible": 340, "n_ref": 258, "accept_ref": 0.76, "ci_low": 0.71, "ci_high": 0.80,
    ...               "wer_outside": 0.16, "panel_wer_outside": [0.28, 0.38], "hears_better_than_panel": True})
    '0.76 on unverified consensus edits; this model is more accurate than the panel (panel 28–38% WER outside the edits, this model 16%), so most edits may be panel mishearings: verify a sample of its edits (`asr-audit annotate`), pass a calibration set with planted truth (`--truth`), or add stronger panel models'
    """
    v = m.get("verified") or {}
    usable = bool(v) and not v.get("excluded")
    copy_open = consensus_copying(m) and not (usable and int(v.get("n_eligible", 0)) >= MIN_EDITS_FOR_A_CLAIM)
    inflation_open = consensus_inflated(m) and not (usable and v.get("wer_inflation_ci_low") is not None)
    if not (copy_open or inflation_open):
        return ""
    what = []
    if copy_open:
        what.append(f"{float(m['accept_ref']):.2f} on unverified consensus edits")
    if inflation_open:
        what.append(f"WER inflation {float(m['wer_inflation']):+.1f} points against unverified consensus corrections")
    return f"{'; '.join(what)}; {panel_clause(m)}: {SETTLE}"


def summary_table(rows: Sequence[SummaryRow]) -> Any:
    """The summary as a rich table for the terminal (verdict in words and colour)."""
    from rich.table import Table
    from rich.text import Text

    from asr_audit.report.format import fmt_ci, fmt_num

    styles = {FLAGGED: "bold red", NOT_ENOUGH_EVIDENCE: "yellow", NOT_FLAGGED: "green", NOT_ENOUGH: "dim"}
    table = Table(title="verdicts (details in the report)", title_justify="left")
    for col in ("model", "corpus", "verdict", "accept-ref [95% CI]", "WER %", "inflation pts [95% CI]", "why"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(
            r.model,
            r.corpus,
            Text(f"{r.mark} {r.verdict}", styles[r.verdict]),
            f"{fmt_num(r.accept_ref, 2)} {fmt_ci(r.ci_low, r.ci_high, 2)}" if r.accept_ref is not None else "—",
            fmt_num(r.wer, 1, scale=100),
            f"{fmt_num(r.wer_inflation, 1, signed=True)} {fmt_ci(r.inflation_ci_low, r.inflation_ci_high, 1, signed=True)}"
            if r.wer_inflation is not None
            else "—",
            "; ".join(r.reasons) or r.needs,
        )
    return table


# --------------------------------------------------------------------------- run summary


def norm_label(norm: Any) -> str:
    """A normalizer description (``Normalizer.describe()``) by its ``label``, the name every
    output uses (a run's header, ``--version``, the report); without one, ``name (package version)``.

    >>> norm_label({"name": "whisper", "label": "whisper (OpenAI Whisper EnglishTextNormalizer, openai-whisper 20250625)"})
    'whisper (OpenAI Whisper EnglishTextNormalizer, openai-whisper 20250625)'
    >>> norm_label({"name": "whisper", "package": "whisper-normalizer", "package_version": "0.1.15"})
    'whisper (whisper-normalizer 0.1.15)'
    >>> norm_label("basic")
    'basic'
    """
    if not isinstance(norm, Mapping):
        return str(norm)
    if norm.get("label"):
        return str(norm["label"])
    pkg = " ".join(str(norm[k]) for k in ("package", "package_version") if norm.get(k))
    name = str(norm.get("name", "?"))
    return f"{name} ({pkg})" if pkg else name


def display_path(text: str, out_dir: Path) -> str:
    """A path (or ``prefix:path`` spec) as the run summary shows it: relative to the output folder
    when inside it, ``<asr_audit data>/...`` for the package's shipped data, else relative to the
    output folder when that is no more than two levels up, else as given.

    >>> display_path("/runs/a/store.sqlite", Path("/runs/a"))
    'store.sqlite'
    >>> display_path("preds:/runs/a/preds/m.jsonl", Path("/runs/a"))
    'preds:preds/m.jsonl'
    >>> display_path("whisper-tiny.en", Path("/runs/a"))
    'whisper-tiny.en'
    """
    from asr_audit.data import DATA_DIR

    prefix, sep, rest = text.partition(":")
    if sep and not os.path.isabs(text) and os.path.isabs(rest):
        return f"{prefix}:{display_path(rest, out_dir)}"
    if not os.path.isabs(text):
        return text
    path = Path(text)
    for root, label in ((out_dir.resolve(), ""), (DATA_DIR.resolve(), "<asr_audit data>/")):
        try:
            rel = path.resolve().relative_to(root)
        except ValueError:
            continue
        return f"{label}{rel.as_posix()}" if label or str(rel) != "." else "."
    rel_text = os.path.relpath(path, out_dir.resolve())
    return rel_text if rel_text.count("..") <= 2 else text


def short_hash(value: Any, n: int = 8) -> str:
    """The first ``n`` characters of an identity hash (the full one stays in results.json).

    >>> short_hash("0123456789abcdef")
    '01234567'
    """
    return "" if value is None else str(value)[:n]
