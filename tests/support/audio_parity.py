"""The audio probes' three front doors on one tiny real corpus, for the parity tests (tests/probes/parity).

The corpus is the first three clips of the audio-probe fixtures (flite's slt voice, one number
each); the verb (``asr-audit masked | lift | continue --json``), a one-probe spec (``asr-audit
run``: its ``results.json`` entry) and the API (:mod:`asr_audit.api`) run with the bundled offline
Whisper tiny.en and a model named as its spec, so every door labels the rows alike. The three
share one store: the first door transcribes, scores and decodes, the others read it back (the
results hold no cache counts: `scored_rows` counts rows computed or read back), so what
is compared is everything the probe does around the model (options, alignment, masks, cuts, spans,
gates, judging, intervals); the store's row counts say the later doors computed nothing new.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

MANIFEST = Path(__file__).resolve().parents[1] / "probes" / "audio" / "fixtures" / "manifest.jsonl"
LIMIT = 3  # the three flite-slt clips


def as_json(data: Any) -> Any:
    """``data`` as the JSON the verb and the runner write (NaN as null), read back."""
    from asr_audit.report.tables import to_json

    return json.loads(to_json(data))


def verb(run_cli: Any, out: Path, *args: Any) -> dict[str, Any]:
    """The verb's ``--json`` (``args``: the verb and its flags), without the corpus's source (the verb's envelope)."""
    code, _, err = run_cli(*args, "--corpus", MANIFEST, "--limit", LIMIT, "--json", out)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data.pop("corpus") == str(MANIFEST)
    return data


def spec_entry(run_cli: Any, root: Path, model: str, probe: str, table: str, store: Path) -> dict[str, Any]:
    """``asr-audit run`` on a spec with the corpus, the model ``model`` (named as its spec) and the
    ``[probes.<probe>]`` table ``table`` (TOML lines): the probe's ``results.json`` result."""
    root.mkdir(parents=True, exist_ok=True)
    spec = root / "spec.toml"
    spec.write_text(
        f'title = "parity"\noutput = "{root / "out"}"\nstore = "{store}"\n'
        f'[[corpus]]\nname = "tiny"\nspec = "{MANIFEST}"\nlimit = {LIMIT}\n'
        f'[[model]]\nname = "{model}"\nspec = "{model}"\n'
        f"[probes.{probe}]\n{table}"
    )
    code, _, err = run_cli("run", spec)
    assert code == 0, err
    results = json.loads((root / "out" / "results.json").read_text())
    return next(e["result"] for e in results["probes"] if e["probe"] == probe)


def store_rows(store: Path, kind: str | None = None) -> int:
    """The rows of the store's results table (transcripts, scores, forced outputs, alignments), or of
    one ``kind`` (a spec's plan also transcribes every clip, which lift and continuation may not)."""
    with sqlite3.connect(store) as db:
        if kind is None:
            return int(db.execute("SELECT count(*) FROM results").fetchone()[0])
        return int(db.execute("SELECT count(*) FROM results WHERE kind = ?", (kind,)).fetchone()[0])
