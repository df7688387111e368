"""Plot labels are data: `$`, `$...$`, backslashes and brackets in names never crash or render as math."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from asr_audit.report import plots

NAMES = ["$x^2$", "a$b", "$\\frac{1}{0}$", "cost $5 and $", "\\bad{", "$_$"]


def _row(model: str, group: str) -> dict:
    return {"model": model, "cond": group, "rate": 0.4, "ci_low": 0.3, "ci_high": 0.5}


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_dollar_names_render_in_every_plot(fmt: str) -> None:
    rows = [_row(n, g) for n in NAMES for g in ("$g$", "plain")]
    assert plots.rates_by_group(rows, "cond", "corpus $c$", "rate $", fmt=fmt)
    models = [{"name": n, "wer": 0.1, "rate": 0.4, "ci_low": 0.3, "ci_high": 0.5} for n in NAMES]
    published = [{"name": n, "rate": 0.2, "ci_low": 0.1, "ci_high": 0.3, "in_panel": False} for n in NAMES]
    assert plots.wer_vs_acceptref(models, published, "$paper$", fmt=fmt)
    infl = [
        {"model": n, "wer_inflation": 1.0, "wer_inflation_ci_low": 0.5, "wer_inflation_ci_high": 1.5} for n in NAMES
    ]
    assert plots.inflation(infl, "$t$", fmt=fmt)


def test_paired_dollars_print_as_typed() -> None:
    svg = plots.inflation(
        [{"model": "$alpha$", "wer_inflation": 1.0, "wer_inflation_ci_low": 0.5, "wer_inflation_ci_high": 1.5}],
        "t",
        fmt="svg",
    ).decode()
    assert "$alpha$" in svg  # the text as typed
    assert "Oblique" not in svg  # mathtext would set `alpha` in italics and drop the dollars


def test_a_model_keeps_its_colour_across_plots() -> None:
    """The report's colour per model reaches every plot: in an SVG, each model's markers are drawn
    in the colour model_colours gave it, whatever order the plot lists the models in."""
    colours = plots.model_colours(["alpha", "beta"])
    rows = [_row("beta", "g"), _row("alpha", "g")]  # beta first here: the default cycle would swap them
    svg = plots.rates_by_group(rows, "cond", "t", "rate", fmt="svg", colours=colours).decode()
    assert colours["alpha"] in svg and colours["beta"] in svg
    assert svg.index(colours["beta"]) < svg.index(colours["alpha"])  # beta's markers drawn first, in beta's colour


def test_scatter_labels_do_not_collide() -> None:
    """Three models at one point: their names are moved apart instead of printed on top of each other."""
    plt = plots._plt()
    fig, ax = plt.subplots()
    labels = [ax.annotate(n, (0.5, 0.5), textcoords="offset points", xytext=(4, 4)) for n in ("one", "two", "three")]
    renderer = fig.canvas.get_renderer()
    assert labels[0].get_window_extent(renderer).overlaps(labels[1].get_window_extent(renderer))
    plots._spread_labels(fig, labels)
    boxes = [a.get_window_extent(renderer) for a in labels]
    assert not any(boxes[i].overlaps(boxes[j]) for i in range(3) for j in range(i + 1, 3))
    plt.close(fig)
