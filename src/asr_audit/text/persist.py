"""The persistent text cache: normalized texts and alignments kept on disk between runs.

A re-run of a prediction-file probe on the same files with other parameters (another majority,
preset, panel) spends most of its time normalizing every transcript again and aligning every
(reference, hypothesis) pair again, though neither depends on those parameters. This cache keeps
both on disk, so a warm run skips them:

* **key**: the normalizer's fingerprint (its :meth:`describe` record: name, implementation,
  package and version; plus ``text2num``, the language, the cache format and the asr-audit
  version) and the content hash (SHA-256) of each prediction file with the model read from it. A file whose bytes change, a
  normalizer upgrade or a new asr-audit version is a different key: nothing stale is ever read.
* **value**, one file per (fingerprint, prediction file): every raw text of that file's rows that
  the run normalized, with its normalized form, and every (normalized reference, normalized
  hypothesis) pair of the run whose hypothesis is one of that file's, with what the run computed
  for it (difflib opcodes, edit distance, edit distance with merged compounds).
* **a whole set** (:meth:`TextCache.set_key`, :meth:`TextCache.read_set`, :meth:`TextCache.write_set`):
  one entry per (fingerprint, every file's model and content hash in order, dataset) holding the
  set as columns (:mod:`asr_audit.probes.predfiles.refdis_columns`), so a warm run on unchanged
  files reads one entry instead of the files. Stored as ``sets/<key>.npz``.

What is stored is a pure function of the texts, so a hit gives the very result a recomputation
would (``tests/text/test_persist.py`` checks warm and cold runs agree byte for byte). Entries are
written atomically (a temporary file renamed into place), so a killed run leaves either the old
entry or the new one; an unreadable entry (truncated, another format) is ignored and rewritten.
Entries are plain data, never pickles: a NumPy ``.npz`` archive read with ``allow_pickle=False``
holding one JSON document (strings, numbers, lists, objects) and integer arrays. A planted or
damaged entry can at worst be a miss (it is validated on reading), never run code, so a cache
restored from elsewhere (a shared CI cache) is safe to read. Nothing is evicted: remove the
directory (``$ASR_AUDIT_CACHE_DIR/text``) to reclaim the space.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit import __version__
from asr_audit.paths import cache_dir
from asr_audit.text.align import AlignmentCache, Opcode

FORMAT = 4  # 3: file content hashes are SHA-256 (were BLAKE2b); 4: plain data (.npz + JSON), no pickles
_CHUNK = 1 << 20
_DOC = "doc"  # the archive member holding the JSON document (UTF-8 bytes as a uint8 array)

Source = tuple[str, Path]  # (model, prediction file)


def _dump(path: Path | int, doc: object, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``doc`` (JSON) and ``arrays`` (numeric, never object) as one ``.npz`` archive."""
    blob = json.dumps(doc, separators=(",", ":")).encode("ascii")  # ASCII escapes: any str round-trips
    members = {_DOC: np.frombuffer(blob, dtype=np.uint8), **arrays}
    save: Callable[..., None] = np.savez  # members are names and arrays; none is called allow_pickle
    with open(path, "wb") as f:
        save(f, **members)


def _load(path: Path) -> tuple[Any, dict[str, np.ndarray]]:
    """The JSON document and the arrays of a :func:`_dump` archive (nothing is unpickled)."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(arrays.pop(_DOC).tobytes()), arrays


def _to_plain(data: object, arrays: dict[str, np.ndarray]) -> object:
    """``data`` with every array replaced by ``{"__array__": name}`` (the array put in ``arrays``)."""
    if isinstance(data, np.ndarray):
        if data.dtype == object:
            raise TypeError("object arrays are not plain data")
        name = f"a{len(arrays)}"
        arrays[name] = data
        return {"__array__": name}
    if isinstance(data, Mapping):
        return {str(k): _to_plain(v, arrays) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_to_plain(v, arrays) for v in data]
    return data


def _from_plain(data: object, arrays: Mapping[str, np.ndarray]) -> object:
    """The inverse of :func:`_to_plain` (a missing array name raises ``KeyError``)."""
    if isinstance(data, dict):
        if len(data) == 1 and "__array__" in data:
            return arrays[str(data["__array__"])]
        return {k: _from_plain(v, arrays) for k, v in data.items()}
    if isinstance(data, list):
        return [_from_plain(v, arrays) for v in data]
    return data


def _pairs(table: Mapping[tuple[int, int], int]) -> np.ndarray:
    """An ``{(i, j): n}`` table as an (m, 3) int64 array."""
    return np.asarray([(i, j, n) for (i, j), n in table.items()], dtype=np.int64).reshape(-1, 3)


def _unpairs(array: np.ndarray) -> dict[tuple[int, int], int]:
    return {(i, j): n for i, j, n in array.reshape(-1, 3).tolist()}


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes, its first 128 bits in hex.

    SHA-256 rather than BLAKE2b: with the CPU's SHA instructions (OpenSSL uses them) it hashes a
    prediction set about twice as fast, which a warm run pays on every file (format 3).
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()[:32]


def fingerprint(describe: Mapping[str, object], *, text2num: bool, language: str) -> str:
    """The key part naming the normalizer (its describe record), text2num, language, format and version."""

    record = {
        "normalizer": dict(describe),
        "text2num": text2num,
        "language": language,
        "format": FORMAT,
        "asr_audit": __version__,
    }
    blob = json.dumps(record, sort_keys=True, default=str).encode()
    return hashlib.blake2b(blob, digest_size=16).hexdigest()


@dataclass(slots=True)
class _Entry:
    """One prediction file's cached texts and pairs, as stored: pairs index into ``strings``."""

    norm: dict[str, str] = field(default_factory=dict)
    strings: list[str] = field(default_factory=list)  # normalized texts the pairs refer to
    ops: dict[tuple[int, int], tuple[Opcode, ...]] = field(default_factory=dict)
    errors: dict[tuple[int, int], int] = field(default_factory=dict)
    merged: dict[tuple[int, int], int] = field(default_factory=dict)

    def size(self) -> int:
        return len(self.norm) + len(self.ops) + len(self.errors) + len(self.merged)


@dataclass(frozen=True, slots=True)
class CacheStats:
    """What a run found in the cache and what it wrote back."""

    files: int  # prediction files of the run
    warm: int  # files with a readable entry
    texts: int  # normalized texts read back
    pairs: int  # pairs with at least one stored result read back
    written: int  # entries (re)written at the end of the run
    columns: str = ""  # the whole set's columns: "" (not used), "read", "read, grown" or "written"

    def describe(self) -> str:
        """One line for a command's summary."""
        if self.columns.startswith("read"):
            grown = "results added and written back" if self.columns == "read, grown" else "nothing new to write"
            return (
                f"text cache: {self.warm}/{self.files} prediction files warm (the whole set read as columns; {grown})"
            )
        if self.columns == "written":
            return f"text cache: {self.warm}/{self.files} prediction files warm (the whole set written as columns)"
        return (
            f"text cache: {self.warm}/{self.files} prediction files warm "
            f"({self.texts:,} normalized texts, {self.pairs:,} alignments reused; {self.written} entries written)"
        )


class TextCache:
    """The on-disk cache of one normalizer fingerprint (see the module docstring).

    Use: :meth:`load` the run's prediction files before normalizing (it seeds ``known`` texts and
    the :class:`~asr_audit.text.align.AlignmentCache`), run, then :meth:`save` with the raw
    hypotheses of each file.
    """

    def __init__(self, root: str | Path, key: str) -> None:
        self.folder = Path(root) / key
        self._digests: dict[Source, str] = {}
        self._sizes: dict[Source, int] = {}
        self._files: dict[Path, str] = {}  # file -> content digest (a file may hold several models)
        self._texts = self._pairs = self._warm = self._written = 0
        self._computed = self._known = -1  # what the caches held after load (-1: never loaded)
        self._columns = ""
        self._set_files = 0  # files of a set read whole as columns

    @classmethod
    def default(cls, describe: Mapping[str, object], *, text2num: bool, language: str) -> TextCache:
        """The cache under ``<cache dir>/text`` for this normalizer fingerprint."""

        return cls(cache_dir() / "text", fingerprint(describe, text2num=text2num, language=language))

    def _path(self, digest: str) -> Path:
        return self.folder / digest[:2] / f"{digest}.npz"

    def content(self, path: str | Path) -> str:
        """The content digest of a prediction file (:func:`file_digest`, computed once per path)."""
        got = self._files.get(Path(path))
        if got is None:
            got = self._files[Path(path)] = file_digest(path)
        return got

    def set_key(self, sources: Sequence[Source], dataset: str | None) -> str:
        """The key of a whole prediction set: its files' models and bytes, in order, and its dataset."""
        self._set_files = len(sources)
        parts = [dataset, [(model, self.content(path)) for model, path in sources]]
        return hashlib.blake2b(json.dumps(parts).encode(), digest_size=16).hexdigest()

    def _set_path(self, key: str) -> Path:
        return self.folder / "sets" / f"{key}.npz"

    def read_set(self, key: str) -> object | None:
        """The stored columns of the set ``key`` (a plain dict of JSON values and arrays, see
        :mod:`asr_audit.probes.predfiles.refdis_columns`), or ``None`` (absent or unreadable)."""
        try:
            doc, arrays = _load(self._set_path(key))
            return _from_plain(doc, arrays)
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001 - a damaged entry is a miss; the run rewrites it
            return None

    def used_set(self, n_files: int) -> None:
        """Count a set of ``n_files`` files read whole from :meth:`read_set` (for :meth:`stats`)."""
        self._columns = "read"
        self._warm = self._set_files = n_files

    def write_set(self, key: str, data: object) -> None:
        """Store a set's columns (atomically; a read-only or full cache directory is skipped)."""
        self._columns = "read, grown" if self._columns.startswith("read") else "written"
        arrays: dict[str, np.ndarray] = {}
        doc = _to_plain(data, arrays)
        self._atomic_write(self._set_path(key), doc, arrays)

    def _read(self, digest: str) -> _Entry | None:
        try:
            doc, arrays = _load(self._path(digest))
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                return None
            norm, strings, tags = doc["norm"], doc["strings"], doc["tags"]
            if not (isinstance(norm, dict) and isinstance(strings, list) and isinstance(tags, list)):
                return None
            if not all(isinstance(t, str) for t in strings) or not all(isinstance(t, str) for t in norm.values()):
                return None
            keys, lengths, rows = arrays["ops_keys"].reshape(-1, 2), arrays["ops_lengths"], arrays["ops_rows"]
            rows = rows.reshape(-1, 5)
            if len(keys) != len(lengths) or int(lengths.sum()) != len(rows) or (len(lengths) and lengths.min() < 0):
                return None
            flat = [(tags[t], a, b, c, d) for t, a, b, c, d in rows.tolist()]
            ends = np.cumsum(lengths).tolist()
            starts = [0, *ends[:-1]]
            ops = {(i, j): tuple(flat[lo:hi]) for (i, j), lo, hi in zip(keys.tolist(), starts, ends)}
            errors, merged = _unpairs(arrays["errors"]), _unpairs(arrays["merged"])
            n = len(strings)
            if any(not (0 <= i < n and 0 <= j < n) for table in (ops, errors, merged) for i, j in table):
                return None
            return _Entry(norm, strings, ops, errors, merged)
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001 - a damaged entry is a miss; the run rewrites it
            return None

    def load(self, sources: Iterable[Source], known: dict[str, str], cache: AlignmentCache) -> None:
        """Read the entries of ``sources`` ((model, file) pairs): their texts go into ``known``,
        their pairs into ``cache``."""
        ops: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[Opcode, ...]] = {}
        errors: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}
        merged: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}
        toks = cache.tokens
        for model, raw_path in sources:
            source = (model, Path(raw_path))
            if source in self._digests:
                continue
            content = self.content(source[1])
            digest = hashlib.blake2b(f"{content}\0{model}".encode(), digest_size=16).hexdigest()
            self._digests[source] = digest
            entry = self._read(digest)
            if entry is None:
                self._sizes[source] = 0
                continue
            self._warm += 1
            self._sizes[source] = entry.size()  # the entry itself is dropped: save() reads it again
            known.update(entry.norm)
            self._texts += len(entry.norm)
            tl = [toks(t) for t in entry.strings]
            ops.update(((tl[i], tl[j]), v) for (i, j), v in entry.ops.items())
            errors.update(((tl[i], tl[j]), n) for (i, j), n in entry.errors.items())
            merged.update(((tl[i], tl[j]), n) for (i, j), n in entry.merged.items())
        self._pairs = len(ops.keys() | errors.keys() | merged.keys())
        cache.seed(ops, errors, merged)
        self._computed, self._known = cache.computed, len(known)

    def save(
        self,
        hypotheses: Mapping[Source, Sequence[str | None]],
        references: Mapping[Source, Sequence[str | None]],
        known: Mapping[str, str],
        cache: AlignmentCache,
    ) -> int:
        """Write back each file's texts and the pairs whose hypothesis is one of its own.

        ``hypotheses`` and ``references`` map each loaded (model, file) to the raw texts of its
        rows. Returns how many entries were written: none when the run computed nothing new,
        else those that grew.
        """
        if cache.computed == self._computed and len(known) == self._known:
            return 0  # everything came from the cache: nothing to add
        by_hyp: dict[str, list[Source]] = {}
        file_texts: dict[Source, list[str]] = {}
        for (model, raw_path), hyps in hypotheses.items():
            source = (model, Path(raw_path))
            if source not in self._sizes:
                continue
            texts = [h for h in dict.fromkeys(hyps) if h is not None and h in known]
            file_texts[source] = texts
            for h in dict.fromkeys(known[t] for t in texts):
                by_hyp.setdefault(h, []).append(source)
        joined: dict[tuple[str, ...], str] = {}

        def text(t: tuple[str, ...]) -> str:
            s = joined.get(t)
            if s is None:
                s = joined[t] = " ".join(t)
            return s

        # a run that normalized new texts writes everything the caches hold; a warm one only what it computed
        cold = len(known) != self._known
        results = cache.known() if cold else cache.fresh(self._computed)
        grown: dict[Source, list[tuple[str, str, str, object]]] = {source: [] for source in file_texts} if cold else {}
        for name, (ref_t, hyp_t), value in results:
            owners = by_hyp.get(text(hyp_t))
            if owners:
                item = (name, text(ref_t), text(hyp_t), value)
                for source in owners:
                    grown.setdefault(source, []).append(item)
        written = 0
        for source in list(grown):  # one entry in memory at a time: read, grow, write, drop
            items = grown.pop(source)
            entry = self._read(self._digests[source]) or _Entry()
            if cold:
                entry.norm.update((t, known[t]) for t in file_texts[source])
                entry.norm.update((t, known[t]) for t in references.get(source, ()) if t is not None and t in known)
            where = {t: i for i, t in enumerate(entry.strings)}
            for name, rt, ht, value in items:
                ij = []
                for t in (rt, ht):
                    i = where.get(t)
                    if i is None:
                        i = where[t] = len(entry.strings)
                        entry.strings.append(t)
                    ij.append(i)
                getattr(entry, name)[(ij[0], ij[1])] = value
            if entry.size() > self._sizes[source]:
                self._write(self._digests[source], entry)
                self._sizes[source] = entry.size()
                written += 1
            del entry, items, where
        self._written += written
        self._computed, self._known = cache.computed, len(known)
        return written

    def _write(self, digest: str, entry: _Entry) -> None:
        tags: dict[str, int] = {}
        lengths = [len(v) for v in entry.ops.values()]
        rows = [(tags.setdefault(t, len(tags)), a, b, c, d) for v in entry.ops.values() for t, a, b, c, d in v]
        doc = {"format": FORMAT, "norm": entry.norm, "strings": entry.strings, "tags": list(tags)}
        arrays = {
            "ops_keys": np.asarray(list(entry.ops), dtype=np.int64).reshape(-1, 2),
            "ops_lengths": np.asarray(lengths, dtype=np.int64),
            "ops_rows": np.asarray(rows, dtype=np.int64).reshape(-1, 5),
            "errors": _pairs(entry.errors),
            "merged": _pairs(entry.merged),
        }
        self._atomic_write(self._path(digest), doc, arrays)

    def _atomic_write(self, target: Path, doc: object, arrays: Mapping[str, np.ndarray]) -> None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".npz")
            os.close(fd)
            try:
                _dump(Path(tmp), doc, arrays)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return  # a read-only or full cache directory costs speed, never the run

    def stats(self) -> CacheStats:
        """Counters of this run (sources, warm sources, texts and pairs read back, entries written)."""
        files = len(self._digests) or self._set_files
        return CacheStats(files, self._warm, self._texts, self._pairs, self._written, self._columns)
