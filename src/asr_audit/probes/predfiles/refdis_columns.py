"""A normalized prediction set as columns, mined without rebuilding its rows (refdis' warm path).

A re-run of ``asr-audit refdis`` on the same prediction files with other parameters needs
neither the files' JSON nor any row object: what mining and scoring read are the normalized
texts and what was computed on them (the difflib opcodes of each aligned (reference,
hypothesis) pair, each pair's edit distance). :class:`Columns` holds exactly that, per clip and
model, as lists of strings and numpy arrays; the persistent text cache
(:mod:`asr_audit.text.persist`) stores it under a key naming every prediction file's bytes,
so a warm run reads one entry instead of parsing the files.

:func:`run_refdis_columns` scores it with the very functions of the plain path
(:func:`~asr_audit.probes.predfiles.refdis.mine`, :func:`~asr_audit.probes.predfiles.refdis.mine_clip`,
:func:`~asr_audit.probes.predfiles.inflation.inflations_from_columns`,
:func:`~asr_audit.probes.predfiles.refdis_run.assemble_result`), so its result is the plain
path's byte for byte (``tests/probes/predfiles/test_refdis_columns.py``). What it adds is a
pre-filter (:func:`candidate_clips`): from the panel's opcodes it computes, with array
operations over every clip at once, which clips *can* yield an edit under the run's parameters
(a reference word missed by at least the threshold of eligible members, at an edge unless
interior runs are kept; or as many members inserting at an edge) and builds alignments only for
those. The test is conservative: a clip it drops is one :func:`mine_clip` would return no edit
for, so the edits, verdicts and their order are unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.probes.predfiles.inflation import apply_edits, inflations_from_columns
from asr_audit.probes.predfiles.refdis import ClipInput, Edit, RefdisParams, loo_members, mine
from asr_audit.probes.predfiles.refdis_options import check_loo_panel
from asr_audit.probes.predfiles.refdis_result import RefdisResult
from asr_audit.text.align import AlignmentCache, Opcode, Tokens

FORMAT = 1
TAGS = ("equal", "replace", "delete", "insert")
_CODE = {t: i for i, t in enumerate(TAGS)}
_EQUAL, _REPLACE, _DELETE, _INSERT = range(4)


@dataclass(slots=True)
class PairOps:
    """One model's known opcodes: ``rows[k] = (tag code, i1, i2, j1, j2)`` of clip ``clip[k]``
    (sorted by clip, in opcode order within a clip). A clip with no row has none known."""

    clip: np.ndarray  # int32 (k,)
    rows: np.ndarray  # int32 (k, 5)

    @classmethod
    def empty(cls) -> PairOps:
        return cls(np.zeros(0, np.int32), np.zeros((0, 5), np.int32))

    def known(self, n: int) -> np.ndarray:
        """Which of ``n`` clips have opcodes here."""
        out = np.zeros(n, dtype=bool)
        out[self.clip] = True
        return out

    def added(self, new: Mapping[int, Sequence[Opcode]]) -> PairOps:
        """These opcodes and ``new`` (clip index -> opcodes of a clip that had none)."""
        if not new:
            return self
        clips = [c for c, ops in new.items() for _ in ops]
        rows = [(_CODE[t], i1, i2, j1, j2) for ops in new.values() for t, i1, i2, j1, j2 in ops]
        clip = np.concatenate([self.clip, np.asarray(clips, dtype=np.int32)])
        both = np.concatenate([self.rows, np.asarray(rows, dtype=np.int32).reshape(-1, 5)])
        order = np.argsort(clip, kind="stable")
        return PairOps(clip[order], both[order])

    def of(self, clips: np.ndarray) -> dict[int, tuple[Opcode, ...]]:
        """The opcode tuples of ``clips`` (sorted clip indices) that have any, as :func:`align` gives them."""
        lo = np.searchsorted(self.clip, clips, side="left")
        hi = np.searchsorted(self.clip, clips, side="right")
        out: dict[int, tuple[Opcode, ...]] = {}
        rows = self.rows
        for c, a, b in zip(clips.tolist(), lo.tolist(), hi.tolist()):
            if a < b:
                out[c] = tuple((TAGS[t], i1, i2, j1, j2) for t, i1, i2, j1, j2 in rows[a:b].tolist())
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
            "ops": {m: (o.clip, o.rows) for m, o in self.ops.items()},
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
                {
                    m: PairOps(np.asarray(c, np.int32), np.asarray(r, np.int32).reshape(-1, 5))
                    for m, (c, r) in data["ops"].items()
                },
            )
            n = cols.n
            if len(cols.refs) != n or any(len(h) != n for h in cols.hyps.values()):
                return None
            if any(len(a) != n for a in (*cols.errors.values(), *cols.merged.values())):
                return None
            if any(len(o.clip) and (o.clip.min() < 0 or o.clip.max() >= n) for o in cols.ops.values()):
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
        found: dict[int, tuple[Opcode, ...]] = {}
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
                found[i] = o
        hyps[m], errors[m], merged[m] = col, err, mer
        ops[m] = PairOps.empty().added(found)
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
    c, r = ops.clip, ops.rows
    tag = r[:, 0]
    eq = tag == _EQUAL
    matched = np.bincount(c[eq], weights=(r[eq, 2] - r[eq, 1]), minlength=n)
    min_matched = np.floor(params.min_ref_match * ref_len.astype(np.float64))  # int() of a non-negative float
    eligible = cols.present(model) & (ref_len > 0) & ops.known(n) & (matched >= min_matched)
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


def _ensure_ops(cols: Columns, model: str, clips: np.ndarray, cache: AlignmentCache) -> None:
    """Compute the opcodes ``model`` lacks on ``clips`` (answered, non-empty reference)."""
    need = clips[~cols.ops[model].known(cols.n)[clips]]
    if not len(need):
        return
    hyps, refs = cols.hyps[model], cols.refs
    new: dict[int, tuple[Opcode, ...]] = {}
    for i in need.tolist():
        h = hyps[i]
        if h is not None and refs[i]:
            new[i] = cache.align(cache.tokens(refs[i]), cache.tokens(h)).opcodes
    cols.ops[model] = cols.ops[model].added(new)
    cols.changed = True


def _check(cols: Columns, source: str, panel: Sequence[str], models: Sequence[str], params: RefdisParams) -> None:
    """The checks :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis` makes, in its order."""
    for m in [*panel, *models]:
        if m not in cols.models:
            raise ConfigError(f"model {m!r} has no prediction file in {source}; available: {', '.join(cols.models)}")
    if len(set(panel)) != len(panel):
        raise ConfigError(f"--panel names a model twice: {','.join(panel)}")
    if len(panel) < params.min_panel:
        raise ConfigError(
            f"the panel has {len(panel)} member(s) but --min-panel is {params.min_panel}; "
            "fix: name more panel members or lower --min-panel"
        )
    check_loo_panel(params, len(panel), Surface.cli())


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
) -> RefdisResult | None:
    """:func:`~asr_audit.probes.predfiles.refdis_run.run_refdis` (consensus mode) on columns.

    ``normalizer`` is the result's normalizer record, ``source`` the set's path as given. Returns
    ``None`` when the columns lack a model's normalized texts (a run with ``--models`` cached
    only those): the caller runs the plain path. Results computed here are added to ``cols``
    (``cols.changed``).
    """
    from asr_audit.probes.predfiles.refdis_score import assemble_result, clips_with_edits

    models = list(models) if models is not None else list(cols.models)
    _check(cols, source, panel, models, params)
    everyone = list(dict.fromkeys([*models, *panel]))
    if any(m not in cols.hyps for m in everyone):
        return None
    n, ref_len = cols.n, cols.ref_len
    ref_off = np.concatenate([[0], np.cumsum(ref_len)])
    cache = AlignmentCache()
    nonempty = np.flatnonzero(ref_len > 0)
    for m in panel:
        _ensure_ops(cols, m, nonempty, cache)
    arrays = {m: _panel_arrays(cols, m, params, ref_off) for m in panel}
    wanted: dict[str | None, np.ndarray] = {None: candidate_clips(cols, list(arrays.values()), params, ref_off)}
    for held in loo_members(panel, models, params):
        wanted[held] = candidate_clips(cols, [arrays[p] for p in panel if p != held], params, ref_off)
    idx = np.flatnonzero(np.logical_or.reduce(list(wanted.values())))
    clips = _clip_inputs(cols, idx, everyone, cache)
    ids = cols.clip_ids
    candidates = {k: {ids[i] for i in np.flatnonzero(v).tolist()} for k, v in wanted.items()}
    mining = mine(clips, panel, models, params, cache, references=dict(zip(ids, cols.refs)), candidates=candidates)
    _keep_new_ops(cols, idx, clips, everyone, cache)
    scored = {m: mining.scored_edits(m) for m in models}
    where = {cid: i for i, cid in enumerate(ids)}
    columns, counted = [], []
    corrected: dict[tuple[str, tuple[int, ...]], Tokens] = {}
    for m in models:
        col, k = _inflation_columns(cols, m, scored[m], where, cache, corrected, merge_compounds)
        columns.append(col)
        counted.append(k)
    inflations = inflations_from_columns(
        models, columns, counted, len(nonempty), np.random.default_rng(seed), n_resamples
    )
    with_edits = clips_with_edits(mining)
    shown = sorted(where[c] for c in with_edits)
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
        references={ids[i]: cols.refs[i] for i in shown},
        merge_compounds=merge_compounds,
    )


def _clip_inputs(cols: Columns, idx: np.ndarray, everyone: Sequence[str], cache: AlignmentCache) -> list[ClipInput]:
    """ClipInputs of the clips ``idx``, with the known opcodes of their pairs seeded into ``cache``."""
    tok = cache.tokens
    known = {m: cols.ops[m].of(idx) for m in everyone}
    seeds: dict[tuple[Tokens, Tokens], tuple[Opcode, ...]] = {}
    out = []
    for i in idx.tolist():
        ref = tok(cols.refs[i])
        hyps: dict[str, Tokens | None] = {}
        for m in everyone:
            h = cols.hyps[m][i]
            if h is None:
                hyps[m] = None
                continue
            hyp = hyps[m] = tok(h)
            o = known[m].get(i)
            if o is not None:
                seeds[(ref, hyp)] = o
        out.append(ClipInput(cols.clip_ids[i], ref, hyps))
    cache.seed(seeds)
    return out


def _keep_new_ops(
    cols: Columns, idx: np.ndarray, clips: Sequence[ClipInput], everyone: Sequence[str], cache: AlignmentCache
) -> None:
    """Add to ``cols`` the opcodes mining computed (other models' alignments on mined clips)."""
    for m in everyone:
        have = cols.ops[m].known(cols.n)
        new: dict[int, tuple[Opcode, ...]] = {}
        for i, clip in zip(idx.tolist(), clips):
            hyp = clip.hyps.get(m)
            if hyp is not None and not have[i] and clip.ref and (o := cache.peek_opcodes(clip.ref, hyp)) is not None:
                new[i] = o
        if new:
            cols.ops[m] = cols.ops[m].added(new)
            cols.changed = True


def _inflation_columns(
    cols: Columns,
    model: str,
    edits: Sequence[Edit],
    where: Mapping[str, int],
    cache: AlignmentCache,
    corrected: dict[tuple[str, tuple[int, ...]], Tokens],
    merge_compounds: bool,
) -> tuple[np.ndarray, int]:
    """:func:`~asr_audit.probes.predfiles.inflation.inflation_columns` on columns (same rows, same numbers)."""
    ref_len = cols.ref_len
    rows = np.flatnonzero(ref_len > 0)
    present = cols.present(model)
    table = cols.merged if merge_compounds else cols.errors
    err = table[model]
    missing = rows[present[rows] & (err[rows] < 0)]
    if len(missing):
        hyps, tok = cols.hyps[model], cache.tokens
        for i in missing.tolist():
            err[i] = cache.errors(tok(cols.refs[i]), tok(hyps[i] or ""), merge_compounds=merge_compounds)
        cols.changed = True
    answered = present[rows]
    lengths = ref_len[rows]
    e = np.where(answered, err[rows], lengths)
    out = np.stack([e, lengths, e, lengths], axis=1).astype(np.float64)
    by_clip: dict[str, list[Edit]] = {}
    for ed in edits:
        by_clip.setdefault(ed.clip_id, []).append(ed)
    if by_clip:
        pos = np.searchsorted(rows, [where[c] for c in by_clip])
        tok = cache.tokens
        for (cid, own), p in zip(by_clip.items(), pos.tolist()):
            i = where[cid]
            ref = tok(cols.refs[i])
            h = cols.hyps[model][i]
            if h is None:
                fixed_len = len(apply_edits(ref, own))
                out[p] = (len(ref), len(ref), fixed_len, fixed_len)
                continue
            key = (cid, tuple(map(id, own)))
            fixed = corrected.get(key)
            if fixed is None:
                fixed = corrected[key] = cache.intern(apply_edits(ref, own))
            out[p, 2] = cache.errors(fixed, tok(h), merge_compounds=merge_compounds)
            out[p, 3] = len(fixed)
    return out, int(answered.sum())
