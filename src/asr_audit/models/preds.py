"""``preds:<file>`` — an existing prediction file acting as a transcribe-only backend.

It answers by *clip id*, not by audio: it implements :class:`ClipLookup`
(``transcribe_ids(clip_ids) -> list[str | None]``) and its ``transcribe(audios)`` refuses.
The runner checks :func:`is_lookup_backend` and then neither loads audio nor touches the store
(the file already is the cache). So a ``preds:`` backend can stand in for a model on the
original clips of a corpus, but not on derived (perturbed) clips, whose ids are not in the file.

Lookup: the clip id as written in the file's id column (``audio_filepath``, ``id`` ...); failing
that, a unique match on the file name stem (``a/b/x.wav`` matches ``x``). A clip whose row is
absent or whose hypothesis is null gives ``None``, which the runner reports as a failed clip.
The identity's weights hash is the file's sha256, so an edited file is a new backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Protocol, runtime_checkable

import numpy as np

from asr_audit.corpus.predfiles import read_prediction_file
from asr_audit.errors import BackendError
from asr_audit.models.base import TRANSCRIBE, BaseBackend, DecodeOptions, hash_files, register_backend


@runtime_checkable
class ClipLookup(Protocol):
    """A backend that answers by clip id instead of by audio."""

    def transcribe_ids(self, clip_ids: Sequence[str]) -> list[str | None]: ...


def is_lookup_backend(backend: object) -> bool:
    """True for backends the runner must call with clip ids (see :class:`ClipLookup`)."""
    return callable(getattr(backend, "transcribe_ids", None))


def _stem(clip_id: str) -> str:
    name = PurePosixPath(clip_id.replace("\\", "/")).name
    return name.rsplit(".", 1)[0] if "." in name else name


class PredictionsBackend(BaseBackend):
    """Hypotheses read from a prediction file, looked up by clip id."""

    capabilities = frozenset({TRANSCRIBE})
    code_version = "preds/1"
    max_duration = None
    needs_audio = False

    def __init__(self, path: str, options: DecodeOptions) -> None:
        p = Path(path).expanduser()
        pf = read_prediction_file(p)  # raises InputFileError naming file + line
        super().__init__(f"preds:{path}", options, hash_files([str(p)]))
        self.path = p
        self._rows = {cid: row.hypothesis for cid, row in pf.rows.items()}
        stems: dict[str, list[str]] = {}
        for cid in self._rows:
            stems.setdefault(_stem(cid), []).append(cid)
        self._by_stem = {s: ids[0] for s, ids in stems.items() if len(ids) == 1}

    def lookup(self, clip_id: str) -> str | None:
        if clip_id in self._rows:
            return self._rows[clip_id]
        match = self._by_stem.get(_stem(clip_id))
        return None if match is None else self._rows[match]

    def transcribe_ids(self, clip_ids: Sequence[str]) -> list[str | None]:
        return [self.lookup(c) for c in clip_ids]

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        raise BackendError(
            f"{self.spec} answers by clip id, not by audio; fix: run it through "
            "`asr-audit transcribe` (or call transcribe_ids) on the corpus the file was made for"
        )


@register_backend(
    "preds",
    description="an existing prediction file (JSONL/JSON/CSV/Parquet) looked up by clip id; preds:<file>",
    capabilities=[TRANSCRIBE],
)
def _make_preds(arg: str, options: DecodeOptions) -> PredictionsBackend:
    return PredictionsBackend(arg, options)
