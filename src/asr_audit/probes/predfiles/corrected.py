"""A cleaned benchmark: the references with the consensus panel's corrections applied.

``asr-audit refdis ... --write-corrected refs.jsonl`` writes one row per clip of the prediction
set in the leaderboard's manifest format (``audio_filepath``, ``text``, ``duration`` when known),
so the file works as a corpus manifest, as ``--corrected-refs`` (the two-reference mode) and for
re-scoring any model. A clip without a mined edit keeps its original reference text. A corrected
clip's ``text`` is the *normalized* reference with every edit of the full panel applied (the
corrections are found on normalized tokens, the only form in which the panel's votes are
comparable), and ``text_form`` names the normalizer; ``original_text`` keeps the raw reference.

Each change records its clip, kind (deletion / substitution / insertion), position, the
reference words and their replacement, the reference indices, the panel's votes (how many of the
eligible panel members agreed), the miners and every scored model's verdict; with a scoring
backend (:mod:`asr_audit.probes.audio.verify`) also whether the audio prefers the corrected
text. Pure: the refdis result in, frozen records out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.probes.predfiles.inflation import apply_edits
from asr_audit.probes.predfiles.refdis import Edit
from asr_audit.text.align import Tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One correction of one clip's reference."""

    clip_id: str
    kind: str
    position: str
    start: int  # reference token range [start, stop) replaced (start == stop: insertion)
    stop: int
    reference: Tokens  # the reference words replaced ("" for an insertion)
    replacement: Tokens  # the panel's words
    votes: int  # panel members that agreed
    panel: int  # eligible panel members on the clip
    miners: tuple[str, ...]
    verdicts: Mapping[str, str | None]
    verification: Mapping[str, Any] | None = None  # the audio's vote (a scoring backend), when given

    @classmethod
    def from_edit(cls, e: Edit, ref: Tokens) -> Change:
        """The change ``e`` makes to the normalized reference ``ref``."""
        start, stop, tokens = e.fix
        return cls(
            clip_id=e.clip_id,
            kind=e.kind,
            position=e.position,
            start=start,
            stop=stop,
            reference=tuple(ref[start:stop]),
            replacement=tuple(tokens),
            votes=e.n_panel_agree,
            panel=e.n_panel,
            miners=e.miners,
            verdicts=dict(e.verdicts),
        )

    def apply(self, ref: Tokens) -> Tokens:
        """``ref`` with this change alone applied."""
        return (*ref[: self.start], *self.replacement, *ref[self.stop :])

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "position": self.position,
            "start": self.start,
            "stop": self.stop,
            "from": " ".join(self.reference),
            "to": " ".join(self.replacement),
            "panel_votes": f"{self.votes}/{self.panel}",
            "miners": list(self.miners),
            "verdicts": dict(self.verdicts),
            **({} if self.verification is None else {"audio_verification": dict(self.verification)}),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectedClip:
    """One clip of the cleaned benchmark."""

    clip_id: str
    original: str  # the raw reference
    reference: Tokens  # the normalized reference
    corrected: Tokens  # the normalized reference with every change applied
    changes: tuple[Change, ...] = ()
    duration: float | None = None
    extra: Mapping[str, object] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return " ".join(self.corrected) if self.changes else self.original

    def to_dict(self, text_form: str) -> dict[str, object]:
        return {
            "audio_filepath": self.clip_id,
            "text": self.text,
            **({} if self.duration is None else {"duration": self.duration}),
            "original_text": self.original,
            "text_form": text_form if self.changes else "original",
            "changes": [c.to_dict() for c in self.changes],
        }


def corrected_benchmark(
    preds: PredictionSet, references: Mapping[str, Tokens], edits: Sequence[Edit]
) -> list[CorrectedClip]:
    """Every clip of ``preds`` with its corrections (``references``: its normalized reference tokens,
    ``edits``: the full panel's mined edits), in the prediction set's clip order."""
    by_clip: dict[str, list[Edit]] = defaultdict(list)
    for e in edits:
        by_clip[e.clip_id].append(e)
    durations: dict[str, float] = {}
    for f in preds.files:
        for cid, row in f.rows.items():
            if row.duration is not None:
                durations.setdefault(cid, row.duration)
    out = []
    for cid, raw in preds.references.items():
        ref = references.get(cid, tuple(raw.split()))
        own = by_clip.get(cid, [])
        changes = tuple(sorted((Change.from_edit(e, ref) for e in own), key=lambda c: (c.start, c.stop)))
        out.append(
            CorrectedClip(
                clip_id=cid,
                original=raw,
                reference=ref,
                corrected=apply_edits(ref, own) if own else ref,
                changes=changes,
                duration=durations.get(cid),
            )
        )
    return out


def with_verification(
    clips: Sequence[CorrectedClip], verdicts: Mapping[tuple[str, int], Mapping[str, Any]]
) -> list[CorrectedClip]:
    """``clips`` with each change's audio verification (keyed by clip id and change index)."""
    out = []
    for c in clips:
        if not c.changes:
            out.append(c)
            continue
        changes = tuple(replace(ch, verification=verdicts.get((c.clip_id, i))) for i, ch in enumerate(c.changes))
        out.append(replace(c, changes=changes))
    return out


def corrected_jsonl(clips: Sequence[CorrectedClip], text_form: str) -> str:
    """The cleaned benchmark as JSONL text (one manifest row per clip, a trailing newline)."""
    import json

    return "".join(json.dumps(c.to_dict(text_form), ensure_ascii=False) + "\n" for c in clips)
