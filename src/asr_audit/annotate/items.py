"""What the labelling page shows for each sampled edit: its audio window, the sentence, two renderings.

An :class:`Item` is one sampled edit ready for a person: the clip's audio file (found under the
audio root by clip id, :func:`find_audio`), the window to play (the span's words located by the
project's forced aligner on the run's normalized reference, a second of context each side,
:func:`edit_window`), the reference words before and after the span, and the two renderings of
the span (the reference's and the panel's) in a seeded random order, named "A" and "B" only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asr_audit.errors import ConfigError

#: Seconds of audio played on each side of the edit's span.
CONTEXT_S = 1.0
#: Reference words shown on each side of the span.
CONTEXT_WORDS = 12
#: Extensions tried after the clip id under the audio root.
AUDIO_EXTENSIONS = ("", ".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a")
#: What the page writes for an empty rendering (a deletion's panel side, an insertion's reference).
NOTHING = "(nothing)"


def find_audio(root: Path, clip_id: str) -> Path | None:
    """The audio file of ``clip_id`` under ``root``: ``root/clip_id`` as it is or with a usual
    audio extension; ``None`` when there is none."""
    for ext in AUDIO_EXTENSIONS:
        p = root / f"{clip_id}{ext}"
        if p.is_file():
            return p
    return None


def check_audio(root: Path | None, clip_ids: Sequence[str]) -> dict[str, Path]:
    """Each clip's audio file, or a one-line refusal: there is nothing to verify without audio."""
    if root is None:
        raise ConfigError(
            "annotate needs the clips' audio: people verify an edit by listening; fix: add --audio-root DIR"
        )
    if not root.is_dir():
        raise ConfigError(f"--audio-root {root} is not a folder; fix: pass the folder holding the clips' audio")
    found = {c: find_audio(root, c) for c in clip_ids}
    missing = sorted(c for c, p in found.items() if p is None)
    if missing:
        raise ConfigError(
            f"--audio-root {root}: no audio for {len(missing)} of {len(found)} clips to label (first: {missing[0]!r}, "
            f"looked for {root / missing[0]}[{'|'.join(e for e in AUDIO_EXTENSIONS if e)}]); there is nothing to "
            "verify without audio; fix: pass the folder whose files are named by clip id"
        )
    return {c: p for c, p in found.items() if p is not None}


def span_times(
    edit: Mapping[str, Any], timings: Sequence[tuple[float, float]] | None, duration: float
) -> tuple[float, float] | None:
    """Where the edit's reference span is spoken (an insertion: the gap it goes into), from one
    ``(start, end)`` per reference token; ``None`` without usable timings.

    >>> t = [(0.0, 0.5), (0.6, 1.0), (1.2, 1.8)]
    >>> span_times({"kind": "substitution", "ref_indices": [1, 2]}, t, 2.0)
    (0.6, 1.8)
    >>> span_times({"kind": "insertion", "ref_indices": [3]}, t, 2.0), span_times({"kind": "insertion", "ref_indices": [0]}, t, 2.0)
    ((1.8, 2.0), (0.0, 0.0))
    """
    idx = [int(i) for i in edit.get("ref_indices", [])]
    if not timings or not idx:
        return None
    n = len(timings)
    if edit.get("kind") == "insertion":
        i = idx[0]
        if i > n:
            return None
        start = timings[i - 1][1] if i > 0 else 0.0
        end = timings[i][0] if i < n else duration
        return (start, max(start, end))
    if idx[-1] >= n:
        return None
    return (timings[idx[0]][0], timings[idx[-1]][1])


def corrected_text(
    tokens: Sequence[str], edits: Sequence[Mapping[str, Any]]
) -> tuple[list[str], list[tuple[int, int]]]:
    """The reference ``tokens`` with the clip's non-overlapping ``edits`` applied (what the panel
    heard), and for each reference token ``i`` the range ``[a, b)`` of corrected tokens standing
    for it (an untouched token: itself; the tokens of a replaced run: the replacement's range, empty
    for a deletion); an insertion before token ``i`` puts its words between ``i - 1`` and ``i``.

    >>> corrected_text("anna opened the door on monday".split(), [
    ...     {"kind": "substitution", "ref_indices": [0], "alt_text": "peter"},
    ...     {"kind": "insertion", "ref_indices": [6], "alt_text": "morning"}])
    (['peter', 'opened', 'the', 'door', 'on', 'monday', 'morning'], [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6)])
    """
    spans = []
    for e in edits:
        idx = [int(i) for i in e.get("ref_indices", [])]
        if not idx:
            continue
        lo = idx[0]
        hi = lo if e.get("kind") == "insertion" else idx[-1] + 1
        spans.append((lo, hi, str(e.get("alt_text") or "").split()))
    spans.sort(key=lambda x: (x[0], x[1]))
    out: list[str] = []
    where: list[tuple[int, int]] = []
    i = 0
    for lo, hi, alt in spans:
        if lo < i or lo > len(tokens):  # overlaps an edit already applied: left out
            continue
        for t in tokens[i:lo]:
            where.append((len(out), len(out) + 1))
            out.append(t)
        start = len(out)
        out.extend(alt)
        where.extend([(start, len(out))] * (hi - lo))
        i = hi
    for t in tokens[i:]:
        where.append((len(out), len(out) + 1))
        out.append(t)
    return out, where


def timings_through(
    where: Sequence[tuple[int, int]], corrected: Sequence[tuple[float, float]]
) -> list[tuple[float, float]]:
    """One ``(start, end)`` per reference token from the timings of the corrected text
    (:func:`corrected_text`): a token replaced by nothing gets the gap where it was.

    >>> timings_through([(0, 1), (1, 1), (1, 2)], [(0.0, 0.4), (0.6, 1.0)])
    [(0.0, 0.4), (0.4, 0.6), (0.6, 1.0)]
    """
    out = []
    for a, b in where:
        if b > a:
            out.append((corrected[a][0], corrected[b - 1][1]))
        else:
            start = corrected[a - 1][1] if a > 0 else 0.0
            end = corrected[a][0] if a < len(corrected) else start
            out.append((start, max(start, end)))
    return out


def edit_window(span: tuple[float, float] | None, duration: float) -> tuple[float, float]:
    """The window played for a span: :data:`CONTEXT_S` each side, inside the clip; the whole clip
    when the span is unknown.

    >>> edit_window((0.6, 1.8), 5.0), edit_window((0.2, 0.4), 5.0), edit_window(None, 5.0)
    ((0.0, 2.8), (0.0, 1.4), (0.0, 5.0))
    """
    if span is None:
        return (0.0, duration)
    return (max(0.0, span[0] - CONTEXT_S), min(duration, span[1] + CONTEXT_S))


def blind_order(key: str, seed: int) -> bool:
    """Whether the reference's rendering is shown first ("A") for the edit ``key``: a coin seeded
    by the sample's seed and the key, the same on every reload."""
    return hashlib.sha256(f"{seed}|{key}".encode()).digest()[0] % 2 == 0


@dataclass(frozen=True, slots=True)
class Item:
    """One edit as the page shows it."""

    index: int
    key: str
    weight: float
    stratum: str
    clip_id: str
    audio: Path
    duration: float
    window: tuple[float, float]
    timed: bool  # the window comes from word timings (else: the whole clip)
    before: tuple[str, ...]
    after: tuple[str, ...]
    cut_before: bool  # the sentence goes on before ``before`` (the page shows "…")
    cut_after: bool
    reference_first: bool
    reference_text: str
    panel_text: str

    def options(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """``(("A", text), ("B", text))`` in the blind order."""
        first, second = (
            (self.reference_text, self.panel_text) if self.reference_first else (self.panel_text, self.reference_text)
        )
        return (("A", first), ("B", second))

    def choice_of(self, option: str) -> str:
        """What picking ``A`` or ``B`` says: ``reference`` or ``panel`` (the store's choices)."""
        ref_option = "A" if self.reference_first else "B"
        return "reference" if option == ref_option else "panel"

    def to_page(self) -> dict[str, object]:
        """What the page receives: no model names, no word of which rendering is the reference."""
        return {
            "index": self.index,
            "before": ("… " if self.cut_before else "") + " ".join(self.before),
            "after": " ".join(self.after) + (" …" if self.cut_after else ""),
            "options": [{"name": n, "text": t} for n, t in self.options()],
            "window": [round(self.window[0], 3), round(self.window[1], 3)],
            "duration": round(self.duration, 3),
            "timed": self.timed,
            "audio": f"/audio/edit/{self.index}.wav",
            "clip": f"/audio/clip/{self.index}.wav",
        }


def build_items(
    sample: Sequence[Any],
    references: Mapping[str, str],
    audio: Mapping[str, Path],
    durations: Mapping[str, float],
    timings: Callable[[str], Sequence[tuple[float, float]] | None],
    seed: int,
) -> list[Item]:
    """One :class:`Item` per sampled edit (``verified_labels.SampledEdit``), in the sample's order;
    ``timings(clip_id)`` gives one ``(start, end)`` per normalized reference token, or ``None``."""
    items = []
    for i, s in enumerate(sample):
        e = s.edit
        cid = str(e["clip_id"])
        tokens = references.get(cid, "").split()
        idx = [int(x) for x in e.get("ref_indices", [])]
        insertion = e.get("kind") == "insertion"
        lo = idx[0] if idx else 0
        hi = lo if insertion else (idx[-1] + 1 if idx else 0)
        t = timings(cid)
        usable = t if t is not None and len(t) == len(tokens) else None
        span = span_times(e, usable, durations[cid])
        items.append(
            Item(
                index=i,
                key=s.key,
                weight=s.weight,
                stratum=s.stratum,
                clip_id=cid,
                audio=audio[cid],
                duration=durations[cid],
                window=edit_window(span, durations[cid]),
                timed=span is not None,
                before=tuple(tokens[max(0, lo - CONTEXT_WORDS) : lo]),
                after=tuple(tokens[hi : hi + CONTEXT_WORDS]),
                cut_before=lo > CONTEXT_WORDS,
                cut_after=hi + CONTEXT_WORDS < len(tokens),
                reference_first=blind_order(s.key, seed),
                reference_text=" ".join(e.get("ref_tokens") or ()) or NOTHING,
                panel_text=str(e.get("alt_text") or "") or NOTHING,
            )
        )
    return items
