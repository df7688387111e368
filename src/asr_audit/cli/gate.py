"""``asr-audit gate``: a regression gate for CI (exit 0 pass, 1 regression, 2 error or undecided);
flags: ``probes.predfiles.gate.FLAGS``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import typer

from asr_audit.cli import app, console, split_list
from asr_audit.cli.common import truth_step
from asr_audit.cli.probe_verbs import Args, verb
from asr_audit.cli.reading import reference_normalizer, say_repairs
from asr_audit.errors import ConfigError
from asr_audit.probes.core.flags import DATASET, JSON, NORMALIZER, PANEL, PREDS, SEED
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.probes.predfiles.gate import GATE, MARKDOWN, gate_inputs
from asr_audit.report.gate import gate_markdown, gate_table
from asr_audit.report.tables import to_json


def _refuse(v: Mapping[str, Any]) -> None:
    if v["panel"] is None and v["corrected_refs"] is None:
        raise ConfigError("gate needs --panel a,b,c,d (consensus mode) or --corrected-refs FILE (two-reference mode)")


@verb(
    app,
    "gate",
    (replace(PREDS, default=None), PANEL, NORMALIZER, DATASET, SEED, JSON, MARKDOWN),
    probe=GATE,
    read=True,
    check=_refuse,
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
    preds = None if a["preds"] is None else str(a["preds"])
    # candidate and baseline: models of --preds, or files added to its set
    pset, cand, base = gate_inputs(preds, a["candidate"], a["baseline"], a["dataset"], read=read, normalize=normalize)
    say_repairs(pset)
    options = replace(options, candidate=cand, baseline=base)
    panel = tuple(split_list(a["panel"], "--panel") or ())
    inputs = ProbeInputs(
        corpus=pset.source,
        predictions=pset,
        panel=panel,
        seed=a["seed"],
        normalizer=a["normalizer"],
        verify_truth=truth_step,
    )
    GATE.check(options, inputs, a.surface)
    result = GATE.run(inputs, options)
    assert result is not None  # the gate applies to every prediction set
    data = result.to_dict()
    summary = gate_markdown(data)
    console.print(gate_table(data))
    console.print(summary, highlight=False, soft_wrap=True)
    a.write("json_out", to_json(data))
    a.write("markdown_out", summary)
    raise typer.Exit(result.exit_code)
