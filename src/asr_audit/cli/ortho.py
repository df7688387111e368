"""Verb ``switch-rate``: the orthographic switch-rate probe over a folder of prediction files.

The verb parses (flags: ``probes.predfiles.ortho.FLAGS``), runs the switch-rate probe
(:data:`~asr_audit.probes.predfiles.ortho.SWITCH_RATE`, the same object ``[probes.switch_rate]`` and
the API run) once, and writes through the renderers of :mod:`asr_audit.report.switch_rate` (the same
table, CSV and JSON as the report).
"""

from __future__ import annotations

from asr_audit.cli import app, console
from asr_audit.cli.probe_verbs import Args, verb
from asr_audit.cli.reading import load_set
from asr_audit.probes.core.flags import CSV, DATASET, JSON, PREDS
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.probes.predfiles.ortho import SHOW_EMPTY, SWITCH_RATE
from asr_audit.report.switch_rate import switch_rate_csv, switch_rate_json, switch_rate_table


@verb(app, "switch-rate", (PREDS, DATASET, SHOW_EMPTY, JSON, CSV), probe=SWITCH_RATE, read=True)
def switch_rate_cmd(a: Args) -> None:
    """Orthographic switch rate: does a model write the reference's spelling of a sound-alike (Mr / Mister)?"""
    inputs = ProbeInputs(corpus=str(a["preds"]), predictions=load_set(a["preds"], a["dataset"], a["read"]))
    SWITCH_RATE.check(a.options, inputs, a.surface)
    result = SWITCH_RATE.run(inputs, a.options)
    assert result is not None  # the probe applies to every prediction set
    data = SWITCH_RATE.to_dict(result)
    console.print(switch_rate_table(data, a["show_empty"]))
    a.write("json_out", switch_rate_json(data))
    a.write("csv_out", switch_rate_csv(data))
