"""``[probes.refdis] labels = "FILE"``: a run verifies its refdis result with people's labels."""

from __future__ import annotations

import json
from pathlib import Path

from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL

SPEC = """
title = "labels"
seed = 0
output = "out"
store = "store.sqlite"
[[corpus]]
name = "vox"
predictions = "{vox}"
panel = {panel}
[probes.refdis]
resamples = 50
labels = "labels.sqlite"
"""


def test_spec_labels_verify_the_refdis_result(tmp_path: Path, run_cli) -> None:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.probes.predfiles.verified_labels import draw_sample, run_hash
    from asr_audit.store.labels import PANEL, REFERENCE, LabelStore

    result = run_refdis(load_predictions(VOXPOPULI_EXAMPLES), VOXPOPULI_PANEL, preset_params("anchor")).to_dict()
    with LabelStore(tmp_path / "labels.sqlite") as store:
        for i, s in enumerate(draw_sample(result, 12, seed=0)):
            store.add("ann", s.key, run_hash(result), REFERENCE if i % 3 == 0 else PANEL, s.weight)
    spec = tmp_path / "audit.toml"
    spec.write_text(SPEC.format(vox=VOXPOPULI_EXAMPLES, panel=json.dumps(list(VOXPOPULI_PANEL))))
    code, _, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    r = next(p["result"] for p in results["probes"] if p["probe"] == "refdis")
    v = r["verification"]
    assert v["source"] == "human labels" and v["n_labelled"] == 12 and v["run_hash"] == run_hash(result)
    assert v["miner_precision"]["n"] == 12 and v["miner_precision"]["ci_low"] is not None
    assert all("verified" in m for m in r["models"])
    assert len(v["labelled"]) == 12 and {x["label"] for x in v["labelled"]} == {"reference-wrong", "reference-right"}
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Verified edits (human labels)" in html and "Cohen" not in html  # one annotator: no kappa
    assert html.count("<td>ann: ") == 12  # every labelled edit listed with its annotator's choice
