"""Null and planted worlds for the trigger battery, with TEST-DOUBLE backends.

A world is a corpus of short clips whose audio opens with "thank you mister president" that the
reference omits (a reference error), on a share of the clips; what the audio says is hidden from
the battery unless a test passes it as ``spoken``. Its models answer by clip id (the
``ClipLookup`` protocol, so no audio is decoded and nothing is cached):

* an **honest** model (:class:`NullModel`) behaves identically in every condition: each
  transcription is a fresh draw from one distribution — it drops the opener (follows the
  reference) with probability ``drop`` and misspells each word with probability ``err`` —
  whatever the audio condition. Any condition effect the battery reports for it is a false one.
* a **planted** model copies the reference on the original audio only and is honest under every
  other condition: a real effect the battery must still find.

Derived clips carry the original's id before ``__`` (``conditions.realize``); donor splices get
" and so on" appended (the donor alone reads "and so on").
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from asr_audit.corpus.clips import ArraySource, Clip, Corpus
from asr_audit.models.base import BaseBackend, DecodeOptions

OPENER = ("thank", "you", "mister", "president")
WORDS = (
    "committee",
    "approved",
    "report",
    "fisheries",
    "rights",
    "workers",
    "member",
    "state",
    "energy",
    "costs",
    "budget",
    "council",
    "farmers",
    "rules",
    "prices",
    "water",
    "quality",
    "amendment",
    "proposal",
    "question",
    "support",
    "clear",
    "fair",
    "small",
    "businesses",
    "protect",
    "reduce",
    "answered",
    "yesterday",
    "every",
)


def _stable(text: str) -> int:
    return zlib.crc32(text.encode())


def make_world(seed: int, n_clips: int = 60, p_opener: float = 0.7) -> tuple[Corpus, dict[str, str]]:
    """``(corpus, spoken)``: references without the opener; ``spoken`` says what each clip's audio says."""
    rng = np.random.default_rng([seed, 7])
    clips, spoken = [], {}
    for i in range(n_clips):
        sentence = " ".join(rng.choice(WORDS, size=int(rng.integers(6, 11))))
        cid = f"w{seed}_{i:03d}"
        t = np.arange(1600) / 16000
        x = (0.1 * np.sin(2 * np.pi * (150 + 7 * i) * t)).astype(np.float32)
        clips.append(Clip(cid, sentence, source=ArraySource(x, 16000, label=cid), corpus="null", duration=0.1))
        spoken[cid] = (" ".join(OPENER) + " " + sentence) if rng.random() < p_opener else sentence
    return Corpus("null", "test", "null", tuple(clips)), spoken


class NullModel(BaseBackend):
    """TEST DOUBLE: see the module docstring. ``copy_original`` plants reference copying on the
    original audio (clip ids without ``__``)."""

    max_duration = None
    needs_audio = False

    def __init__(
        self,
        name: str,
        corpus: Corpus,
        spoken: dict[str, str],
        seed: int,
        drop: float = 0.15,
        err: float = 0.03,
        copy_original: bool = False,
    ) -> None:
        super().__init__(f"null-{name}", DecodeOptions(), f"null-{name}-{seed}")
        self.name, self.seed, self.drop, self.err, self.copy = name, seed, drop, err, copy_original
        self.refs = {c.id: c.reference for c in corpus.clips}
        self.spoken = spoken

    def _one(self, clip_id: str) -> str:
        if clip_id.endswith("__donor-only"):
            return "and so on"
        base = clip_id.split("__")[0]
        rng = np.random.default_rng([self.seed, _stable(self.name), _stable(clip_id)])
        if self.copy and base == clip_id:
            return self.refs[base]
        words = self.spoken[base].split()
        if tuple(words[:4]) == OPENER and rng.random() < self.drop:
            words = words[4:]
        words = [w + "x" if rng.random() < self.err else w for w in words]
        return " ".join(words) + (" and so on" if "donor" in clip_id else "")

    def transcribe_ids(self, clip_ids: Sequence[str]) -> list[str | None]:
        return [self._one(c) for c in clip_ids]

    def transcribe(self, audios):
        raise AssertionError("the null models answer by clip id")
