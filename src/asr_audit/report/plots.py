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
# matplotlib's tab10, in order: one colour per model of a report (model_colours), the same in
# every plot
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def model_colours(names: Sequence[str]) -> dict[str, str]:
    """One colour per model name, in the given order (the palette repeats past ten models).

    >>> model_colours(["b", "a", "b"])
    {'b': '#1f77b4', 'a': '#ff7f0e'}
    """
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(dict.fromkeys(names))}


def _colours_for(names: Sequence[str], colours: Mapping[str, str] | None) -> dict[str, str]:
    """``colours`` for the names it has; names it lacks get the palette's unused colours in order."""
    given = dict(colours or {})
    spare = [c for c in PALETTE if c not in given.values()] or list(PALETTE)
    missing = [n for n in dict.fromkeys(names) if n not in given]
    return {**given, **{n: spare[i % len(spare)] for i, n in enumerate(missing)}}


def _spread_labels(fig, annotations: Sequence[Any]) -> None:  # noqa: ANN001
    """Move scatter labels up, one label height at a time, until none overlaps an earlier one
    (in drawing order: lowest point first)."""
    if len(annotations) < 2:
        return
    renderer = fig.canvas.get_renderer()
    placed: list[Any] = []
    for ann in sorted(annotations, key=lambda a: (a.xy[1], a.xy[0])):
        for _ in range(12):
            box = ann.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                break
            x, y = ann.xyann
            ann.xyann = (x, y + box.height * 72.0 / fig.dpi + 1)
        placed.append(ann.get_window_extent(renderer))


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
    colours: Mapping[str, str] | None = None,
) -> bytes:
    """The paper's Figure 2 form on one shared accept-ref axis (y) for two panels:

    * left — WER (x) vs accept-ref for the user's models (this audit);
    * right — every model ranked by accept-ref: the paper's published models (their data
      release, another corpus and panel; grey = one of its panel members) and the user's models
      (diamonds in their colour, names in bold) placed among them, each with its Wilson interval.

    The published aggregates carry no WER, so they appear only on the right; both panels share
    the y axis, so a model's height reads the same in both.

    ``models`` rows: name, wer (0-1), rate, ci_low, ci_high. ``published`` rows: name, rate,
    ci_low, ci_high, in_panel. ``colours``: the report's colour per model (the left panel's
    markers); labels that would collide are moved apart.
    """
    plt = _plt()
    mine = [{**m, "mine": True} for m in models]
    palette = _colours_for([m["name"] for m in mine], colours)
    ranked = sorted([*({**p, "mine": False} for p in published), *mine], key=lambda r: (-r["rate"], r["name"]))
    top = max([0.5, *(r["ci_high"] + 0.05 for r in ranked)])
    fig, (ax, bx) = plt.subplots(
        1,
        2,
        figsize=(12, 5.2),
        sharey=True,
        gridspec_kw={"width_ratios": [1, max(1.6, 0.075 * len(ranked))]},
    )
    labels = []
    for m in mine:
        x, c = 100 * m["wer"], palette[m["name"]]
        ax.errorbar([x], [m["rate"]], yerr=_err([m]), fmt="D", color=c, capsize=3, markersize=5)
        labels.append(
            ax.annotate(m["name"], (x, m["rate"]), textcoords="offset points", xytext=(4, 4), fontsize=8, color=c)
        )
    ax.set_xlabel("WER on the given references (%)")
    ax.set_ylabel("accept-ref (reference errors reproduced)")
    ax.set_ylim(-0.02, top)
    ax.set_title("Your models (this audit)")
    xs = list(range(len(ranked)))
    for x, r in zip(xs, ranked):
        colour = palette[r["name"]] if r["mine"] else ("#95a5a6" if r.get("in_panel") else "#2c3e50")
        bx.errorbar(
            [x],
            [r["rate"]],
            yerr=_err([r]),
            fmt="D" if r["mine"] else "o",
            color=colour,
            ecolor=colour,
            capsize=2,
            markersize=5 if r["mine"] else 3.5,
        )
    bx.set_xticks(xs, [r["name"] for r in ranked], rotation=90, fontsize=6.5)
    for label, r in zip(bx.get_xticklabels(), ranked):
        if r["mine"]:
            label.set_color(palette[r["name"]])
            label.set_fontweight("bold")
    bx.set_xlim(-0.8, len(ranked) - 0.2)
    bx.tick_params(axis="y", labelleft=True)
    bx.set_title(
        f"Ranked by accept-ref: your models (diamonds, names in bold) among the paper's published models\n{published_label}; "
        "grey = a panel member there",
        fontsize=9,
    )
    fig.tight_layout()
    _spread_labels(fig, labels)
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
    colours: Mapping[str, str] | None = None,
) -> bytes:
    """Grouped dot plot with 95% intervals: one series per model, x = ``group_key`` values
    (conditions, families, ...). Rows: model, <group_key>, rate, ci_low, ci_high (rate may be None).
    ``ylim=None`` scales to the data (for quantities that are not shares, such as lift).
    ``colours``: the report's colour per model, so a model keeps its colour across plots."""
    plt = _plt()
    groups = list(dict.fromkeys(r[group_key] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(groups) + 2), 3.6))
    palette = _colours_for(models, colours)
    width = 0.8 / max(1, len(models))
    for i, m in enumerate(models):
        pts = [(groups.index(r[group_key]), r) for r in rows if r["model"] == m and r.get("rate") is not None]
        if not pts:
            continue
        xs = [g + (i - (len(models) - 1) / 2) * width for g, _ in pts]
        ax.errorbar(
            xs,
            [r["rate"] for _, r in pts],
            yerr=_err([r for _, r in pts]),
            fmt="o",
            capsize=3,
            label=m,
            color=palette[m],
        )
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
