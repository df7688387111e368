"""One policy for undefined values: "—" in tables, null in JSON, an empty cell in CSV, never 0."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from asr_audit.report.format import UNDEFINED, fmt_ci, fmt_num, is_undefined
from asr_audit.report.tables import to_csv, to_json
from asr_audit.stats.intervals import wilson


@pytest.mark.parametrize("x", [None, math.nan, math.inf, -math.inf])
def test_undefined_values_are_a_dash_in_tables(x: float | None) -> None:
    assert is_undefined(x)
    assert fmt_num(x) == UNDEFINED == "—"
    assert fmt_ci(x, 0.5) == fmt_ci(0.5, x) == UNDEFINED


def test_defined_values_keep_their_format() -> None:
    assert fmt_num(0.0) == "0.000" and not is_undefined(0.0)
    assert fmt_num(0.07512, 2, scale=100) == f"{100 * 0.07512:.2f}"
    assert fmt_num(-5.1, 2, signed=True) == "-5.10" and fmt_num(1.0, 2, signed=True) == "+1.00"
    assert fmt_ci(0.1, 0.2, sep="-", brackets=False) == "0.100-0.200"


def test_undefined_values_are_null_in_json_and_empty_in_csv() -> None:
    rows = [{"model": "m", "rate": math.nan, "ci_low": None, "n": 0, "zero": 0.0}]
    assert json.loads(to_json(rows)) == [{"model": "m", "rate": None, "ci_low": None, "n": 0, "zero": 0.0}]
    assert to_csv(rows, ("model", "rate", "ci_low", "n", "zero")) == "model,rate,ci_low,n,zero\nm,,,0,0.0\n"


def test_a_rate_over_no_trials_is_null_not_zero() -> None:
    assert wilson(0, 0).to_dict() == {"k": 0, "n": 0, "rate": None, "ci_low": None, "ci_high": None}
    assert wilson(0, 3).to_dict()["rate"] == 0.0  # zero of three is a defined 0


def test_masked_model_with_no_eligible_item_has_no_accept_ref() -> None:
    from asr_audit.probes.audio.masked import summarize

    m = summarize("m", "key", []).to_dict()
    assert (m["n"], m["accept_ref"], m["ci_low"], m["ci_high"]) == (0, None, None, None)


def test_refdis_model_with_no_judged_edit_has_no_accept_ref() -> None:
    from asr_audit.probes.predfiles.inflation import Inflation
    from asr_audit.probes.predfiles.refdis_score import score_model

    inf = Inflation("m", 1, 10, 0.1, 0.1, 0.0, 0.0, 0.0)
    d: dict[str, Any] = score_model("m", [], in_panel=False, inflation=inf).to_dict()
    assert (d["n_eligible"], d["accept_ref"], d["ci_low"], d["ci_high"]) == (0, None, None, None)
    assert d["by_kind"]["deletion"]["rate"] is None
