"""Align a corpus: one :class:`~asr_audit.align.records.ClipAlignment` per clip, through the store.

Results are cached in the result store under kind ``timings``: backend key = the aligner
identity's key, audio = the clip's audio content hash, item = a hash of the transcript, value =
the list of word timings. A clip whose audio cannot be read or that the aligner cannot align
yields a result with ``error`` set (never cached), and the run goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from asr_audit.align.records import TIMINGS, AlignmentError, ClipAlignment, WordTiming, transcript_key
from asr_audit.audio.io import load_clip_audio
from asr_audit.errors import AuditError

if TYPE_CHECKING:
    from asr_audit.align import Aligner
    from asr_audit.corpus.clips import Clip
    from asr_audit.store.base import Store


def _failed(clip: Clip, aligner_id, reason: str, duration: float | None = None) -> ClipAlignment:  # noqa: ANN001
    return ClipAlignment(clip.id, clip.reference, aligner_id, (), duration, " ".join(reason.split()) or "failed")


def align_clip(aligner: Aligner, clip: Clip, store: Store | None = None) -> ClipAlignment:
    """Align one clip (from the store when cached); errors come back in the result."""

    ident = aligner.identity()
    try:
        audio = load_clip_audio(clip)
    except AuditError as exc:
        return _failed(clip, ident, str(exc))
    item = transcript_key(clip.reference)
    if store is not None:
        hit = store.get(TIMINGS, ident.key, [audio.audio_hash], item=item).get(audio.audio_hash)
        if hit is not None:
            words = tuple(WordTiming.from_dict(w) for w in hit.value)
            return ClipAlignment(clip.id, clip.reference, ident, words, audio.duration, cached=True)
    t0 = time.perf_counter()
    try:
        words = aligner.align(audio.samples, clip.reference)
    except AlignmentError as exc:
        return _failed(clip, ident, str(exc), audio.duration)
    except AuditError as exc:  # e.g. a backend refusing the input
        return _failed(clip, ident, str(exc), audio.duration)
    seconds = time.perf_counter() - t0
    if store is not None:
        store.put(TIMINGS, ident.key, [(audio.audio_hash, [w.to_dict() for w in words], seconds)], item=item)
    return ClipAlignment(clip.id, clip.reference, ident, words, audio.duration)


def align_corpus(
    aligner: Aligner,
    clips: Iterable[Clip],
    store: Store | None = None,
    progress: Callable[[ClipAlignment], None] | None = None,
) -> Iterator[ClipAlignment]:
    """Align every clip in order, yielding results as they come (see the module docstring)."""
    if store is not None:
        store.register_backend(aligner.identity())
    for clip in clips:
        result = align_clip(aligner, clip, store)
        if progress is not None:
            progress(result)
        yield result
