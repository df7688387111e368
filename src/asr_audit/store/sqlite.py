"""The persistent result store: one SQLite file in WAL mode.

Every result is keyed by ``(backend identity key, audio content hash, kind, item)``:

* ``kind`` says what it is — ``transcript``, ``score``, ``timings`` ... — and ``item`` tells
  apart several results of one kind on the same audio (the hash of a scored target text, say;
  ``""`` for transcripts);
* the value is JSON text, with the compute time in seconds beside it.

Writes are short ``BEGIN IMMEDIATE`` transactions of ``INSERT OR IGNORE``: a result is written
once and never changed, so two processes racing on one key both succeed and one row remains, and
a process killed with SIGKILL loses at most the transaction it had not committed (SQLite's
journal rolls it back). A busy timeout makes concurrent writers wait instead of failing.

Besides results the store keeps the identity of each backend, a fingerprint index (file path +
size + mtime -> audio hash) that lets cached clips skip decoding, a recipe index (a derived clip's
recipe key -> its audio hash, write-once: see :func:`is_recipe_key`) that lets derived audio skip
being built, run metadata and per-clip errors. Each handle counts what it computed and what the
store answered (:attr:`Store.decodes`, :mod:`asr_audit.store.counts`).

A store is recognised by its ``meta`` table's ``schema`` row: an existing SQLite database without
it is someone else's and is refused untouched (never switched to WAL or given tables). A full
disk is reported as such (:class:`StoreDiskFullError`), with no advice to delete the store.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from asr_audit.errors import AuditError, InputFileError
from asr_audit.store.base import AudioIndexEntry, Identity, StoredResult
from asr_audit.store.counts import DecodeCounts

_FULL_MARKERS = ("database or disk is full", "disk i/o error", "no space left")


class StoreDiskFullError(AuditError):
    """The store could not be written: the disk (or its quota) is full, or the disk failed."""

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(
            f"{path}: disk full (or failing) while writing the store ({detail}); fix: free space on "
            "that disk (or pass a --store path on another disk) and rerun to resume — the store's "
            "committed results are intact, keep the file"
        )


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (an OSError or sqlite3 error) means the disk is full or failing."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
        return True
    return isinstance(exc, sqlite3.Error) and any(m in str(exc).lower() for m in _FULL_MARKERS)


def _unusable(path: Path, exc: BaseException) -> AuditError:
    """The one-line error for a store that failed to open: disk full, corrupt or foreign."""
    if is_disk_full(exc):
        return StoreDiskFullError(path, str(exc))
    if "malformed" in str(exc).lower():
        return InputFileError(
            path,
            f"the store is corrupt ({exc})",
            "move the file aside and rerun with a new --store path (results will be recomputed)",
        )
    return InputFileError(path, f"not a usable SQLite store ({exc})", "pass another --store path")


def is_store_file(path: str | Path) -> bool | None:
    """Read-only check of an existing file: ``True`` for an asr-audit store, ``False`` for any other
    SQLite database with tables, ``None`` for an empty database (safe to make a store of).

    Raises :class:`sqlite3.DatabaseError` for a file that is not SQLite at all.
    """
    from urllib.parse import quote

    db = sqlite3.connect(f"file:{quote(str(Path(path).resolve()))}?mode=ro", uri=True, timeout=60.0)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return None
        if "meta" not in tables:
            return False
        columns = {r[1] for r in db.execute("PRAGMA table_info(meta)")}
        if not {"key", "value"} <= columns:
            return False
        return db.execute("SELECT 1 FROM meta WHERE key = 'schema'").fetchone() is not None
    finally:
        db.close()


SCHEMA_VERSION = "1"
# How backend keys are formed: "1" spec + weights + options; "2" also the code entries (decoding-code
# version, resolved compute type, converter revision). Stores without the meta entry are "1".
IDENTITY_FORMAT = "2"
TRANSCRIPT = "transcript"
STORE_ENV = "ASR_AUDIT_STORE"
RECIPE_PREFIX = "recipe:"  # fingerprints of derived audio (probes/battery/recipe.py): the recipe index
_CHUNK = 400  # stay below SQLite's host-parameter limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS backends (
    key TEXT PRIMARY KEY, spec TEXT NOT NULL, identity TEXT NOT NULL, created REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
    backend TEXT NOT NULL, audio TEXT NOT NULL, kind TEXT NOT NULL, item TEXT NOT NULL,
    value TEXT NOT NULL, seconds REAL, created REAL NOT NULL,
    PRIMARY KEY (backend, audio, kind, item)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audio_files (
    fingerprint TEXT PRIMARY KEY, audio TEXT NOT NULL, duration REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS recipes (
    recipe TEXT PRIMARY KEY, audio TEXT NOT NULL, duration REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started REAL NOT NULL, finished REAL, meta TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS errors (
    run_id TEXT NOT NULL, backend TEXT NOT NULL, corpus TEXT NOT NULL, clip_id TEXT NOT NULL,
    reason TEXT NOT NULL, PRIMARY KEY (run_id, backend, corpus, clip_id)
) WITHOUT ROWID;
"""


def default_store_path() -> Path:
    """``$ASR_AUDIT_STORE``, else ``store.sqlite3`` in the user cache dir (platformdirs)."""
    env = os.environ.get(STORE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("asr-audit")) / "store.sqlite3"


def is_recipe_key(fingerprint: str) -> bool:
    """Whether ``fingerprint`` names derived audio by its recipe (the source's audio, the transform
    chain with its parameters, the seed and the code versions; :mod:`asr_audit.probes.battery.recipe`)
    rather than a file: such a key always means the same samples, so its row is written once.

    >>> is_recipe_key("recipe:9f2c"), is_recipe_key("file:/data/a.wav:1200:1700000000")
    (True, False)
    """
    return fingerprint.startswith(RECIPE_PREFIX)


def _retry_locked(fn: Any, timeout_s: float) -> Any:
    """Run ``fn``, retrying while another process holds the lock it needs.

    Switching a new file to WAL needs an exclusive lock and SQLite answers ``database is locked``
    at once instead of waiting on the busy timeout, so two processes opening a new store together
    must retry here.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


class Store:
    """A handle on one store file; use as a context manager or call :meth:`close`.

    It satisfies the :class:`asr_audit.store.base.Store` protocol the layers above are typed with,
    and adds what only a command needs (runs and their errors, counts, backend identities, close).
    """

    def __init__(self, path: str | Path, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path).expanduser()
        self.decodes = DecodeCounts()  # what this handle computed and what the store answered
        try:
            if self.path.is_file() and self.path.stat().st_size > 0 and is_store_file(self.path) is False:
                raise InputFileError(
                    self.path,
                    "is an SQLite database but not an asr-audit store (no 'meta' schema row); it was left untouched",
                    "pass a --store path of an asr-audit store or of a new file",
                )
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=busy_timeout_s, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            mode = _retry_locked(lambda: self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0], busy_timeout_s)
            self._db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable across process kills
        except sqlite3.DatabaseError as exc:
            raise _unusable(self.path, exc) from None
        if mode.lower() != "wal":
            raise InputFileError(
                self.path,
                f"could not switch the store to WAL mode (got {mode})",
                "put the store on a local file system",
            )
        self._init_schema()

    def _init_schema(self) -> None:
        try:
            _retry_locked(self._create_schema, 60.0)
        except sqlite3.DatabaseError as exc:
            raise _unusable(self.path, exc) from None

    def _create_schema(self) -> None:
        with self._write() as db:
            for stmt in filter(str.strip, _SCHEMA.split(";")):
                db.execute(stmt)
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise InputFileError(
                    self.path,
                    f"store schema version {row[0]} is not {SCHEMA_VERSION}",
                    "use a new --store path for this version of asr-audit",
                )
            if db.execute("SELECT 1 FROM backends LIMIT 1").fetchone() is None:  # a store with no results yet
                db.execute("INSERT OR IGNORE INTO meta VALUES ('identity_format', ?)", (IDENTITY_FORMAT,))

    # ------------------------------------------------------------------ plumbing
    class _Tx:
        """One ``BEGIN IMMEDIATE`` transaction; a full disk becomes :class:`StoreDiskFullError`."""

        def __init__(self, db: sqlite3.Connection, path: Path) -> None:
            self.db, self.path = db, path

        def __enter__(self) -> sqlite3.Connection:
            try:
                self.db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                if is_disk_full(exc):
                    raise StoreDiskFullError(self.path, str(exc)) from None
                raise
            return self.db

        def __exit__(self, exc_type, exc, tb) -> None:  # noqa: ANN001
            try:
                if exc_type is None:
                    self.db.execute("COMMIT")
                elif self.db.in_transaction:  # SQLite may have rolled back already (SQLITE_FULL)
                    self.db.execute("ROLLBACK")
            except sqlite3.Error as end_exc:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                if is_disk_full(end_exc):
                    raise StoreDiskFullError(self.path, str(end_exc)) from None
                raise
            if exc is not None and is_disk_full(exc):
                raise StoreDiskFullError(self.path, str(exc)) from None

    def _write(self) -> Store._Tx:
        return Store._Tx(self._db, self.path)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ backends
    def register_backend(self, identity: Identity) -> None:
        """Record a :class:`~asr_audit.models.base.BackendIdentity` (spec, weights, options)."""
        data = identity.to_dict()
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO backends VALUES (?, ?, ?, ?)",
                (data["key"], data["spec"], json.dumps(data, sort_keys=True), time.time()),
            )

    def meta(self) -> dict[str, str]:
        """The store's ``meta`` table (``schema``, ``identity_format``; see :data:`IDENTITY_FORMAT`)."""
        return dict(self._db.execute("SELECT key, value FROM meta"))

    def backend_identities(self) -> list[dict[str, Any]]:
        """Every recorded backend identity (``spec``, ``weights_hash``, ``options``, ``code``, ``key``)."""
        return [json.loads(row[0]) for row in self._db.execute("SELECT identity FROM backends ORDER BY key")]

    def backend_identity(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT identity FROM backends WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    # ------------------------------------------------------------------ results
    def get(self, kind: str, backend_key: str, audio_hashes: Sequence[str], item: str = "") -> dict[str, StoredResult]:
        """Cached results of ``kind``/``item`` for the given audio hashes (missing ones absent)."""
        out: dict[str, StoredResult] = {}
        unique = sorted(set(audio_hashes))
        for chunk in _chunks(unique):
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT audio, value, seconds FROM results WHERE backend = ? AND kind = ? AND item = ? "
                f"AND audio IN ({marks})",
                (backend_key, kind, item, *chunk),
            )
            for audio, value, seconds in rows:
                out[audio] = StoredResult(json.loads(value), seconds)
        self.decodes.read(kind, [(backend_key, a, item) for a in out])
        return out

    def put(self, kind: str, backend_key: str, rows: Iterable[tuple[str, Any, float | None]], item: str = "") -> int:
        """Insert ``(audio_hash, value, seconds)`` rows in one transaction; returns rows added.

        Existing keys are left as they are (results are immutable), so a concurrent or repeated
        write of the same key is harmless.
        """
        now = time.time()
        data = [(backend_key, a, kind, item, json.dumps(v, ensure_ascii=False), s, now) for a, v, s in rows]
        if not data:
            return 0
        with self._write() as db:
            before = db.total_changes
            db.executemany("INSERT OR IGNORE INTO results VALUES (?, ?, ?, ?, ?, ?, ?)", data)
            added = db.total_changes - before
        self.decodes.wrote(kind, [(backend_key, row[1], item) for row in data])
        return added

    def get_transcripts(self, backend_key: str, audio_hashes: Sequence[str]) -> dict[str, StoredResult]:
        return self.get(TRANSCRIPT, backend_key, audio_hashes)

    def put_transcripts(self, backend_key: str, rows: Iterable[tuple[str, str, float | None]]) -> int:
        return self.put(TRANSCRIPT, backend_key, rows)

    def count(self, kind: str | None = None, backend_key: str | None = None) -> int:
        sql = "SELECT COUNT(*) FROM results WHERE 1 = 1"
        args: list[str] = []
        if kind is not None:
            sql, args = sql + " AND kind = ?", [*args, kind]
        if backend_key is not None:
            sql, args = sql + " AND backend = ?", [*args, backend_key]
        return int(self._db.execute(sql, args).fetchone()[0])

    # ------------------------------------------------------------------ audio fingerprint index
    def lookup_audio(self, fingerprints: Sequence[str]) -> dict[str, AudioIndexEntry]:
        """The audio hash and duration of each known fingerprint: a file's from the fingerprint
        index, a recipe key's from the recipe index (:meth:`lookup_recipes`)."""
        files = sorted({fp for fp in fingerprints if not is_recipe_key(fp)})
        out = self.lookup_recipes([fp for fp in fingerprints if is_recipe_key(fp)])
        for chunk in _chunks(files):
            marks = ",".join("?" * len(chunk))
            for fp, audio, dur in self._db.execute(
                f"SELECT fingerprint, audio, duration FROM audio_files WHERE fingerprint IN ({marks})", chunk
            ):
                out[fp] = AudioIndexEntry(audio, dur)
        return out

    def remember_audio(self, rows: Iterable[tuple[str, str, float]]) -> None:
        """Record ``(fingerprint, audio_hash, duration)`` rows: a file's in the fingerprint index
        (last write wins: a file can change), a recipe key's in the recipe index (write-once). A
        recipe remembered here was built in this run (a clip whose recipe the index knew is never
        built: its audio hash is looked up), so it counts as ``derived_built`` in :attr:`decodes`."""
        data = list(rows)
        files = [r for r in data if not is_recipe_key(r[0])]
        recipes = [r for r in data if is_recipe_key(r[0])]
        self.decodes.built(r[0] for r in recipes)
        self.remember_recipes(recipes)
        if files:
            with self._write() as db:
                db.executemany("INSERT OR REPLACE INTO audio_files VALUES (?, ?, ?)", files)

    def lookup_recipes(self, recipes: Sequence[str]) -> dict[str, AudioIndexEntry]:
        """The audio hash and duration of each derived clip the store has seen, by recipe key
        (:func:`is_recipe_key`); the found ones count as ``derived_known`` in :attr:`decodes`.

        Recipe keys that older versions kept in the fingerprint index are found there too."""
        out: dict[str, AudioIndexEntry] = {}
        for table, column in (("audio_files", "fingerprint"), ("recipes", "recipe")):  # the recipe index wins
            for chunk in _chunks(sorted(set(recipes))):
                marks = ",".join("?" * len(chunk))
                for key, audio, dur in self._db.execute(
                    f"SELECT {column}, audio, duration FROM {table} WHERE {column} IN ({marks})", chunk
                ):
                    out[key] = AudioIndexEntry(audio, dur)
        self.decodes.known(out)
        return out

    def remember_recipes(self, rows: Iterable[tuple[str, str, float]]) -> int:
        """Record ``(recipe key, audio_hash, duration)`` rows of derived audio; a recipe's row is
        written once and never changed (a concurrent or repeated write is harmless). Returns rows added."""
        data = list(rows)
        bad = [r[0] for r in data if not is_recipe_key(r[0])]
        if bad:
            raise ValueError(f"not a recipe key: {bad[0]!r} (recipe keys start with {RECIPE_PREFIX!r})")
        if not data:
            return 0
        with self._write() as db:
            before = db.total_changes
            db.executemany("INSERT OR IGNORE INTO recipes VALUES (?, ?, ?)", data)
            return db.total_changes - before

    # ------------------------------------------------------------------ runs and errors
    def start_run(self, meta: dict[str, Any]) -> str:
        run_id = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
        with self._write() as db:
            db.execute(
                "INSERT INTO runs VALUES (?, ?, NULL, ?)", (run_id, time.time(), json.dumps(meta, sort_keys=True))
            )
        return run_id

    def finish_run(self, run_id: str, meta: dict[str, Any]) -> None:
        with self._write() as db:
            row = db.execute("SELECT meta FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            merged = {**(json.loads(row[0]) if row else {}), **meta}
            db.execute(
                "UPDATE runs SET finished = ?, meta = ? WHERE run_id = ?",
                (time.time(), json.dumps(merged, sort_keys=True), run_id),
            )

    def record_errors(self, run_id: str, backend_key: str, corpus: str, errors: Iterable[tuple[str, str]]) -> None:
        data = [(run_id, backend_key, corpus, cid, reason) for cid, reason in errors]
        if data:
            with self._write() as db:
                db.executemany("INSERT OR REPLACE INTO errors VALUES (?, ?, ?, ?, ?)", data)

    def run_errors(self, run_id: str) -> list[tuple[str, str, str, str]]:
        return [
            tuple(r)
            for r in self._db.execute(
                "SELECT backend, corpus, clip_id, reason FROM errors WHERE run_id = ? ORDER BY backend, corpus, clip_id",
                (run_id,),
            )
        ]

    def runs(self) -> list[dict[str, Any]]:
        return [
            {"run_id": r, "started": s, "finished": f, **json.loads(m)}
            for r, s, f, m in self._db.execute(
                "SELECT run_id, started, finished, meta FROM runs ORDER BY started, run_id"
            )
        ]

    def integrity_ok(self) -> bool:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def open_store(path: str | Path | None = None) -> Store:
    """Open (creating if needed) the store at ``path`` or :func:`default_store_path`."""
    try:
        return Store(path if path is not None else default_store_path())
    except OSError as exc:
        if is_disk_full(exc):
            raise StoreDiskFullError(Path(path or default_store_path()), str(exc)) from None
        raise AuditError(f"cannot open the store at {path}: {exc}; fix: pass a writable --store path") from None
