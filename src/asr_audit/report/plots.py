"""Matplotlib figures for the report. Each function returns the image bytes (PNG or SVG).

Rendering is deterministic: the Agg backend, fixed sizes and fonts, no timestamps in metadata,
a fixed SVG hash salt — the same inputs give the same bytes.

Every label is data (model, corpus, condition names) and is drawn as plain text: mathtext is
off (``text.parse_math``), so ``$x$`` in a name prints as typed instead of crashing the report
or rendering as math.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from asr_audit.errors import require

CHANCE = 0.5


def _plt():  # noqa: ANN202
    mpl = require("matplotlib", "report")
    mpl.use("Agg", force=True)
    mpl.rcParams.update(
        {
            "svg.hashsalt": "asr-audit",
            "font.size": 9,
            "figure.dpi": 100,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "text.parse_math": False,
        }
    )  # labels are data: `$...$` in a name is text
    import matplotlib.pyplot as plt

    return plt


def _save(fig, fmt: str) -> bytes:  # noqa: ANN001
    plt = _plt()
    buf = io.BytesIO()
    meta = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    fig.savefig(buf, format=fmt, bbox_inches="tight", metadata=meta)
    plt.close(fig)
    return buf.getvalue()


def _err(rows: Sequence[Mapping[str, Any]], key: str = "rate") -> list[list[float]]:
    return [[max(0.0, r[key] - r["ci_low"]) for r in rows], [max(0.0, r["ci_high"] - r[key]) for r in rows]]


def wer_vs_acceptref(
    models: Sequence[Mapping[str, Any]],
    published: Sequence[Mapping[str, Any]],
    published_label: str,
    fmt: str = "png",
) -> bytes:
    """The paper's Figure 2 form: WER (x) vs accept-ref (y) for the user's models (left panel),
    beside the paper's published models' accept-ref with Wilson intervals (right panel, separate
    and labelled: the published aggregates carry no WER and come from another panel/corpus).

    ``models`` rows: name, wer (0-1), rate, ci_low, ci_high. ``published`` rows: name, rate,
    ci_low, ci_high, in_panel.
    """
    plt = _plt()
    fig, (ax, bx) = plt.subplots(
        1, 2, figsize=(11, max(3.8, 0.18 * len(published) + 1)), gridspec_kw={"width_ratios": [1.1, 1]}
    )
    if models:
        xs = [100 * m["wer"] for m in models]
        ax.errorbar(xs, [m["rate"] for m in models], yerr=_err(models), fmt="o", color="#c0392b", capsize=3)
        for x, m in zip(xs, models):
            ax.annotate(m["name"], (x, m["rate"]), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("WER on the given references (%)")
    ax.set_ylabel("accept-ref (share of reference errors reproduced)")
    ax.set_ylim(-0.02, max(0.5, *(m["ci_high"] + 0.05 for m in models)) if models else 0.5)
    ax.set_title("Your models (this audit)")
    names = [p["name"] for p in published][::-1]
    rows = list(published)[::-1]
    colors = ["#7f8c8d" if p.get("in_panel") else "#2c3e50" for p in rows]
    bx.errorbar([p["rate"] for p in rows], range(len(rows)), xerr=_err(rows), fmt="none", ecolor="#95a5a6", capsize=2)
    bx.scatter([p["rate"] for p in rows], range(len(rows)), c=colors, s=14, zorder=3)
    bx.set_yticks(range(len(rows)), names, fontsize=7)
    bx.set_xlabel("accept-ref (Wilson 95% CI)")
    bx.set_title(f"Published models — {published_label}\n(paper's data release; grey = panel member)", fontsize=9)
    fig.tight_layout()
    return _save(fig, fmt)


def rates_by_group(
    rows: Sequence[Mapping[str, Any]],
    group_key: str,
    title: str,
    ylabel: str,
    chance: float | None = None,
    fmt: str = "png",
    ylim: tuple[float, float] | None = (-0.02, 1.02),
    zero_line: bool = False,
) -> bytes:
    """Grouped dot plot with 95% intervals: one series per model, x = ``group_key`` values
    (conditions, families, ...). Rows: model, <group_key>, rate, ci_low, ci_high (rate may be None).
    ``ylim=None`` scales to the data (for quantities that are not shares, such as lift)."""
    plt = _plt()
    groups = list(dict.fromkeys(r[group_key] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(groups) + 2), 3.6))
    width = 0.8 / max(1, len(models))
    for i, m in enumerate(models):
        pts = [(groups.index(r[group_key]), r) for r in rows if r["model"] == m and r.get("rate") is not None]
        if not pts:
            continue
        xs = [g + (i - (len(models) - 1) / 2) * width for g, _ in pts]
        ax.errorbar(xs, [r["rate"] for _, r in pts], yerr=_err([r for _, r in pts]), fmt="o", capsize=3, label=m)
    if chance is not None:
        ax.axhline(chance, color="#888", linestyle="--", linewidth=1, label=f"chance {chance}")
    if zero_line:
        ax.axhline(0.0, color="#333", linewidth=0.8)
    ax.set_xticks(range(len(groups)), groups, rotation=20, ha="right")
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return _save(fig, fmt)


def inflation(rows: Sequence[Mapping[str, Any]], title: str, fmt: str = "png") -> bytes:
    """Horizontal WER-inflation bars (points) with bootstrap intervals; zero line."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 0.45 * len(rows) + 1.4))
    ys = list(range(len(rows)))
    vals = [r["wer_inflation"] for r in rows]
    err = [
        [max(0.0, v - r["wer_inflation_ci_low"]) for v, r in zip(vals, rows)],
        [max(0.0, r["wer_inflation_ci_high"] - v) for v, r in zip(vals, rows)],
    ]
    ax.barh(ys, vals, xerr=err, color=["#c0392b" if v > 0 else "#2980b9" for v in vals], capsize=3)
    ax.axvline(0, color="#333", linewidth=1)
    ax.set_yticks(ys, [r["model"] for r in rows])
    ax.set_xlabel("WER against corrected references minus WER (points)")
    ax.set_title(title)
    fig.tight_layout()
    return _save(fig, fmt)
