"""Verbs over prediction files: ``refdis`` and ``coverage`` (flags: ``refdis_options.FLAGS``, the probe's)."""

from __future__ import annotations

import gc
from functools import partial

from asr_audit.cli import app, console, process_entry
from asr_audit.cli.common import truth_step
from asr_audit.cli.probe_verbs import Args, say, verb
from asr_audit.cli.reading import load_set
from asr_audit.corpus.predfiles import gc_paused
from asr_audit.options import split_names
from asr_audit.probes.audio.refdis_probe import REFDIS
from asr_audit.probes.core.flags import CSV, DATASET, JSON, NORMALIZER, PANEL, PREDS, SEED
from asr_audit.probes.core.probe import PredictionFiles, ProbeInputs
from asr_audit.probes.predfiles.corrected import corrected_jsonl
from asr_audit.probes.predfiles.refdis import loo_note
from asr_audit.probes.predfiles.refdis_options import WRITE_CORRECTED, check_write_corrected
from asr_audit.report.tables import columns_lines, coverage_table, refdis_csv, refdis_table, to_json, write_text
from asr_audit.report.verified import verification_lines, verified_table


@verb(
    app,
    "refdis",
    (PREDS, PANEL, DATASET, SEED, NORMALIZER, JSON, CSV, WRITE_CORRECTED),
    probe=REFDIS,
    read=True,
    check=check_write_corrected,
)
def refdis(a: Args) -> None:
    """Mine reference errors with a consensus panel and score how often each model reproduces them."""
    options, read, panel = a.options, a["read"], split_names(a["panel"], "--panel") or []
    reader = partial(
        load_set, a["preds"], a["dataset"], read, options.normalizer_for(a["normalizer"]), options.mining.preset
    )
    files = PredictionFiles(a["preds"], a["dataset"], reader, plain=read.is_default)
    inputs = ProbeInputs(
        corpus=str(a["preds"]),
        panel=tuple(panel),
        seed=a["seed"],
        normalizer=a["normalizer"],
        files=files,
        verify_truth=truth_step,
        log=say,
    )
    REFDIS.check(options, inputs, a.surface)
    # the columns and the result's dict are many acyclic objects: no collector passes over them (a
    # tenth of a warm run's CPU went to them), nor one over the whole heap when the collector
    # resumes: what is alive now stays alive until the process ends
    with gc_paused():
        run = REFDIS.run(inputs, options)
        if process_entry():  # never in a caller's longer-lived process
            gc.freeze()
    note = None if a["corrected_refs"] is not None else loo_note(panel, options.mining)
    if note is not None:
        say(note)
    console.print(refdis_table(run.data))
    if options.labels is not None:
        for line in verification_lines(run.data):
            console.print(line, highlight=False, soft_wrap=True)
        console.print(verified_table(run.data))
    a.write("json_out", to_json(run.data))
    a.write("csv_out", refdis_csv(run.data))
    if a["write_corrected"]:
        clips, text_form = REFDIS.corrected(inputs, options, run)
        path = write_text(a["write_corrected"], corrected_jsonl(clips, text_form))
        console.print(f"wrote {path} ({len(clips)} clips, {sum(bool(c.changes) for c in clips)} corrected)")


@verb(
    app,
    "coverage",
    (PREDS, DATASET),
    read=True,
    examples=[
        ("asr-audit coverage --preds preds/", "clips, missing and empty hypotheses per model file"),
        ("asr-audit coverage --preds exports/ --id-from stem", "the same for files that name clips by path"),
    ],
)
def coverage(a: Args) -> None:
    """Clips per model, missing and empty hypotheses, and the columns read; fails on reference conflicts."""
    pset = load_set(a["preds"], a["dataset"], a["read"])
    console.print(coverage_table(pset.source, len(pset.references), len(pset.models), pset.coverage()))
    for line in columns_lines(pset.files):
        console.print(line, highlight=False, soft_wrap=True)
