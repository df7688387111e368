"""Join stores: the results of several shard runs into one store (``asr-audit merge``).

Results are write-once and keyed by (backend, audio, kind, item), so merging is a union with
``INSERT OR IGNORE``: merging twice, or in any order, gives the same rows.

Merging refuses, with a one-line error and before copying anything, a source whose keys
*disagree* with the target's (:func:`disagreement`):

* a ``meta`` entry both stores have differs, or their ``identity_format`` differs (a store
  without one was written before keys carried code versions: format "1");
* a backend with the same spec and weights hash is recorded in both under different code
  versions (:data:`VERSION_FIELDS`: the decoding-code version, the converter revision of
  rebuilt weights): shards computed by different code must not be joined into one result set.

Backends that differ in a resolved setting only (``compute_type`` float32 on a CPU shard,
float16 on a GPU shard) have different keys, so their results never mix: they merge.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from asr_audit.errors import InputFileError
from asr_audit.store.sqlite import Store, open_store

TABLES = ("backends", "results", "audio_files", "runs", "errors")
VERSION_FIELDS = ("code_version", "converter")
_FIX = "merge only shards written by the same asr-audit version (rerun the odd shard with it), or merge into a new store"


def _versions(identity: dict[str, object]) -> tuple[object, ...]:
    code = identity.get("code")
    code = code if isinstance(code, dict) else {}
    return tuple(code.get(f) for f in VERSION_FIELDS)


def disagreement(target: Store, source: Store) -> str | None:
    """Why ``source``'s keys disagree with ``target``'s (see the module docstring), or None."""
    tmeta, smeta = target.meta(), source.meta()
    for key in sorted(set(tmeta) & set(smeta)):
        if tmeta[key] != smeta[key]:
            return f"store meta {key}={smeta[key]!r} differs from the target's {tmeta[key]!r}"
    tformat, sformat = tmeta.get("identity_format", "1"), smeta.get("identity_format", "1")
    if tformat != sformat:
        return (f"its cache keys have identity format {sformat}, the target's {tformat} "
                "(format 1 keys, written before asr-audit 0.2, carry no decoding-code version)")
    seen: dict[tuple[object, object], dict[str, object]] = {}
    for ident in target.backend_identities():
        seen.setdefault((ident.get("spec"), ident.get("weights_hash")), ident)
    for ident in source.backend_identities():
        other = seen.get((ident.get("spec"), ident.get("weights_hash")))
        if other is not None and _versions(other) != _versions(ident):
            mine = ", ".join(f"{f}={v}" for f, v in zip(VERSION_FIELDS, _versions(ident)))
            theirs = ", ".join(f"{f}={v}" for f, v in zip(VERSION_FIELDS, _versions(other)))
            return (f"backend {ident.get('spec')} (weights {ident.get('weights_hash')}) has {mine} here "
                    f"but {theirs} in the target")
    return None


@dataclass(frozen=True, slots=True)
class MergeReport:
    source: str
    added: dict[str, int]


def merge_stores(into: str | Path, sources: Sequence[str | Path]) -> list[MergeReport]:
    """Copy every row of ``sources`` that ``into`` lacks; returns rows added per table per source."""
    reports = []
    with open_store(into) as target:  # creates / validates the target schema
        target_path = Path(target.path).resolve()
    for src in sources:
        src_path = Path(src)
        if not src_path.is_file():
            raise InputFileError(src_path, "no such store file", "pass the SQLite files written by the shard runs")
        if src_path.resolve() == target_path:
            raise InputFileError(src_path, "is the merge target itself", "merge other stores into it")
        with open_store(src_path) as source, open_store(target_path) as target:  # validates both
            reason = disagreement(target, source)
        if reason is not None:
            raise InputFileError(src_path, f"cannot merge into {target_path}: {reason}", _FIX)
        db = sqlite3.connect(target_path, timeout=60.0, isolation_level=None)
        try:
            db.execute("ATTACH DATABASE ? AS src", (str(src_path),))
            db.execute("BEGIN IMMEDIATE")
            added = {}
            for table in TABLES:
                before = db.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]
                db.execute(f"INSERT OR IGNORE INTO main.{table} SELECT * FROM src.{table}")
                added[table] = db.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0] - before
            db.execute("COMMIT")
            db.execute("DETACH DATABASE src")
        except sqlite3.DatabaseError as exc:
            raise InputFileError(src_path, f"could not merge ({exc})", "check that both files are asr-audit stores") from None
        finally:
            db.close()
        reports.append(MergeReport(str(src_path), added))
    return reports
