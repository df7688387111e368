"""A normalized prediction set as columns, mined without row objects (refdis at leaderboard scale).

What mining and scoring read are the normalized texts and what was computed on them (the difflib
opcodes of each aligned (reference, hypothesis) pair, each pair's edit distance); neither the
files' JSON nor any row object is needed. :class:`Columns` holds exactly that, per clip and
model, as lists of strings and numpy arrays. Two ways in:

* **cold**: :func:`stream_columns` reads a prediction folder file by file (each file checked as
  :func:`~asr_audit.corpus.predfiles.load_predictions` checks it, then dropped), with the
  hypotheses normalized in forked :class:`Workers` while the next file is read;
* **warm**: the persistent text cache (:mod:`asr_audit.text.persist`) stores the columns under a
  key naming every prediction file's bytes, so a re-run with other parameters reads one entry.

:func:`run_refdis_columns` scores them with the very functions of the plain path
(:func:`~asr_audit.probes.predfiles.refdis.mine_clip` through
:func:`~asr_audit.probes.predfiles.refdis.mine_edits` and
:func:`~asr_audit.probes.predfiles.refdis.finish_mining`,
:func:`~asr_audit.probes.predfiles.inflation.apply_edits`,
:func:`~asr_audit.probes.predfiles.inflation.inflations_from_columns`,
:func:`~asr_audit.probes.predfiles.refdis_score.assemble_result`), so its result is the plain
path's byte for byte (``tests/probes/predfiles/test_refdis_columns.py``). What it adds:

* a pre-filter (:func:`candidate_clips`): from the panel's opcodes it computes, with array
  operations over every clip at once, which clips *can* yield an edit under the run's
  parameters (a reference word missed by at least the threshold of eligible members, at an edge
  unless interior runs are kept; or as many members inserting at an edge). The test is
  conservative: a clip it drops is one :func:`~asr_audit.probes.predfiles.refdis.mine_clip`
  would return no edit for, so the edits, verdicts and their order are unchanged;
* chunks: the kept clips are mined :data:`CHUNK_CLIPS` at a time, each chunk with its own
  alignment cache, while the workers align the next chunk's pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.adequacy import PanelAdequacy, base_counts, panel_adequacy
from asr_audit.probes.predfiles.inflation import Inflation, apply_edits, inflations_from_columns
from asr_audit.probes.predfiles.refdis import (
    CONSENSUS,
    REF,
    ClipInput,
    Edit,
    Mining,
    RefdisParams,
    Verdict,
    _emits,
    closeness_of,
    finish_mining,
    loo_members,
    mine_edits,
    span_closeness,
)
from asr_audit.probes.predfiles.refdis_options import check_panel
from asr_audit.probes.predfiles.refdis_result import RefdisResult
from asr_audit.probes.predfiles.verified import Verification, Verify, verify_mining
from asr_audit.text.align import (
    AlignmentCache,
    Opcode,
    Tokens,
    edit_distances,
    opcodes,
    ops_inserted,
    ops_matched,
    ops_span,
)

FORMAT = 2  # 2: a set is stored only once its files passed the clip-id overlap check (issue 29)
TAGS = ("equal", "replace", "delete", "insert")
_CODE = {t: i for i, t in enumerate(TAGS)}
_EQUAL, _REPLACE, _DELETE, _INSERT = range(4)
_TAG_OBJECTS = np.array(TAGS, dtype=object)  # tag code -> tag string, for fancy indexing


class PairOps:
    """One model's known opcodes, in parts: each part is ``(clip, rows)``, ``rows[k] = (tag code,
    i1, i2, j1, j2)`` of clip ``clip[k]``, sorted by clip (opcode order within a clip); no clip is
    in two parts. ``has`` marks the clips with opcodes."""

    __slots__ = ("parts", "has")

    def __init__(self, n: int, clip: np.ndarray | None = None, rows: np.ndarray | None = None) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.has = np.zeros(n, dtype=bool)
        if clip is not None and rows is not None and len(clip):
            self.parts.append((clip, rows))
            self.has[clip] = True

    def add(self, new: Mapping[int, Sequence[Sequence[int]]]) -> None:
        """Add ``new``: clip index -> its opcode rows (tag code, i1, i2, j1, j2), for clips that had none."""
        new = {c: r for c, r in new.items() if len(r)}
        if not new:
            return
        order = sorted(new)
        clip = np.repeat(np.asarray(order, dtype=np.int32), [len(new[c]) for c in order])
        rows = np.asarray([row for c in order for row in new[c]], dtype=np.int32).reshape(-1, 5)
        self.parts.append((clip, rows))
        self.has[order] = True

    def add_arrays(self, clips: Sequence[int], lengths: np.ndarray, rows: np.ndarray) -> None:
        """Add the opcodes of ``clips`` (ascending, none known yet): ``lengths[k]`` rows each, in order."""
        if not len(rows):
            return
        clip = np.repeat(np.asarray(clips, dtype=np.int32), lengths)
        self.parts.append((clip, rows))
        self.has[clip] = True

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """All parts as one ``(clip, rows)``, sorted by clip."""
        if len(self.parts) != 1:
            if not self.parts:
                return np.zeros(0, np.int32), np.zeros((0, 5), np.int32)
            clip = np.concatenate([c for c, _ in self.parts])
            rows = np.concatenate([r for _, r in self.parts])
            order = np.argsort(clip, kind="stable")
            self.parts = [(clip[order], rows[order])]
        return self.parts[0]

    def of(self, clips: np.ndarray) -> dict[int, tuple[Opcode, ...]]:
        """The opcode tuples of ``clips`` (ascending clip indices), as :func:`align` gives them.

        Only the wanted clips' rows are converted: each clip's block is found by binary search
        (a warm run asks for a third of the clips); the rows become tuples column by column
        (``zip`` over the columns' lists) and each clip's block one slice of them."""
        out: dict[int, tuple[Opcode, ...]] = {}
        if not len(clips):
            return out
        for clip, rows in self.parts:
            lo = np.searchsorted(clip, clips, side="left")
            count = np.searchsorted(clip, clips, side="right") - lo
            hit = count > 0
            if not hit.any():
                continue
            lo, count = lo[hit], count[hit]
            ends = np.cumsum(count)
            block = rows[np.repeat(lo - (ends - count), count) + np.arange(int(ends[-1]))]
            _, i1, i2, j1, j2 = block.T.tolist()
            flat = list(zip(_TAG_OBJECTS[block[:, 0]].tolist(), i1, i2, j1, j2))
            stop = ends.tolist()
            cuts = map(slice, [0, *stop[:-1]], stop)
            out.update(zip(clips[hit].tolist(), map(tuple, map(flat.__getitem__, cuts))))
        return out


@dataclass(slots=True)
class Columns:
    """A prediction set normalized, as columns (see the module docstring).

    ``refs[i]`` / ``hyps[model][i]`` are clip ``clip_ids[i]``'s normalized reference and
    hypothesis, tokens joined by one space (``None``: no hypothesis); ``errors`` / ``merged``
    each pair's edit distance (without / with merged compounds; -1 where not computed) and
    ``ops`` its opcodes where known. ``hyps`` holds the models a run normalized; ``models`` every
    file's model, in file order. ``changed`` says that a run added results (write it back).
    """

    models: list[str]
    clip_ids: list[str]
    refs: list[str]
    hyps: dict[str, list[str | None]]
    errors: dict[str, np.ndarray]
    merged: dict[str, np.ndarray]
    ops: dict[str, PairOps]
    changed: bool = False
    _ref_len: np.ndarray | None = field(default=None, repr=False)
    _present: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return len(self.clip_ids)

    @property
    def ref_len(self) -> np.ndarray:
        """Reference length (tokens) per clip."""
        if self._ref_len is None:
            self._ref_len = np.fromiter((r.count(" ") + 1 if r else 0 for r in self.refs), np.int64, self.n)
        return self._ref_len

    def present(self, model: str) -> np.ndarray:
        """Which clips ``model`` answered (a hypothesis, possibly empty)."""
        got = self._present.get(model)
        if got is None:
            got = self._present[model] = np.fromiter((h is not None for h in self.hyps[model]), bool, self.n)
        return got

    def to_data(self) -> dict[str, Any]:
        """The plain dict the text cache stores."""
        return {
            "format": FORMAT,
            "models": self.models,
            "clip_ids": self.clip_ids,
            "refs": self.refs,
            "hyps": self.hyps,
            "errors": self.errors,
            "merged": self.merged,
            "ops": {m: o.merged() for m, o in self.ops.items()},
        }

    @classmethod
    def from_data(cls, data: object) -> Columns | None:
        """The columns a :meth:`to_data` dict holds; ``None`` for anything else (a damaged entry)."""
        try:
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                return None
            cols = cls(
                list(data["models"]),
                list(data["clip_ids"]),
                list(data["refs"]),
                dict(data["hyps"]),
                dict(data["errors"]),
                dict(data["merged"]),
                {},
            )
            n = cols.n
            for m, (c, r) in data["ops"].items():
                clip, rows = np.asarray(c, np.int32), np.asarray(r, np.int32).reshape(-1, 5)
                if len(clip) != len(rows) or (len(clip) and (clip.min() < 0 or clip.max() >= n)):
                    return None
                cols.ops[m] = PairOps(n, clip, rows)
            if len(cols.refs) != n or any(len(h) != n for h in cols.hyps.values()):
                return None
            if not set(cols.hyps) <= set(cols.errors) & set(cols.merged) & set(cols.ops) <= set(cols.models):
                return None
            if any(len(a) != n for a in (*cols.errors.values(), *cols.merged.values())):
                return None
            return cols
        except (KeyError, TypeError, ValueError):
            return None


def columns_from_run(
    models: Sequence[str],
    clips: Sequence[ClipInput],
    normalized: Sequence[str],
    cache: AlignmentCache,
) -> Columns:
    """The columns of a plain run: its clips (every clip of the set, in order, with the
    ``normalized`` models' hypotheses) and what its cache computed for them."""
    n = len(clips)
    refs = [" ".join(c.ref) for c in clips]
    hyps: dict[str, list[str | None]] = {}
    errors: dict[str, np.ndarray] = {}
    merged: dict[str, np.ndarray] = {}
    ops: dict[str, PairOps] = {}
    joined: dict[int, str] = {}  # id(token tuple) -> text: the cache shares one tuple per text
    for m in normalized:
        col: list[str | None] = []
        err = np.full(n, -1, dtype=np.int64)
        mer = np.full(n, -1, dtype=np.int64)
        found: dict[int, list[tuple[int, int, int, int, int]]] = {}
        for i, c in enumerate(clips):
            h = c.hyps.get(m)
            if h is None:
                col.append(None)
                continue
            text = joined.get(id(h))
            if text is None:
                text = joined[id(h)] = " ".join(h)
            col.append(text)
            if not c.ref:
                continue
            if (e := cache.peek_errors(c.ref, h)) is not None:
                err[i] = e
            if (e := cache.peek_errors(c.ref, h, merge_compounds=True)) is not None:
                mer[i] = e
            if (o := cache.peek_opcodes(c.ref, h)) is not None:
                found[i] = [(_CODE[t], i1, i2, j1, j2) for t, i1, i2, j1, j2 in o]
        hyps[m], errors[m], merged[m] = col, err, mer
        ops[m] = PairOps(n)
        ops[m].add(found)
    return Columns(list(models), [c.clip_id for c in clips], refs, hyps, errors, merged, ops, changed=True)


def isolated_in_columns(cols: Columns, panel: Sequence[str]) -> list[str]:
    """:func:`~asr_audit.probes.predfiles.refdis_run.isolated_panel_members` on columns."""
    if len(panel) < 2:
        return []
    answered = {m: cols.present(m) for m in panel}
    out = []
    for m in panel:
        others = np.logical_or.reduce([answered[o] for o in panel if o != m])
        if not (answered[m] & others).any():
            out.append(m)
    return out


# ----------------------------------------------------------------------------- workers

_WORKER_NORMALIZE: Any = None  # set before the pool forks; the workers inherit it, never pickled


def _w_normalize(texts: list[str]) -> list[str]:
    """Normalized texts, tokens joined by one space (what the columns store)."""
    normalize = _WORKER_NORMALIZE
    return [" ".join(normalize(t).split()) for t in texts]


def _w_opcodes(pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's difflib opcodes (as :func:`~asr_audit.text.align.align` gives them) as code rows:
    ``(rows per pair, rows)``, int32 arrays (compact to send back from a worker)."""
    lengths: list[int] = []
    flat: list[tuple[int, int, int, int, int]] = []
    code = _CODE
    for ref, hyp in pairs:
        if ref == hyp:  # what align() answers without aligning (texts are tokens joined by one space)
            n = ref.count(" ") + 1 if ref else 0
            ops = [(_EQUAL, 0, n, 0, n)] if n else []
        else:
            ops = [(code[t], i1, i2, j1, j2) for t, i1, i2, j1, j2 in opcodes(ref.split(), hyp.split())]
        lengths.append(len(ops))
        flat.extend(ops)
    return np.asarray(lengths, dtype=np.int32), np.asarray(flat, dtype=np.int32).reshape(-1, 5)


def _w_errors(pairs: list[tuple[str, str]], merge_compounds: bool = False) -> list[int]:
    """Each pair's edit distance (:meth:`AlignmentCache.errors`)."""
    if not merge_compounds:  # what a fresh cache computes for each pair, without its memo tables
        out = [0] * len(pairs)  # equal texts: distance 0
        todo = [i for i, (r, h) in enumerate(pairs) if r != h]
        for i, d in zip(todo, edit_distances((pairs[i][0].split(), pairs[i][1].split()) for i in todo)):
            out[i] = d
        return out
    cache = AlignmentCache()
    return [cache.errors(tuple(r.split()), tuple(h.split()), merge_compounds) for r, h in pairs]


def _w_merged(pairs: list[tuple[str, str]]) -> list[int]:
    return _w_errors(pairs, True)


class Workers:
    """Forked processes for a cold run's heavy steps (normalizing, aligning, edit distances), or
    the calling process alone (``n <= 1``, or no ``fork``). Results come back in order, so a run
    gives the same result with any number of workers. Use as a context manager."""

    CHUNK = 2000  # items per task

    def __init__(self, n: int, normalize: Any = None) -> None:
        import multiprocessing

        self.pool: Any = None
        self.normalize = normalize
        if n > 1 and "fork" in multiprocessing.get_all_start_methods():
            global _WORKER_NORMALIZE
            _WORKER_NORMALIZE = normalize
            self.pool = multiprocessing.get_context("fork").Pool(n)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        global _WORKER_NORMALIZE
        _WORKER_NORMALIZE = None
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None

    def _chunks(self, items: list[Any]) -> list[list[Any]]:
        size = self.CHUNK
        return [items[i : i + size] for i in range(0, len(items), size)]

    def map(self, func: Any, items: list[Any]) -> list[Any]:
        """``func`` over chunks of ``items``, flattened, in order."""
        return self.map_async(func, items)()

    def map_chunks_async(self, func: Any, items: list[Any]) -> Any:
        """Start ``func`` over chunks of ``items``; the returned callable waits for and returns
        the chunks' results, in order."""
        chunks = self._chunks(items)
        if self.pool is None or len(chunks) < 2:
            done = [func(chunk) for chunk in chunks]
            return lambda: done
        pending = self.pool.map_async(func, chunks, chunksize=1)
        got: list[Any] = []

        def wait() -> list[Any]:
            if not got:
                got.extend(pending.get())
            return got

        return wait

    def map_async(self, func: Any, items: list[Any]) -> Any:
        """Start :meth:`map`; the returned callable waits for and returns its result."""
        global _WORKER_NORMALIZE
        chunks = self._chunks(items)
        if self.pool is None or len(chunks) < 2:
            _WORKER_NORMALIZE = self.normalize
            try:
                done = [x for chunk in chunks for x in func(chunk)]
            finally:
                _WORKER_NORMALIZE = None
            return lambda: done
        pending = self.pool.map_async(func, chunks, chunksize=1)
        return lambda: [x for part in pending.get() for x in part]


# ----------------------------------------------------------------------------- streamed loading


class StreamMiss(Exception):
    """A streamed read met what the plain path must report (a second file for a model, a
    reference conflict): run the plain path, which raises its one-line error."""


def stream_columns(
    path: str | Path,
    dataset: str | None,
    workers: Workers,
    normalized: Sequence[str] | None = None,
) -> Columns:
    """Read a prediction folder file by file into columns, keeping no row objects.

    Each file is read and checked as :func:`~asr_audit.corpus.predfiles.load_predictions` reads
    it, its hypotheses are handed to ``workers`` to normalize (``workers.normalize``, the run's
    composed normalizer) while the next file is read, and only the normalized texts are kept
    (for the models in ``normalized``; all when ``None``). Each distinct text is normalized once
    for the whole set: a hypothesis another model (or a reference) already gave, verbatim, reuses
    that text's normalized string (the normalizer is a pure function of the text), so equal
    texts also share one string object. References are normalized at the end, those not already
    seen as a hypothesis. Raises the loaders' errors, and :class:`StreamMiss` where the plain
    path names two files in its error.
    """
    from asr_audit.corpus.predfiles import read_prediction_file, select_prediction_files
    from asr_audit.corpus.reading import DEFAULT_MIN_ID_OVERLAP, check_id_overlap

    found, _ = select_prediction_files(path, dataset)
    models = [n.model for _, n in found]
    if len(set(models)) != len(models):
        raise StreamMiss("a model has two files")
    want = set(models) if normalized is None else set(normalized)
    refs: dict[str, str] = {}
    ids: dict[str, str] = {}  # one clip id object for every file
    got: dict[str, tuple[list[str], list[str | None]]] = {}
    pending: tuple[str, list[str], list[str | None], list[str], Any] | None = None
    # raw text -> normalized text, over every file; "" while a worker still has it (batches
    # finish in order, so a text is filled in before any later batch reads it)
    table: dict[str, str] = {}

    def finish(p: tuple[str, list[str], list[str | None], list[str], Any]) -> None:
        model, cids, texts, distinct, result = p
        table.update(zip(distinct, result()))
        got[model] = (cids, [None if t is None else table[t] for t in texts])

    per_file: list[tuple[Path, list[str]]] = []  # each file's clip ids, for the overlap check
    for file_path, name in found:
        pf = read_prediction_file(file_path, name)
        cids: list[str] = []
        per_file.append((file_path, cids))
        for cid, row in pf.rows.items():
            cid = ids.setdefault(cid, cid)
            ref = row.reference.strip()
            if refs.setdefault(cid, ref) != ref:
                raise StreamMiss(f"clip {cid!r} has two references")
            cids.append(cid)
        if name.model in want:
            texts = [r.hypothesis for r in pf.rows.values()]
            distinct = [t for t in dict.fromkeys(texts) if t is not None and t not in table]
            table.update(dict.fromkeys(distinct, ""))
            result = workers.map_async(_w_normalize, distinct)
            if pending is not None:
                finish(pending)
            pending = (name.model, cids, texts, distinct, result)
        del pf
    if pending is not None:
        finish(pending)
    check_id_overlap(per_file, DEFAULT_MIN_ID_OVERLAP)  # as load_predictions checks it
    del per_file
    clip_ids = sorted(refs)
    raw = [refs[c] for c in clip_ids]
    del refs
    distinct = [r for r in dict.fromkeys(raw) if r not in table]
    table.update(zip(distinct, workers.map(_w_normalize, distinct)))
    ref_col = [table[r] for r in raw]
    del raw
    table.clear()  # the raw texts (the columns keep the normalized ones)
    where = {c: i for i, c in enumerate(clip_ids)}
    n = len(clip_ids)
    hyps: dict[str, list[str | None]] = {}
    for model in models:
        if model not in got:
            continue
        cids, norm = got.pop(model)
        col: list[str | None] = [None] * n
        for c, t in zip(cids, norm):
            col[where[c]] = t
        hyps[model] = col
    errors = {m: np.full(n, -1, dtype=np.int64) for m in hyps}
    merged = {m: np.full(n, -1, dtype=np.int64) for m in hyps}
    return Columns(models, clip_ids, ref_col, hyps, errors, merged, {m: PairOps(n) for m in hyps}, changed=True)


# ----------------------------------------------------------------------------- mining


@dataclass(slots=True)
class _Panel:
    """Per panel model, the arrays :func:`candidate_clips` reads (built once per run)."""

    eligible: np.ndarray  # bool (n,): answered, and matched >= int(min_ref_match * n)
    miss_start: np.ndarray  # global reference positions where a delete / replace run starts (eligible clips)
    miss_stop: np.ndarray
    ins_clip: np.ndarray  # clips of its insert opcodes (eligible clips)
    ins_at: np.ndarray  # their i1


def _panel_arrays(cols: Columns, model: str, params: RefdisParams, ref_off: np.ndarray) -> _Panel:
    n, ref_len = cols.n, cols.ref_len
    ops = cols.ops[model]
    c, r = ops.merged()
    tag = r[:, 0]
    eq = tag == _EQUAL
    matched = np.bincount(c[eq], weights=(r[eq, 2] - r[eq, 1]), minlength=n)
    min_matched = np.floor(params.min_ref_match * ref_len.astype(np.float64))  # int() of a non-negative float
    eligible = cols.present(model) & (ref_len > 0) & ops.has & (matched >= min_matched)
    on = eligible[c]
    miss = on & ((tag == _REPLACE) | (tag == _DELETE))
    base = ref_off[c[miss]]
    ins = on & (tag == _INSERT)
    return _Panel(eligible, base + r[miss, 1], base + r[miss, 2], c[ins], r[ins, 1])


def candidate_clips(cols: Columns, members: Sequence[_Panel], params: RefdisParams, ref_off: np.ndarray) -> np.ndarray:
    """Which clips can yield an edit when ``members`` mine (bool per clip; see the module docstring).

    :func:`~asr_audit.probes.predfiles.refdis.mine_clip` returns no edit for a clip whose
    eligible members are fewer than ``min_panel``, or where no reference word is missed by at
    least ``threshold`` of them (at index 0 or ``n - 1`` unless interior runs are kept: a kept
    run starts at 0 or ends at ``n - 1``) and fewer than ``threshold`` of them insert at either
    edge (an insertion chunk's first word needs that many votes).
    """
    n, ref_len = cols.n, cols.ref_len
    total = int(ref_off[-1])
    count = np.zeros(n, dtype=np.int64)
    diff = np.zeros(total + 1, dtype=np.int64)
    ins0 = np.zeros(n, dtype=np.int64)
    ins_n = np.zeros(n, dtype=np.int64)
    for p in members:
        count += p.eligible
        diff += np.bincount(p.miss_start, minlength=total + 1)
        diff -= np.bincount(p.miss_stop, minlength=total + 1)
        ins0 += np.bincount(p.ins_clip[p.ins_at == 0], minlength=n)
        ins_n += np.bincount(p.ins_clip[p.ins_at == ref_len[p.ins_clip]], minlength=n)
    threshold = np.maximum(2, np.ceil(params.majority * count - 1e-9))  # refdis._threshold, elementwise
    votes = np.cumsum(diff[:total])
    pos_clip = np.repeat(np.arange(n), ref_len)
    hit = votes >= threshold[pos_clip]
    nonempty = ref_len > 0
    if params.include_middle:
        runs = np.bincount(pos_clip[hit], minlength=n) > 0
    else:
        runs = np.zeros(n, dtype=bool)
        runs[nonempty] = hit[ref_off[:-1][nonempty]] | hit[ref_off[1:][nonempty] - 1]
    return nonempty & (count >= params.min_panel) & (runs | (ins0 >= threshold) | (ins_n >= threshold))


def _fetch_ops(cols: Columns, models: Sequence[str], clips: np.ndarray, workers: Workers) -> Any:
    """Start computing the opcodes ``models`` lack on ``clips`` (answered, non-empty reference),
    one batch for all of them; the returned callable waits and adds them to ``cols``."""
    todo: list[tuple[str, list[int]]] = []
    need: list[tuple[str, str]] = []
    refs = cols.refs
    for m in models:
        ops = cols.ops[m]
        mine = clips[~ops.has[clips] & cols.present(m)[clips] & (cols.ref_len[clips] > 0)].tolist()
        if mine:
            hyps = cols.hyps[m]
            todo.append((m, mine))
            need.extend((refs[i], hyps[i] or "") for i in mine)
    if not need:
        return lambda: None
    distinct, inv = _distinct_pairs(need)  # models that agree on a clip share its alignment
    del need
    pending = workers.map_chunks_async(_w_opcodes, distinct)

    def finish() -> None:
        lengths = np.concatenate([a for a, _ in pending()])
        rows = np.concatenate([b for _, b in pending()])
        if inv is not None:
            lengths, rows = _expand_rows(lengths, rows, inv)
        starts = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        at = 0
        for m, mine in todo:
            k = len(mine)
            cols.ops[m].add_arrays(mine, lengths[at : at + k], rows[starts[at] : starts[at + k]])
            at += k
        cols.changed = True

    return finish


def _distinct_pairs(pairs: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], np.ndarray | None]:
    """The distinct pairs of ``pairs`` (first-seen order) and each pair's index among them
    (``None`` when every pair is distinct). What the workers compute is a function of the pair
    alone, so computing each distinct pair once and copying it gives the same values."""
    index: dict[tuple[str, str], int] = {}
    setdefault = index.setdefault
    inv = [setdefault(p, len(index)) for p in pairs]
    if len(index) == len(pairs):
        return pairs, None
    return list(index), np.asarray(inv, dtype=np.int64)


def _expand_rows(lengths: np.ndarray, rows: np.ndarray, inv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Opcode rows of distinct pairs (``lengths[k]`` rows each) laid out for the pairs ``inv``
    (pair ``p`` is distinct pair ``inv[p]``)."""
    starts = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])[:-1]
    out_len = lengths[inv]
    out_starts = np.concatenate([[0], np.cumsum(out_len, dtype=np.int64)])[:-1]
    take = np.repeat(starts[inv] - out_starts, out_len) + np.arange(int(out_len.sum()), dtype=np.int64)
    return out_len, rows[take]


ERROR_BLOCK = 8192  # clips whose pairs (every model's) are deduplicated and sent to the workers at once


def _ensure_all_errors(cols: Columns, models: Sequence[str], merge_compounds: bool, workers: Workers) -> None:
    """:func:`_ensure_errors` for every one of ``models``, in blocks of :data:`ERROR_BLOCK` clips
    whose distinct (reference, hypothesis) pairs are computed once (models that agree on a clip
    share its edit distance)."""
    table = cols.merged if merge_compounds else cols.errors
    func = _w_merged if merge_compounds else _w_errors
    refs, has_ref = cols.refs, cols.ref_len > 0
    need = {m: np.flatnonzero(cols.present(m) & has_ref & (table[m] < 0)) for m in models}
    if not any(len(v) for v in need.values()):
        return
    pending = []
    for lo in range(0, cols.n, ERROR_BLOCK):
        parts: list[tuple[str, np.ndarray]] = []
        pairs: list[tuple[str, str]] = []
        for m, idx in need.items():
            part = idx[np.searchsorted(idx, lo) : np.searchsorted(idx, lo + ERROR_BLOCK)]
            if len(part):
                hyps = cols.hyps[m]
                parts.append((m, part))
                pairs.extend((refs[i], hyps[i] or "") for i in part.tolist())
        if pairs:
            distinct, inv = _distinct_pairs(pairs)
            pending.append((parts, inv, workers.map_async(func, distinct)))
    for parts, inv, result in pending:
        got = np.asarray(result(), dtype=np.int64)
        if inv is not None:
            got = got[inv]
        at = 0
        for m, part in parts:
            table[m][part] = got[at : at + len(part)]
            at += len(part)
    cols.changed = True


def _ensure_errors(cols: Columns, model: str, merge_compounds: bool, workers: Workers) -> np.ndarray:
    """``model``'s edit distances on every answered clip with a reference, computing what is missing."""
    err = (cols.merged if merge_compounds else cols.errors)[model]
    need = np.flatnonzero(cols.present(model) & (cols.ref_len > 0) & (err < 0)).tolist()
    if need:
        hyps, refs = cols.hyps[model], cols.refs
        got = workers.map(_w_merged if merge_compounds else _w_errors, [(refs[i], hyps[i] or "") for i in need])
        err[need] = got
        cols.changed = True
    return err


def _check(cols: Columns, source: str, panel: Sequence[str], models: Sequence[str], params: RefdisParams) -> None:
    """The checks :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis` makes, in its order."""
    for m in [*panel, *models]:
        if m not in cols.models:
            raise ConfigError(f"model {m!r} has no prediction file in {source}; available: {', '.join(cols.models)}")
    check_panel(params, panel, models)


CHUNK_CLIPS = 4096  # clips whose alignments are held at once


def run_refdis_columns(
    cols: Columns,
    panel: Sequence[str],
    params: RefdisParams,
    *,
    normalizer: dict[str, Any],
    source: str,
    models: Sequence[str] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    merge_compounds: bool = False,
    workers: Workers | None = None,
    mine_workers: int = 1,
    verify: Verify | None = None,
) -> RefdisResult | None:
    """:func:`~asr_audit.probes.predfiles.refdis_run.run_refdis` (consensus mode) on columns.

    ``normalizer`` is the result's normalizer record, ``source`` the set's path as given. Returns
    ``None`` when the columns lack a model's normalized texts (a run with ``--models`` cached
    only those): the caller runs the plain path. Results computed here (with ``workers``, if
    given) are added to ``cols`` (``cols.changed``). Clips are mined :data:`CHUNK_CLIPS` at a
    time, each chunk with its own alignment cache, so memory holds one chunk's alignments; with
    ``mine_workers > 1`` (and at least :data:`MINE_PARALLEL_CLIPS` candidate clips) the chunks
    are mined in that many forked processes, their results merged in chunk order (the same
    result: a clip's edits depend on that clip alone). ``verify``: as for ``run_refdis``.
    """
    from asr_audit.probes.predfiles.refdis_score import assemble_result, clips_with_edits

    models = list(models) if models is not None else list(cols.models)
    _check(cols, source, panel, models, params)
    everyone = list(dict.fromkeys([*models, *panel]))
    if any(m not in cols.hyps for m in everyone):
        return None
    workers = workers or Workers(1)
    n, ref_len = cols.n, cols.ref_len
    ref_off = np.concatenate([[0], np.cumsum(ref_len)])
    nonempty = np.flatnonzero(ref_len > 0)
    _fetch_ops(cols, panel, nonempty, workers)()  # the panel's alignments on every clip
    arrays = {m: _panel_arrays(cols, m, params, ref_off) for m in panel}
    wanted: dict[str | None, np.ndarray] = {None: candidate_clips(cols, list(arrays.values()), params, ref_off)}
    for held in loo_members(panel, models, params):
        wanted[held] = candidate_clips(cols, [arrays[p] for p in panel if p != held], params, ref_off)
    del arrays
    idx = np.flatnonzero(np.logical_or.reduce(list(wanted.values())))
    ids = cols.clip_ids
    candidates = {k: {ids[i] for i in np.flatnonzero(v).tolist()} for k, v in wanted.items()}
    columns, counted = [], []
    _ensure_all_errors(cols, models, merge_compounds, workers)
    for m in models:
        col, k = _base_columns(cols, m, _ensure_errors(cols, m, merge_compounds, workers))
        columns.append(col)
        counted.append(k)
    base = [c.copy() for c in columns]  # before any edit: the verified inflation and panel adequacy start here
    rows = np.flatnonzero(ref_len > 0)
    # Without an operating point every mined edit is scored (the repeat evidence changes no edit's
    # correction), so each chunk's corrected WER is counted while its clips are at hand.
    at_once = params.min_confidence is None
    held_out = loo_members(panel, models, params)
    found: tuple[list[Edit], dict[str, list[Edit]]] = ([], {h: [] for h in held_out})
    job = _MineJob(cols, everyone, list(panel), models, params, candidates, held_out, rows, columns, merge_compounds)
    if _can_fork(mine_workers, len(idx)):
        # every model is judged on a mined clip: align what is missing here (the text cache keeps
        # it), then the forked processes mine the chunks; results are merged in chunk order
        _fetch_ops(cols, everyone, idx, workers)()
        chunks = _chunks(idx, min(CHUNK_CLIPS, -(-len(idx) // (4 * mine_workers))))
        global _MINE
        _MINE = (job, chunks, at_once)  # before the fork: the processes inherit it
        try:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(mine_workers) as pool:
                for k, (edits, loo, fixed) in enumerate(pool.imap(_w_mine, range(len(chunks)))):
                    _merge_chunk(found, edits, loo, fixed, columns, np.searchsorted(rows, chunks[k]))
        finally:
            _MINE = None
    else:
        chunks = _chunks(idx)
        # every model is judged on a mined clip: the workers align them all, a chunk ahead of the mining
        ahead: Any = _fetch_ops(cols, everyone, chunks[0], workers) if chunks else None
        for k, chunk in enumerate(chunks):
            ahead()
            ahead = _fetch_ops(cols, everyone, chunks[k + 1], workers) if k + 1 < len(chunks) else None
            edits, loo, fixed = _mine_chunk(job, chunk, at_once)
            _merge_chunk(found, edits, loo, fixed, columns, np.searchsorted(rows, chunk))
    mining = finish_mining(*found, dict(zip(ids, cols.refs)), params)
    del found
    scored = {m: mining.scored_edits(m) for m in models}
    with_edits = clips_with_edits(mining)
    where = {cid: i for i, cid in enumerate(ids)}
    edited = np.array(sorted(where[c] for c in with_edits), dtype=np.int64)
    if not at_once:
        for chunk in _chunks(edited):
            clips = _clip_inputs(cols, chunk, everyone, None)
            _fix_rows(clips, chunk, rows, models, columns, scored, AlignmentCache(), merge_compounds)
    inflations = inflations_from_columns(models, columns, counted, len(rows), np.random.default_rng(seed), n_resamples)
    verification: Verification | None = None
    verified: Mapping[str, Inflation] = {}
    if verify is not None:

        def inflate(edits: Mapping[str, Sequence[Edit]]) -> Mapping[str, Inflation]:
            fixed = [c.copy() for c in base]
            touched = np.array(
                sorted(where[c] for es in edits.values() for c in {e.clip_id for e in es}), dtype=np.int64
            )
            for chunk in _chunks(touched):
                clips = _clip_inputs(cols, chunk, everyone, None)
                _fix_rows(clips, chunk, rows, models, fixed, edits, AlignmentCache(), merge_compounds)
            return inflations_from_columns(models, fixed, counted, len(rows), np.random.default_rng(seed), n_resamples)

        verification, verified = verify_mining(verify, mining, scored, inflate)
    adequacy = _adequacy(cols, edited, rows, everyone, models, panel, mining, scored, merge_compounds, workers)
    return assemble_result(
        mining,
        scored,
        inflations,
        models=models,
        panel=panel,
        params=params,
        normalizer=normalizer,
        mode="panel",
        source=source,
        n_clips=n,
        seed=seed,
        n_resamples=n_resamples,
        references={ids[i]: cols.refs[i] for i in edited.tolist()},
        merge_compounds=merge_compounds,
        verification=verification,
        verified_inflation=verified,
        adequacy=adequacy,
    )


def _adequacy(
    cols: Columns,
    edited: np.ndarray,
    rows: np.ndarray,
    everyone: Sequence[str],
    models: Sequence[str],
    panel: Sequence[str],
    mining: Mining,
    scored: Mapping[str, Sequence[Edit]],
    merge_compounds: bool,
    workers: Workers,
) -> PanelAdequacy:
    """:func:`~asr_audit.probes.predfiles.adequacy.panel_adequacy` on columns: the clips without an
    edit from each model's per-clip errors, the clips with one from their stored opcodes."""
    ids = cols.clip_ids
    row_ids = [ids[i] for i in rows.tolist()]
    with_edits = {ids[i] for i in edited.tolist()}
    base = {m: _base_columns(cols, m, _ensure_errors(cols, m, merge_compounds, workers))[0] for m in everyone}
    cache = AlignmentCache()
    clips = _clip_inputs(cols, edited, everyone, cache)

    def opcodes_of(model: str, clip: ClipInput) -> tuple[Opcode, ...]:
        hyp = clip.hyps[model]
        assert hyp is not None
        return cache.pair_opcodes(clip.ref, hyp)

    return panel_adequacy(
        clips,
        mining.edits,
        mining.loo_edits,
        scored,
        panel,
        models,
        base_counts(base, row_ids, with_edits),
        opcodes_of,
    )


def _chunks(idx: np.ndarray, size: int = CHUNK_CLIPS) -> list[np.ndarray]:
    return [idx[i : i + size] for i in range(0, len(idx), size)]


@dataclass(frozen=True, slots=True)
class _MineJob:
    """What mining a chunk of clips reads (:func:`_mine_chunk`); forked workers inherit it."""

    cols: Columns
    everyone: list[str]
    panel: list[str]
    models: list[str]
    params: RefdisParams
    candidates: dict[str | None, set[str]]
    held_out: list[str]
    rows: np.ndarray  # the clips with a reference (the inflation columns' rows)
    columns: list[np.ndarray]  # per model, the inflation columns before edits
    merge_compounds: bool


MINE_PARALLEL_CLIPS = 1024  # fewer candidate clips are mined in this process (forking costs more)
_MINE: Any = None  # (job, chunks, at_once), set before the mining pool forks; never pickled


def _can_fork(n: int, n_clips: int) -> bool:
    """Whether ``n`` forked processes mine ``n_clips`` candidate clips (else this process does)."""
    import multiprocessing

    return n > 1 and n_clips >= MINE_PARALLEL_CLIPS and "fork" in multiprocessing.get_all_start_methods()


def _w_mine(k: int) -> tuple[list[Edit], dict[str, list[Edit]], list[np.ndarray] | None]:
    job, chunks, at_once = _MINE
    return _mine_chunk(job, chunks[k], at_once)


def _mine_chunk(
    job: _MineJob, chunk: np.ndarray, at_once: bool
) -> tuple[list[Edit], dict[str, list[Edit]], list[np.ndarray] | None]:
    """Mine the clips ``chunk`` (with an alignment cache of their own): the full panel's edits,
    each held-out member's, and, when every mined edit is scored (``at_once``), each model's
    inflation columns on the chunk's rows with its edits applied (``None`` otherwise)."""
    cache = AlignmentCache()
    clips = _clip_inputs(job.cols, chunk, job.everyone, cache, seeded=job.panel)
    found: tuple[list[Edit], dict[str, list[Edit]]] = ([], {h: [] for h in job.held_out})
    judges: list[OpsJudge] = []

    def judge_with(models: list[str]) -> OpsJudge:
        judges.append(OpsJudge(models, job.params))
        return judges[-1]

    mine_edits(
        clips, job.panel, job.models, job.params, cache, candidates=job.candidates, into=found, judge_with=judge_with
    )
    _settle(job.cols, chunk, clips, judges, cache, job.panel)
    if not at_once:
        return found[0], found[1], None
    new, fresh = found
    scored_now = {m: fresh[m] if m in fresh else [e for e in new if m in e.scored] for m in job.models}
    pos = np.searchsorted(job.rows, chunk)
    local = [col[pos] for col in job.columns]  # copies: the chunk's rows, edited below
    here = np.arange(len(chunk))
    _fix_rows(clips, here, here, job.models, local, scored_now, cache, job.merge_compounds)
    return found[0], found[1], local


def _merge_chunk(
    found: tuple[list[Edit], dict[str, list[Edit]]],
    edits: list[Edit],
    loo: dict[str, list[Edit]],
    fixed: list[np.ndarray] | None,
    columns: Sequence[np.ndarray],
    pos: np.ndarray,
) -> None:
    """Append a chunk's edits to ``found`` and write its edited rows ``pos`` into ``columns``."""
    found[0].extend(edits)
    for h, v in loo.items():
        found[1][h].extend(v)
    if fixed is not None:
        for col, block in zip(columns, fixed):
            col[pos] = block


class OpsJudge:
    """:class:`~asr_audit.probes.predfiles.refdis.Judge` of ``models`` from the pairs' difflib
    opcodes, without :class:`~asr_audit.text.align.Alignment` objects, and deferred: :meth:`span`
    and :meth:`insertion` return an edit's (empty) verdict and rendering dicts and note the edit;
    :meth:`settle` fills every noted edit's dicts, in the models' order, with what
    :func:`~asr_audit.probes.predfiles.refdis.mine_clip` computes from alignments. So a chunk's
    opcodes are read for the models that are only judged on just the clips with edits (a
    fraction of the candidate clips), and no alignment is built for them."""

    __slots__ = ("models", "params", "exact", "noted")

    def __init__(self, models: Sequence[str], params: RefdisParams) -> None:
        self.models = list(models)
        self.params = params
        self.exact = params.exact_verdicts
        # (clip, start, stop, fix; or for an insertion: clip, anchor, -1, chunk), verdicts, renderings
        self.noted: list[tuple[ClipInput, int, int, Any, dict[str, Verdict], dict[str, str]]] = []

    def span(
        self, clip: ClipInput, start: int, stop: int, fix: tuple[int, int, Tokens]
    ) -> tuple[dict[str, Verdict], dict[str, str]]:
        verdicts: dict[str, Verdict] = {}
        renders: dict[str, str] = {}
        self.noted.append((clip, start, stop, fix, verdicts, renders))
        return verdicts, renders

    def insertion(self, clip: ClipInput, anchor: int, chunk: Tokens) -> tuple[dict[str, Verdict], dict[str, str]]:
        verdicts: dict[str, Verdict] = {}
        renders: dict[str, str] = {}
        self.noted.append((clip, anchor, -1, chunk, verdicts, renders))
        return verdicts, renders

    def settle(self, opcodes_of: Any) -> None:
        """Fill the noted edits' verdicts; ``opcodes_of(model, clip)`` gives a pair's opcodes."""
        exact, models = self.exact, self.models
        last: ClipInput | None = None
        pairs: list[tuple[str, Tokens | None, tuple[Opcode, ...]]] = []
        for clip, start, stop, fix, verdicts, renders in self.noted:
            ref = clip.ref
            if clip is not last:  # each model's eligibility on the clip: answered, matched enough
                last, pairs = clip, []
                min_matched = self.params.min_matched(len(ref))
                for m in models:
                    hyp = clip.hyps.get(m)
                    if hyp is None:
                        pairs.append((m, None, ()))
                        continue
                    ops = opcodes_of(m, clip)
                    pairs.append((m, hyp, ops) if ops_matched(ops) >= min_matched else (m, None, ()))
            if stop < 0:  # an insertion of ``fix`` (the chunk) at ``start`` (the anchor)
                at_start = start == 0
                for m, hyp, ops in pairs:
                    if hyp is None:
                        verdicts[m] = None
                        continue
                    said = ops_inserted(hyp, ops, start)
                    if exact:
                        verdicts[m] = CONSENSUS if _emits(said, fix, at_start) else REF
                    else:
                        verdicts[m] = closeness_of(ref, hyp, ops, start, start, fix)
                    renders[m] = " ".join(said)
                continue
            for m, hyp, ops in pairs:
                if hyp is None:
                    verdicts[m] = None
                    continue
                missed, renders[m] = ops_span(hyp, ops, start, stop)
                verdicts[m] = (
                    (CONSENSUS if missed else REF) if exact else span_closeness(ref, hyp, ops, start, stop, fix)
                )
        self.noted = []


def _settle(
    cols: Columns,
    chunk: np.ndarray,
    clips: Sequence[ClipInput],
    judges: Sequence[OpsJudge],
    cache: AlignmentCache,
    seeded: Sequence[str] = (),
) -> None:
    """Settle ``judges``' verdicts on ``clips`` (the clips ``chunk``), reading the stored opcodes of
    the clips with edits only; the pairs of the models ``seeded`` (whose opcodes :func:`_clip_inputs`
    seeded into ``cache``), and any pair without stored opcodes, are read from (or aligned in) ``cache``."""
    where = {c.clip_id: int(i) for c, i in zip(clips, chunk.tolist())}
    wanted: dict[str, set[int]] = {}
    for j in judges:
        at = {where[n[0].clip_id] for n in j.noted}
        for m in j.models:
            if m not in seeded:
                wanted.setdefault(m, set()).update(at)
    known = {m: cols.ops[m].of(np.array(sorted(at), dtype=np.int64)) for m, at in wanted.items() if at}

    def opcodes_of(model: str, clip: ClipInput) -> tuple[Opcode, ...]:
        ops = known[model].get(where[clip.clip_id]) if model in known else None
        if ops is None:
            hyp = clip.hyps[model]
            assert hyp is not None
            ops = cache.pair_opcodes(clip.ref, hyp)
        return ops

    for j in judges:
        j.settle(opcodes_of)


def _by_clip(edits: Sequence[Edit]) -> dict[str, list[Edit]]:
    out: dict[str, list[Edit]] = {}
    for e in edits:
        out.setdefault(e.clip_id, []).append(e)
    return out


def _clip_inputs(
    cols: Columns,
    idx: np.ndarray,
    everyone: Sequence[str],
    cache: AlignmentCache | None,
    seeded: Sequence[str] | None = None,
) -> list[ClipInput]:
    """ClipInputs of the clips ``idx``; with ``cache``, the known opcodes of their pairs are seeded
    into it (of the models ``seeded`` only, when given)."""
    some = set(everyone if seeded is None else seeded)
    known = {m: cols.ops[m].of(idx) if cache is not None and m in some else {} for m in everyone}
    seeds: dict[tuple[Tokens, Tokens], tuple[Opcode, ...]] = {}
    memo: dict[str, Tokens] = {}  # one tuple per text: pair look-ups then hit by identity

    def tok(text: str) -> Tokens:
        t = memo.get(text)
        if t is None:
            t = memo[text] = tuple(text.split())
        return t

    columns = [(m, cols.hyps[m], known[m]) for m in everyone]
    out = []
    for i in idx.tolist():
        ref = tok(cols.refs[i])
        hyps: dict[str, Tokens | None] = {}
        for m, col, ops in columns:
            h = col[i]
            if h is None:
                hyps[m] = None
                continue
            hyp = hyps[m] = tok(h)
            o = ops.get(i)
            if o is not None:
                seeds[(ref, hyp)] = o
        out.append(ClipInput(cols.clip_ids[i], ref, hyps))
    if cache is not None:
        cache.seed(seeds)
    return out


def _base_columns(cols: Columns, model: str, err: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`~asr_audit.probes.predfiles.inflation.inflation_columns` before edits: per clip with
    a reference, ``[errors, words, errors, words]`` (a missing hypothesis deletes every word)."""
    rows = np.flatnonzero(cols.ref_len > 0)
    answered = cols.present(model)[rows]
    lengths = cols.ref_len[rows]
    e = np.where(answered, err[rows], lengths)
    return np.stack([e, lengths, e, lengths], axis=1).astype(np.float64), int(answered.sum())


def _fix_rows(
    clips: Sequence[ClipInput],
    chunk: np.ndarray,
    rows: np.ndarray,
    models: Sequence[str],
    columns: Sequence[np.ndarray],
    scored: Mapping[str, Sequence[Edit]],
    cache: AlignmentCache,
    merge_compounds: bool,
) -> None:
    """Apply each model's ``scored`` edits on ``clips`` (the clips ``chunk``) to its ``columns``,
    as :func:`~asr_audit.probes.predfiles.inflation.inflation_columns` computes them.

    A row's corrected WER needs the edit distance of the corrected reference to the model's
    hypothesis; without merged compounds a model's pairs go to one
    :func:`~asr_audit.text.align.edit_distances` call (one token-key check for all of them): the
    numbers :meth:`AlignmentCache.errors` gives one at a time. Pairs are not deduplicated: only
    models writing the same text on a clip repeat one (2,266 of 34,370 rows in ``docs/scale.md``'s
    warm run), and finding them cost more than computing them."""
    pos = np.searchsorted(rows, chunk).tolist()
    # models scored on the same edits (every model but the held-out members) share their
    # clips' edit lists and corrected references: keyed by the identities of the edits
    groups: dict[tuple[int, ...], tuple[dict[str, list[Edit]], dict[str, Tokens]]] = {}
    for m, col in zip(models, columns):
        key = tuple(map(id, scored[m]))
        group = groups.get(key)
        if group is None:
            group = groups[key] = (_by_clip(scored[m]), {})
        own_edits, corrected = group
        if not own_edits:
            continue
        at: list[int] = []
        pairs: list[tuple[Tokens, Tokens]] = []
        for clip, p in zip(clips, pos):
            own = own_edits.get(clip.clip_id)
            if own is None:
                continue
            ref, hyp = clip.ref, clip.hyps.get(m)
            if hyp is None:
                fixed_len = len(apply_edits(ref, own))
                col[p] = (len(ref), len(ref), fixed_len, fixed_len)
                continue
            fixed = corrected.get(clip.clip_id)
            if fixed is None:
                fixed = corrected[clip.clip_id] = cache.intern(apply_edits(ref, own))
            at.append(p)
            pairs.append((fixed, hyp))
        if not at:
            continue
        if merge_compounds:
            col[at, 2] = [cache.errors(f, h, True) for f, h in pairs]
        else:
            col[at, 2] = edit_distances(pairs)
        col[at, 3] = [len(f) for f, _ in pairs]
