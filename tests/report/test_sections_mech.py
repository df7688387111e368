"""The mechanism report section: sweep plot, steering table with intervals and flips, patching table."""

from __future__ import annotations

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

from asr_audit.report.html import build_report


def _arm(label: str, k: int, n: int, r2s: int, s2r: int, wer: float | None) -> dict:
    rate = k / n
    return {
        "label": label,
        "intervention": None,
        "accept_ref": {"k": k, "n": n, "rate": rate, "ci_low": max(0.0, rate - 0.2), "ci_high": min(1.0, rate + 0.2)},
        "spoken": {"k": n - k, "n": n, "rate": 1 - rate, "ci_low": 0.0, "ci_high": 1.0},
        "flips": {"ref_to_spoken": r2s, "spoken_to_ref": s2r},
        "n_sites": n,
        "wer": wer,
        "n_failed": 0,
    }


def test_mech_section_renders_sweep_steering_and_patching(tmp_path) -> None:
    result = {
        "sweep": [
            {"site": "decoder.layers.0.out", "auc": 0.61, "norm": 0.5, "n_fit": 8, "n_heldout": 16},
            {"site": "decoder.layers.3.out", "auc": 0.97, "norm": 1.5, "n_fit": 8, "n_heldout": 16},
        ],
        "site": "decoder.layers.3.out",
        "steer": {
            "ablate A": {
                "arms": [_arm("clean", 11, 14, 0, 0, 0.05), _arm("ablate-k1", 1, 14, 10, 0, 0.06), _arm("random-0", 11, 14, 1, 1, None)]
            }
        },
        "patch": {
            "table": [
                {"kind": "insertion", "condition": "decoder.layers.3.out <- base model", "n": 4, "median_full": 0.9,
                 "median_patched": 0.1, "toward_audio": 1.0},
                {"kind": "all", "condition": "encoder.out <- voice B", "n": 60, "median_full": 0.9,
                 "median_patched": 0.2, "toward_audio": 0.95, "median_change": -0.6, "change_low": -0.7,
                 "change_high": -0.5, "toward_low": 0.861, "toward_high": 0.983},
            ]
        },
    }  # fmt: skip
    html = build_report({"probes": [{"probe": "mech", "corpus": "organism", "result": result}]}, tmp_path).read_text()
    assert "Layer sweep" in html and "decoder.layers.3.out (chosen)" in html
    assert "ablate-k1" in html and "random-0" in html and "0.071" in html  # 1/14
    assert "decoder.layers.3.out &lt;- base model" in html
    assert "[0.861, 0.983]" in html  # the share's interval where the row has one, "—" where it has none
    patch_csv = (tmp_path / "tables" / "mech-organism-patch.csv").read_text().splitlines()
    assert patch_csv[0].endswith("median_change,change_low,change_high,toward_low,toward_high")
    assert patch_csv[1].endswith("1.0,,,,,") and patch_csv[2].endswith("-0.6,-0.7,-0.5,0.861,0.983")
    steer_csv = (tmp_path / "tables" / "mech-organism-steer.csv").read_text()
    assert steer_csv.splitlines()[0].startswith("run,arm,accept_ref") and "ablate A,ablate-k1" in steer_csv
    assert (tmp_path / "plots" / "mech-organism-sweep.png").stat().st_size > 1000
