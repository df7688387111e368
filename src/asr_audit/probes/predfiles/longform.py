"""Long-form scoring: chunk predictions concatenated per recording, WER and refdis on the recording.

Long recordings (Earnings-22 style) are often evaluated as chunks. Scoring each chunk alone
counts a word split at a chunk boundary twice and hides what the model does across boundaries.
Here each chunk's reference and hypotheses are normalized on their own (so a chunk's words never
merge with its neighbour's), the chunks of one recording are concatenated in order, and the
recording is scored: WER, WER inflation and accept-ref (:func:`run_longform`). The bootstrap
resamples recordings. Every mined edit keeps the chunk it lies in, the chunk's start time and an
approximate time of the edit (linear in the chunk's words; ``None`` when the chunk's start or
duration is unknown).

Chunk order within a recording: the ``index`` of the grouping (a pattern's ``(?P<index>...)`` or
a mapping file's ``index`` / ``order`` column), else its ``start`` time, else the clip ids in
natural order (``chunk_2`` before ``chunk_10``). A chunk's start time: the grouping's ``start``,
else the sum of the earlier chunks' ``duration`` fields when every earlier chunk has one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from asr_audit.corpus.groups import Member
from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.refdis import INSERTION, ClipInput, Edit, Mining, RefdisParams, mine
from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
from asr_audit.probes.predfiles.refdis_options import check_panel
from asr_audit.probes.predfiles.refdis_result import RefdisResult
from asr_audit.probes.predfiles.refdis_run import normalizer_record, run_normalizer, score_mining
from asr_audit.text.align import AlignmentCache

Seconds = float


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
    """One chunk of a recording: its clip id, place, start time, duration and normalized length."""

    clip_id: str
    index: int  # 0-based position in the recording
    start: Seconds | None
    duration: Seconds | None
    offset: int  # index of its first reference token in the recording's normalized reference
    n_words: int

    def to_dict(self) -> dict[str, object]:
        return {
            "clip_id": self.clip_id,
            "index": self.index,
            "start": self.start,
            "duration": self.duration,
            "offset": self.offset,
            "n_words": self.n_words,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class LongformResult:
    """Recordings, their chunks, the refdis result on the recordings and each edit's chunk and time."""

    grouping: str
    recordings: Mapping[str, tuple[Chunk, ...]]
    refdis: RefdisResult

    def locate(self, e: Edit) -> dict[str, object]:
        """The chunk, chunk start and approximate time of an edit on a recording."""
        chunks = self.recordings[e.clip_id]
        at = e.ref_indices[0] if e.ref_indices else 0
        chunk = chunks[-1] if e.kind == INSERTION and at > 0 else chunks[0]
        for c in chunks:
            if c.offset <= at < c.offset + max(c.n_words, 1):
                chunk = c
                break
        time = None
        if chunk.start is not None and chunk.duration is not None and chunk.n_words:
            time = round(chunk.start + chunk.duration * min(at - chunk.offset, chunk.n_words) / chunk.n_words, 2)
        return {"chunk": chunk.clip_id, "chunk_index": chunk.index, "chunk_start": chunk.start, "time_approx": time}

    def to_dict(self) -> dict[str, object]:
        r = self.refdis.to_dict()
        return {
            "probe": "longform",
            "grouping": self.grouping,
            "n_recordings": len(self.recordings),
            "n_chunks": sum(len(c) for c in self.recordings.values()),
            "source": r["source"],
            "normalizer": r["normalizer"],
            "wer_scoring": r["wer_scoring"],
            "seed": r["seed"],
            "models": r["models"],
            "edits": [{**e.to_dict(), **self.locate(e)} for e in self.refdis.edits],
            "recordings": {rec: [c.to_dict() for c in chunks] for rec, chunks in self.recordings.items()},
            "refdis": {k: v for k, v in r.items() if k not in ("models", "edits", "references")},
        }


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[object, ...]:
    """Sort key with digit runs compared as numbers.

    >>> sorted(["c_10", "c_2", "c_1"], key=natural_key)
    ['c_1', 'c_2', 'c_10']
    """
    return tuple(int(p) if p.isdigit() else p for p in _DIGITS.split(text))


def order_chunks(preds: PredictionSet, groups: Mapping[str, Member]) -> dict[str, list[str]]:
    """Recording -> its chunk clip ids in order (see the module docstring); recordings sorted naturally.

    Every clip of ``preds`` must have a group; two chunks of one recording with the same index are an error.
    """
    missing = [c for c in preds.references if c not in groups]
    if missing:
        raise ConfigError(
            f"clip {missing[0]!r} (and {len(missing) - 1} more) has no recording in the grouping; "
            "fix: widen --group-pattern or add the clip to --group-file"
        )
    by: dict[str, list[str]] = {}
    for cid in preds.references:
        by.setdefault(groups[cid].group, []).append(cid)
    out = {}
    for rec in sorted(by, key=natural_key):
        ids = by[rec]
        indices = [groups[c].index for c in ids]
        starts = [groups[c].start for c in ids]
        if all(i is not None for i in indices):
            seen: dict[float, str] = {}
            for c, i in zip(ids, indices):
                key = float(i or 0.0)
                if key in seen:
                    raise ConfigError(
                        f"recording {rec!r}: chunks {seen[key]!r} and {c!r} have the same index {key:g}; "
                        "fix: give every chunk of a recording its own index"
                    )
                seen[key] = c
            ids = [seen[k] for k in sorted(seen)]
        elif all(t is not None for t in starts):
            ids = [c for _, _, c in sorted((float(t or 0.0), natural_key(c), c) for t, c in zip(starts, ids))]
        else:
            ids = sorted(ids, key=natural_key)
        out[rec] = ids
    return out


def run_longform(
    preds: PredictionSet,
    groups: Mapping[str, Member],
    panel: Sequence[str],
    params: RefdisParams,
    *,
    grouping: str = "",
    normalizer: str = "whisper",
    models: Sequence[str] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    text2num: bool = True,
    merge_compounds: bool = False,
    language: str = "en",
) -> LongformResult:
    """Concatenate each recording's chunks (references and every model's hypotheses) and score
    WER and refdis on the recordings (panel mode, as
    :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis`). A chunk a model did not answer
    adds no words to its recording's hypothesis (its reference words count as deleted); a model
    that answered no chunk of a recording has no hypothesis for it."""

    norm = run_normalizer(normalizer, params.preset)
    models = list(models) if models is not None else preds.models
    for m in [*panel, *models]:
        preds.file(m)  # raises a ConfigError naming the available models
    check_panel(params, panel, models)
    everyone = list(dict.fromkeys([*models, *panel]))
    cache = AlignmentCache()
    chunk_clips = {c.clip_id: c for c in prepare_clips(preds, everyone, norm, text2num, cache=cache, language=language)}
    durations = {cid: row.duration for f in preds.files for cid, row in f.rows.items() if row.duration is not None}
    recordings: dict[str, tuple[Chunk, ...]] = {}
    clips: list[ClipInput] = []
    for rec, ids in order_chunks(preds, groups).items():
        chunks: list[Chunk] = []
        ref: list[str] = []
        offset = 0
        clock: float | None = 0.0
        hyps: dict[str, list[str] | None] = dict.fromkeys(everyone)
        for k, cid in enumerate(ids):
            c = chunk_clips[cid]
            start = groups[cid].start if groups[cid].start is not None else clock
            chunks.append(
                Chunk(clip_id=cid, index=k, start=start, duration=durations.get(cid), offset=offset, n_words=len(c.ref))
            )
            clock = None if start is None or durations.get(cid) is None else start + durations[cid]
            ref.extend(c.ref)
            offset += len(c.ref)
            for m in everyone:
                h = c.hyps.get(m)
                if h is not None:
                    hyps[m] = [*(hyps[m] or []), *h]
        recordings[rec] = tuple(chunks)
        clips.append(
            ClipInput(
                rec,
                cache.intern(tuple(ref)),
                {m: None if h is None else cache.intern(tuple(h)) for m, h in hyps.items()},
            )
        )
    if len(clips) < 2:
        raise ConfigError(
            f"the grouping ({grouping or 'given'}) makes {len(clips)} recording(s): a recording-level bootstrap "
            "needs at least 2 (one gives a zero-width interval, not a measured one); fix: score more recordings, "
            "or use refdis on the chunks"
        )
    mining: Mining = mine(clips, panel, models, params, cache)
    result = score_mining(
        clips,
        mining,
        models=models,
        panel=panel,
        params=params,
        cache=cache,
        normalizer=normalizer_record(norm, text2num, language),
        mode="panel",
        source=preds.source,
        seed=seed,
        n_resamples=n_resamples,
        merge_compounds=merge_compounds,
    )
    return LongformResult(grouping=grouping, recordings=recordings, refdis=result)
