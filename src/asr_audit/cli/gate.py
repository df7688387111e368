"""Verbs over prediction files besides refdis and coverage (whose module, ``predictions.py``, stays
small for a warm refdis run): ``gate``, a regression gate for CI (exit 0 pass, 1 regression, 2 error
or undecided; flags: ``probes.predfiles.gate.FLAGS``), and ``switch-rate``, the orthographic switch rate.

``switch-rate`` parses (flags: ``probes.predfiles.ortho.FLAGS``), runs the switch-rate probe
(:data:`~asr_audit.probes.predfiles.ortho.SWITCH_RATE`, the same object ``[probes.switch_rate]`` and
the API run) once, and writes through the renderers of :mod:`asr_audit.report.switch_rate` (the same
table, CSV and JSON as the report).
"""

from __future__ import annotations

from dataclasses import replace

import typer

from asr_audit.cli import app, console, split_list
from asr_audit.cli.common import truth_step
from asr_audit.cli.probe_verbs import Args, verb
from asr_audit.cli.reading import load_set, reference_normalizer, say_repairs
from asr_audit.probes.core.flags import CSV, DATASET, JSON, NORMALIZER, PANEL, PREDS, SEED
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.probes.predfiles.gate import GATE, MARKDOWN, check_panel_given, gate_inputs
from asr_audit.probes.predfiles.ortho import SHOW_EMPTY, SWITCH_RATE
from asr_audit.report.gate import gate_markdown, gate_table
from asr_audit.report.switch_rate import switch_rate_csv, switch_rate_json, switch_rate_table
from asr_audit.report.tables import to_json


@verb(
    app,
    "gate",
    (replace(PREDS, default=None), PANEL, NORMALIZER, DATASET, SEED, JSON, MARKDOWN),
    probe=GATE,
    read=True,
    check=check_panel_given,
    inputs=("candidate", "baseline"),
)
def gate(a: Args) -> None:
    """Is the candidate worse than the baseline beyond noise? accept-ref, WER inflation, WER.

    --preds holds the panel, and the two models unless they are files. Paired, clip- (or cluster-)
    level bootstrap of candidate minus baseline; a one-sided test per measure against a minimum
    effect. With --truth or --labels, accept-ref and WER inflation are compared on verified
    reference errors (without a verification, on WER alone; docs/gate.md); leave-one-out mining
    needs 4 panel models when the candidate or baseline is one. Exit code 0: pass, 1: regression,
    2: error or too little data.
    """
    options, read = a.options, a["read"]
    normalize = reference_normalizer(read, options.refdis.normalizer_for(a["normalizer"]), a["preset"])
    # candidate and baseline: models of --preds, or files added to its set
    pset, cand, base = gate_inputs(
        a["preds"], a["candidate"], a["baseline"], a["dataset"], read=read, normalize=normalize
    )
    say_repairs(pset)
    options = replace(options, candidate=cand, baseline=base)
    inputs = ProbeInputs(
        corpus=pset.source,
        predictions=pset,
        panel=tuple(split_list(a["panel"], "--panel") or ()),
        seed=a["seed"],
        normalizer=a["normalizer"],
        verify_truth=truth_step,
    )
    result = GATE.run_checked(inputs, options, a.surface)
    assert result is not None  # the gate applies to every prediction set
    data = result.to_dict()
    summary = gate_markdown(data)
    console.print(gate_table(data))
    console.print(summary, highlight=False, soft_wrap=True)
    a.write("json_out", to_json(data))
    a.write("markdown_out", summary)
    raise typer.Exit(result.exit_code)


@verb(app, "switch-rate", (PREDS, DATASET, SHOW_EMPTY, JSON, CSV), probe=SWITCH_RATE, read=True)
def switch_rate_cmd(a: Args) -> None:
    """Orthographic switch rate: does a model write the reference's spelling of a sound-alike (Mr / Mister)?"""
    inputs = ProbeInputs(corpus=str(a["preds"]), predictions=load_set(a["preds"], a["dataset"], a["read"]))
    result = SWITCH_RATE.run_checked(inputs, a.options, a.surface)
    assert result is not None  # the probe applies to every prediction set
    data = SWITCH_RATE.to_dict(result)
    console.print(switch_rate_table(data, a["show_empty"]))
    a.write("json_out", switch_rate_json(data))
    a.write("csv_out", switch_rate_csv(data))
