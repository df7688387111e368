"""Exports the ecosystem reads: a long results table (Parquet / CSV rows) and Hugging Face Hub
``.eval_results/*.yaml`` files for a model card.

Both read result dictionaries only (a run's ``results.json``, or one probe's ``--json`` output).

* :func:`measure_rows` flattens results into one row per (model, corpus, probe, measure) with the
  value, its interval, its count, its unit, the normalizer (named and versioned) and the seed;
  :func:`parquet_bytes` writes them with a fixed schema (``pyarrow``, extra ``parquet``).
* :func:`eval_results_yaml` writes one model's entries in the Hub's ``.eval_results`` format
  (``huggingface_hub.eval_result_entries_to_yaml``'s layout: a list of ``{dataset: {id, task_id,
  revision?}, value, date?, source?: {url, name?}, notes?}``). The Hub keys a leaderboard by
  (dataset id, task id), so the leaderboard's metric, WER in percent, is the entry under the given
  task id; other measures (``--measures``) get the task id ``<task_id>/<measure>``. The split, the
  metric's name and unit, the normalizer and its version, how WER was counted and the asr-audit
  version are written in ``notes``. YAML is emitted by hand (JSON-quoted strings, valid YAML), so
  the output is deterministic and needs no YAML library.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from asr_audit.errors import ConfigError, InputFileError, require

COLUMNS = (
    "model",
    "corpus",
    "probe",
    "measure",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "unit",
    "note",
    "normalizer",
    "normalizer_version",
    "wer_scoring",
    "seed",
    "source",
)
#: Measures with a Hub entry, and how each is written there (percent or points).
HUB_MEASURES = ("wer", "wer_corrected", "accept_ref", "wer_inflation")
EXPORTED_PROBES = ("refdis", "transcribe", "switch_rate", "gate", "longform")


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _normalizer(r: Mapping[str, Any]) -> tuple[str | None, str | None]:
    n = r.get("normalizer")
    if isinstance(n, Mapping):
        package = " ".join(str(n[k]) for k in ("package", "package_version") if n.get(k)) or None
        return n.get("label") or n.get("name"), package
    return (str(n), None) if n else (None, None)


def _row(model: str, corpus: str, probe: str, measure: str, r: Mapping[str, Any], **values: Any) -> dict[str, Any]:
    label, version = _normalizer(r)
    scoring = r.get("wer_scoring")
    return {
        "model": model,
        "corpus": corpus,
        "probe": probe,
        "measure": measure,
        "value": _num(values.get("value")),
        "ci_low": _num(values.get("ci_low")),
        "ci_high": _num(values.get("ci_high")),
        "n": int(values["n"]) if isinstance(values.get("n"), int) else None,
        "unit": values.get("unit"),
        "note": values.get("note"),
        "normalizer": label,
        "normalizer_version": version,
        "wer_scoring": scoring.get("label") if isinstance(scoring, Mapping) else None,
        "seed": r.get("seed") if isinstance(r.get("seed"), int) else None,
        "source": r.get("source"),
    }


def _refdis(corpus: str, r: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for m in r.get("models", []):
        name = m["model"]
        out += [
            _row(name, corpus, "refdis", "accept_ref", r, value=m.get("accept_ref"), ci_low=m.get("ci_low"),
                 ci_high=m.get("ci_high"), n=m.get("n_eligible"), unit="share", note=m.get("reason")),
            _row(name, corpus, "refdis", "wer", r, value=m.get("wer"), n=m.get("wer_n_words"), unit="share"),
            _row(name, corpus, "refdis", "wer_corrected", r, value=m.get("wer_corrected"), n=m.get("wer_n_words"),
                 unit="share"),
            _row(name, corpus, "refdis", "wer_inflation", r, value=m.get("wer_inflation"),
                 ci_low=m.get("wer_inflation_ci_low"), ci_high=m.get("wer_inflation_ci_high"),
                 n=m.get("wer_n_clips"), unit="points"),
        ]  # fmt: skip
    return out


def _wer_models(probe: str) -> Any:
    def rows(corpus: str, r: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [
            _row(
                m["model"],
                corpus,
                probe,
                "wer",
                r,
                value=m.get("wer"),
                n=m.get("n_words", m.get("wer_n_words")),
                unit="share",
            )
            for m in r.get("models", [])
        ]

    return rows


def _switch(corpus: str, r: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        _row(row["model"], corpus, "switch_rate", f"switch:{row['family']}", r, value=row.get("switch"),
             ci_low=row.get("ci_low"), ci_high=row.get("ci_high"), n=row.get("n_items"), unit="share",
             note=row.get("reason"))
        for row in [*r.get("rows", []), *r.get("pooled", [])]
    ]  # fmt: skip


def _gate(corpus: str, r: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        _row(r["candidate"], corpus, "gate", f"{t['measure']}_minus_{r['baseline']}", r, value=t.get("difference"),
             ci_low=t.get("lower_bound"), ci_high=t.get("upper_bound"), n=t.get("n_clusters"), unit="points",
             note=t["status"] + (f" ({t['reason']})" if t.get("reason") else ""))
        for t in r.get("tests", [])
    ]  # fmt: skip


_EXTRACTORS = {
    "refdis": _refdis,
    "transcribe": _wer_models("transcribe"),
    "switch_rate": _switch,
    "gate": _gate,
    "longform": _wer_models("longform"),
}


def result_entries(data: Mapping[str, Any], where: str, corpus: str | None = None) -> list[dict[str, Any]]:
    """``(probe, corpus, result)`` entries of a run's ``results.json`` or of one probe's JSON output.

    A single probe's output names no corpus: ``corpus`` (else its ``source`` folder's name) does.
    """
    from pathlib import Path

    if isinstance(data.get("probes"), list):
        entries = [e for e in data["probes"] if isinstance(e, Mapping) and "result" in e]
        if corpus is not None:
            entries = [e for e in entries if e.get("corpus") == corpus]
            if not entries:
                have = sorted({str(e.get("corpus")) for e in data["probes"] if isinstance(e, Mapping)})
                raise InputFileError(
                    where, f"no result for corpus {corpus!r} (have: {', '.join(have)})", "pass one of them"
                )
        return [{"probe": e["probe"], "corpus": e.get("corpus", ""), "result": e["result"]} for e in entries]
    probe = data.get("probe")
    if not isinstance(probe, str):
        raise InputFileError(
            where,
            "neither a run's results.json (no 'probes' list) nor a probe's --json output (no 'probe' field)",
            "pass the results.json of `asr-audit run` or the --json file of refdis, gate, switch-rate or transcribe",
        )
    name = corpus or Path(str(data.get("source") or "results")).name or "results"
    return [{"probe": probe, "corpus": name, "result": data}]


def measure_rows(entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (model, corpus, probe, measure), sorted; probes without numbers per model are skipped."""
    rows: list[dict[str, Any]] = []
    for e in entries:
        extract = _EXTRACTORS.get(str(e["probe"]))
        if extract is not None:
            rows += extract(str(e.get("corpus", "")), e["result"])
    return sorted(rows, key=lambda r: (r["model"], r["corpus"], r["probe"], r["measure"]))


def parquet_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """``rows`` (:func:`measure_rows`) as a Parquet file with a fixed schema (no pandas metadata)."""
    pa = require("pyarrow", "parquet")
    pq = require("pyarrow.parquet", "parquet")
    types = {
        "value": pa.float64(),
        "ci_low": pa.float64(),
        "ci_high": pa.float64(),
        "n": pa.int64(),
        "seed": pa.int64(),
    }
    schema = pa.schema([(c, types.get(c, pa.string())) for c in COLUMNS])
    table = pa.Table.from_pylist([{c: r.get(c) for c in COLUMNS} for r in rows], schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", write_statistics=False)
    return sink.getvalue()


def _yaml_scalar(x: Any) -> str:
    if isinstance(x, str):
        return json.dumps(x, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar
    if isinstance(x, bool) or x is None:
        raise TypeError(f"no YAML scalar for {x!r}")
    return repr(round(float(x), 4))


def eval_results_yaml(
    rows: Sequence[Mapping[str, Any]],
    model: str,
    corpus: str,
    *,
    dataset_id: str,
    task_id: str,
    split: str,
    measures: Sequence[str] = ("wer",),
    dataset_revision: str | None = None,
    date: str | None = None,
    source_url: str | None = None,
    source_name: str | None = None,
    version: str = "",
) -> str:
    """``model``'s entries on ``corpus`` in the Hub's ``.eval_results`` YAML (see the module docstring).

    WER comes from refdis when the results have it (else from transcribe / longform). A measure
    that is undefined for the model (no judged edit, no reference word) is left out and named in
    the first entry's notes; no defined measure at all is an error.
    """
    if source_name is not None and source_url is None:
        raise ConfigError(
            "--source-name needs --source-url (the Hub requires a source url with a name); fix: add --source-url"
        )
    for m in measures:
        if m not in HUB_MEASURES:
            raise ConfigError(
                f"--measures names {m!r}; valid: {', '.join(HUB_MEASURES)}; fix: e.g. --measures wer,accept_ref"
            )
    mine = [r for r in rows if r["model"] == model and r["corpus"] == corpus]
    by_measure: dict[str, Mapping[str, Any]] = {}
    for probe in ("refdis", "longform", "transcribe"):  # the first probe that has a measure wins
        for r in mine:
            if r["probe"] == probe and r["measure"] not in by_measure and r["value"] is not None:
                by_measure[r["measure"]] = r
    entries: list[tuple[str, float, str]] = []
    missing: list[str] = []
    for m in measures:
        if m not in by_measure:
            missing.append(m)
            continue
        r = by_measure[m]
        value = r["value"] * 100 if r["unit"] == "share" else r["value"]
        unit = "%" if r["unit"] == "share" else "percentage points"
        interval = (
            f"; 95% interval [{_fmt(r['ci_low'], r['unit'])}, {_fmt(r['ci_high'], r['unit'])}]"
            if r["ci_low"] is not None and r["ci_high"] is not None
            else ""
        )
        notes = (
            f"metric: {m} ({unit}); split: {split}; n: {r['n']}{interval}; normalizer: {r['normalizer']}"
            f"{' (package ' + str(r['normalizer_version']) + ')' if r['normalizer_version'] else ''}; "
            f"WER scoring: {r['wer_scoring'] or 'word-level Levenshtein'}; computed by asr-audit {version} ({r['probe']})"
        )
        entries.append((task_id if m == "wer" else f"{task_id}/{m}", value, notes))
    if not entries:
        have = sorted({r["corpus"] for r in rows if r["model"] == model}) or ["none"]
        raise ConfigError(
            f"model {model!r} has no defined {', '.join(measures)} on corpus {corpus!r} (its corpora: {', '.join(have)}); "
            "fix: pass results with WER for it (refdis, transcribe or longform) and the right --corpus"
        )
    if missing:
        task, value, notes = entries[0]
        entries[0] = (task, value, f"{notes}; undefined here: {', '.join(missing)}")
    lines = []
    for task, value, notes in entries:
        lines += ["- dataset:", f"    id: {_yaml_scalar(dataset_id)}", f"    task_id: {_yaml_scalar(task)}"]
        if dataset_revision:
            lines.append(f"    revision: {_yaml_scalar(dataset_revision)}")
        lines.append(f"  value: {_yaml_scalar(value)}")
        if date:
            lines.append(f"  date: {_yaml_scalar(date)}")
        if source_url:
            lines += ["  source:", f"    url: {_yaml_scalar(source_url)}"]
            if source_name:
                lines.append(f"    name: {_yaml_scalar(source_name)}")
        lines.append(f"  notes: {_yaml_scalar(notes)}")
    return "\n".join(lines) + "\n"


def _fmt(x: float, unit: str) -> str:
    return f"{100 * x:.2f}" if unit == "share" else f"{x:.2f}"
