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
