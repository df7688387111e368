"""Transcribe a corpus with one backend, through the store: each result is computed once.

Per batch of clips:

1. resolve each clip's audio hash — from the store's fingerprint index when the file is
   unchanged (no decoding for cached clips), else by loading the audio (which also validates it);
2. fetch cached transcripts for ``(backend identity key, audio hash)``;
3. transcribe the missing ones (unique audio only) in one backend call; if that call fails, retry
   clip by clip so one broken clip cannot sink its batch — unless the backend isolated the
   failures itself (:class:`~asr_audit.errors.PartialBatchError`, e.g. a paid HTTP API): then
   its transcripts are kept and nothing is sent again;
4. commit the batch's new transcripts in one short transaction.

Batches are **length-sorted**: clips with a declared duration go longest first (ties in corpus
order), clips without one after them in corpus order, so clips of similar length share a
backend call (less padding, a batch's decoding ends soon after its rows do). Records and
failures come back in corpus order whatever the batch order, and each result is written once
in the batch that computed it, so resume semantics do not depend on the order. While a batch is
transcribed, the next batch's audio decodes on one background thread (the store is touched
only from the calling thread).

A clip that cannot be used (missing/corrupt/empty/NaN audio, too long for the backend, a
backend error on it) is recorded as a :class:`ClipFailure` and the run goes on. Killing the
process loses at most the batch in flight; rerunning resumes from the store.

Backends that answer by clip id (``preds:``, see :mod:`asr_audit.models.preds`) are looked up
directly: no audio is loaded and nothing is stored.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from asr_audit.audio.io import ClipAudioError, LoadedAudio, check_duration, load_clip_audio
from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.errors import AuditError, BackendError, ConfigError, MissingExtraError, PartialBatchError
from asr_audit.models.base import TRANSCRIBE, Backend, require_capability
from asr_audit.models.preds import is_lookup_backend
from asr_audit.redact import redact
from asr_audit.store.base import Store, require_store
from asr_audit.store.export import PredictionRecord
from asr_audit.text.align import corpus_wer as wer_of_pairs
from asr_audit.text.normalize import normalize_many

Seconds = float
# progress(n_clips, audio_seconds_computed, compute_seconds) after each batch
ProgressFn = Callable[[int, Seconds, Seconds], None]


@dataclass(frozen=True, slots=True)
class ClipFailure:
    """A clip that produced no transcript, and why."""

    clip_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class TranscribeOutcome:
    """One backend over one corpus."""

    spec: str
    backend_key: str
    corpus: str
    split: str
    records: tuple[PredictionRecord, ...]
    failures: tuple[ClipFailure, ...]
    n_cached: int
    n_computed: int
    audio_seconds: Seconds  # audio transcribed in this run (cache misses)
    compute_seconds: Seconds

    @property
    def rtfx(self) -> float | None:
        """Audio seconds per compute second over what this run computed (None if nothing)."""
        return self.audio_seconds / self.compute_seconds if self.compute_seconds > 0 else None


def file_fingerprint(clip: Clip) -> str | None:
    """A cheap identity of the clip's audio bytes (path + size + mtime), or None."""
    if clip.audio_path is not None:
        try:
            st = os.stat(clip.audio_path)
        except OSError:
            return None
        return f"file:{Path(clip.audio_path).resolve()}:{st.st_size}:{st.st_mtime_ns}"
    return clip.source.fingerprint if clip.source is not None else None


def _reason(exc: BaseException) -> str:
    """A failure's one-line reason for the store, ``results.json`` and the report (secrets redacted)."""
    if isinstance(exc, ClipAudioError):
        return redact(exc.reason)
    text = redact(" ".join(str(exc).split()))
    return text if isinstance(exc, AuditError) else f"{type(exc).__name__}: {text}"[:300]


def _check_texts(backend: Backend, texts: object, n: int) -> list[str]:
    if not isinstance(texts, list) or len(texts) != n or not all(isinstance(t, str) for t in texts):
        raise BackendError(
            f"backend {backend.spec!r} returned {type(texts).__name__} for {n} clip(s), "
            "expected a list of strings of the same length"
        )
    return texts


def _compute(backend: Backend, loaded: Sequence[LoadedAudio]) -> tuple[dict[str, tuple[str, Seconds]], dict[str, str]]:
    """Transcribe unique audio; returns ({hash: (text, seconds)}, {hash: failure reason})."""
    if not loaded:
        return {}, {}
    total = sum(a.duration for a in loaded) or 1.0
    done: dict[str, tuple[str, Seconds]]
    failed: dict[str, str]
    try:
        t0 = time.perf_counter()
        texts = _check_texts(backend, backend.transcribe([a.samples for a in loaded]), len(loaded))
        elapsed = time.perf_counter() - t0
        return {a.audio_hash: (t, elapsed * a.duration / total) for a, t in zip(loaded, texts)}, {}
    except (MissingExtraError, ConfigError):
        raise
    except PartialBatchError as exc:  # the backend isolated the failures itself: resend nothing
        if len(exc.texts) == len(loaded):
            elapsed = time.perf_counter() - t0
            done = {a.audio_hash: (t, elapsed * a.duration / total) for a, t in zip(loaded, exc.texts) if t is not None}
            failed = {
                a.audio_hash: redact(" ".join((r or "no transcript").split()))
                for a, t, r in zip(loaded, exc.texts, exc.reasons)
                if t is None
            }
            return done, failed
    except Exception:  # noqa: BLE001 - isolate the broken clip(s) below
        pass
    done, failed = {}, {}
    for a in loaded:  # isolate the broken clip(s)
        try:
            t0 = time.perf_counter()
            text = _check_texts(backend, backend.transcribe([a.samples]), 1)[0]
            done[a.audio_hash] = (text, time.perf_counter() - t0)
        except (MissingExtraError, ConfigError):
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of one clip is recorded for that clip; the run goes on
            failed[a.audio_hash] = _reason(exc)
    return done, failed


@dataclass(frozen=True, slots=True)
class _Resolved:
    hashes: dict  # clip id -> (audio hash, duration)
    cached: dict  # audio hash -> StoredResult
    loaded: dict  # clip id -> LoadedAudio (clips that had to be decoded)
    bad: dict  # clip id -> failure reason


@dataclass(frozen=True, slots=True)
class _Pending:
    """A batch whose store lookups are done and whose audio decodes in the background."""

    fps: dict  # clip id -> file fingerprint or None
    hashes: dict  # clip id -> (audio hash, duration), from the fingerprint index
    cached: dict  # audio hash -> StoredResult
    decoded: Future  # -> (loaded, bad) from _decode


def _decode(
    batch: Sequence[Clip], hashes: dict, cached: dict, max_duration: Seconds | None
) -> tuple[dict[str, LoadedAudio], dict[str, str]]:
    """Decode (and validate) the clips not both indexed and cached; runs on the prefetch thread."""
    loaded: dict[str, LoadedAudio] = {}
    bad: dict[str, str] = {}
    for c in batch:
        try:
            if c.id in hashes and hashes[c.id][0] in cached:
                check_duration(c, hashes[c.id][1], max_duration)
                continue
            loaded[c.id] = load_clip_audio(c, max_duration)
        except ClipAudioError as exc:
            bad[c.id] = exc.reason
    return loaded, bad


def _lookup(batch: Sequence[Clip], backend: Backend, key: str, store: Store, pool: ThreadPoolExecutor) -> _Pending:
    """Store lookups of a batch (this thread), then its audio decoding submitted to ``pool``."""
    fps = {c.id: file_fingerprint(c) for c in batch}
    index = store.lookup_audio([f for f in fps.values() if f])
    hashes: dict[str, tuple[str, Seconds]] = {}
    for c in batch:
        entry = index.get(fps[c.id] or "")
        if entry is not None:
            hashes[c.id] = (entry.audio_hash, entry.duration)
    cached = store.get_transcripts(key, [h for h, _ in hashes.values()])
    return _Pending(fps, hashes, cached, pool.submit(_decode, batch, hashes, cached, backend.max_duration))


def _finish(pending: _Pending, key: str, store: Store) -> _Resolved:
    """Wait for the batch's audio, index it, and fetch what the store now holds for it."""
    loaded, bad = pending.decoded.result()
    hashes = dict(pending.hashes)
    remember: list[tuple[str, str, float]] = []
    for cid, a in loaded.items():
        hashes[cid] = (a.audio_hash, a.duration)
        if fp := pending.fps[cid]:
            remember.append((fp, a.audio_hash, a.duration))
    store.remember_audio(remember)
    cached = dict(pending.cached)
    # also results an earlier batch stored after this batch's lookup (the same audio twice)
    cached.update(store.get_transcripts(key, [a.audio_hash for a in loaded.values()]))
    return _Resolved(hashes, cached, loaded, bad)


def _lookup_run(backend: Backend, corpus: Corpus, batch_size: int, progress: ProgressFn | None) -> TranscribeOutcome:
    records: list[PredictionRecord] = []
    failures: list[ClipFailure] = []
    clips = corpus.clips
    for start in range(0, len(clips), batch_size):
        batch = clips[start : start + batch_size]
        for clip, text in zip(batch, backend.transcribe_ids([c.id for c in batch])):  # type: ignore[attr-defined]
            if text is None:
                failures.append(ClipFailure(clip.id, f"no prediction for this clip in {backend.spec}"))
            else:
                records.append(PredictionRecord(clip.id, clip.reference, text, clip.duration, None))
        if progress:
            progress(len(batch), 0.0, 0.0)
    key = backend.identity().key
    return TranscribeOutcome(
        backend.spec, key, corpus.name, corpus.split, tuple(records), tuple(failures), len(records), 0, 0.0, 0.0
    )


def length_order(clips: Sequence[Clip]) -> list[int]:
    """Indices of ``clips``: declared durations longest first, then clips without one, stable.

    >>> from asr_audit.corpus.clips import Clip
    >>> clip = lambda id, duration: Clip(id, "", audio_path=f"{id}.wav", duration=duration)
    >>> length_order([clip("a", 2.0), clip("b", None), clip("c", 5.0)])
    [2, 0, 1]
    """
    return sorted(range(len(clips)), key=lambda i: (clips[i].duration is None, -(clips[i].duration or 0.0), i))


def transcribe_corpus(
    backend: Backend,
    corpus: Corpus,
    store: Store | None,
    *,
    batch_size: int = 8,
    progress: ProgressFn | None = None,
) -> TranscribeOutcome:
    """Transcribe every clip of ``corpus`` with ``backend``, reusing and filling ``store``.

    ``store`` may be ``None`` only for a backend that looks its answers up by clip id (prediction
    files): those are read, never computed, so nothing is cached."""
    if batch_size < 1:
        raise ConfigError(f"--batch-size must be >= 1, got {batch_size}")
    require_capability(backend, TRANSCRIBE)
    if is_lookup_backend(backend):
        return _lookup_run(backend, corpus, batch_size, progress)
    store = require_store(store, backend.spec)
    identity = backend.identity()
    key = identity.key
    store.register_backend(identity)
    # per corpus position: its record or its failure (batches run in length order)
    slots: dict[int, PredictionRecord | ClipFailure] = {}
    n_cached = n_computed = 0
    audio_s = compute_s = 0.0
    clips = corpus.clips
    order = length_order(clips)
    groups = [order[start : start + batch_size] for start in range(0, len(clips), batch_size)]
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="asr-audit-audio")
    try:
        pending = [_lookup([clips[i] for i in groups[0]], backend, key, store, pool)] if groups else []
        for k, positions in enumerate(groups):
            batch = [clips[i] for i in positions]
            res = _finish(pending.pop(), key, store)
            if k + 1 < len(groups):  # the next batch's audio decodes while this one is transcribed
                pending.append(_lookup([clips[i] for i in groups[k + 1]], backend, key, store, pool))
            n_cached, n_computed, batch_audio, batch_compute = _run_batch(
                backend, key, store, positions, batch, res, slots, n_cached, n_computed
            )
            audio_s, compute_s = audio_s + batch_audio, compute_s + batch_compute
            if progress:
                progress(len(batch), batch_audio, batch_compute)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    in_order = [slots[i] for i in range(len(clips))]
    records = [r for r in in_order if isinstance(r, PredictionRecord)]
    failures = [f for f in in_order if isinstance(f, ClipFailure)]
    return TranscribeOutcome(
        backend.spec,
        key,
        corpus.name,
        corpus.split,
        tuple(records),
        tuple(failures),
        n_cached,
        n_computed,
        audio_s,
        compute_s,
    )


def _run_batch(
    backend: Backend,
    key: str,
    store: Store,
    positions: Sequence[int],
    batch: Sequence[Clip],
    res: _Resolved,
    slots: dict[int, PredictionRecord | ClipFailure],
    n_cached: int,
    n_computed: int,
) -> tuple[int, int, Seconds, Seconds]:
    """Transcribe a resolved batch's missing audio, commit it, and fill ``slots``.

    Returns the updated ``(n_cached, n_computed)`` and the batch's audio and compute seconds.
    """
    hashes, cached, loaded, bad = res.hashes, res.cached, res.loaded, res.bad
    unique = {a.audio_hash: a for a in loaded.values() if a.audio_hash not in cached}
    done, failed = _compute(backend, list(unique.values()))
    batch_audio = sum(unique[h].duration for h in done)
    batch_compute = sum(sec for _, sec in done.values())
    store.put_transcripts(key, [(h, text, sec) for h, (text, sec) in done.items()])
    # another process may have stored these keys first: report what the store holds
    stored = store.get_transcripts(key, list(done))
    served = {h: (stored[h].value, stored[h].seconds) if h in stored else v for h, v in done.items()}
    for pos, c in zip(positions, batch):
        if c.id in bad:
            slots[pos] = ClipFailure(c.id, bad[c.id])
            continue
        h, dur = hashes[c.id]
        if h in failed:
            slots[pos] = ClipFailure(c.id, failed[h])
            continue
        if h in cached:
            text, sec, n_cached = cached[h].value, cached[h].seconds, n_cached + 1
        else:
            (text, sec), n_computed = served[h], n_computed + 1
        duration = c.duration if c.duration is not None else dur
        slots[pos] = PredictionRecord(c.id, c.reference, text, duration, sec)
    return n_cached, n_computed, batch_audio, batch_compute


def corpus_wer(
    records: Sequence[PredictionRecord], normalizer: str = "whisper", missing: Sequence[str] = ()
) -> float | None:
    """Corpus WER of the records' hypotheses after ``normalizer`` (None without reference words).

    ``missing`` holds the references of clips without a hypothesis (failed clips): each counts as
    an empty hypothesis, every reference word deleted, so failures never lower the WER.
    """

    refs = [t.split() for t in normalize_many(normalizer, [r.reference for r in records] + list(missing))]
    hyps = [t.split() for t in normalize_many(normalizer, [r.hypothesis for r in records])]
    hyps += [[] for _ in missing]
    if not any(refs):
        return None
    return wer_of_pairs(zip(refs, hyps))


def coverage(outcome: TranscribeOutcome) -> float | None:
    """Share of the clips that got a transcript (``None`` when the corpus had none)."""
    n = len(outcome.records) + len(outcome.failures)
    return len(outcome.records) / n if n else None
