"""Audio verification of consensus corrections: does the audio prefer the corrected reference?

For each change of a cleaned benchmark (:mod:`asr_audit.probes.predfiles.corrected`), a scoring
backend (teacher-forced, :class:`~asr_audit.models.base.ScoringBackend`) scores the clip's audio
against the normalized reference and against the reference with that one change applied. The
verification records both texts' total log-probabilities and their means per token, and which
text the audio prefers by the mean (``corrected``, ``reference``, or ``tie`` within ``margin``
nats per token). The mean, not the total, decides: the backends score the text's tokens but not
the end of the text, so a total always favours the shorter text (on a shipped LibriVox clip,
dropping the spoken last word "man" changes the total by 0.01 nats, and the mean by 0.10 per
token in favour of the reference; a spurious "madam president" opener costs 2.0 per token). It is
evidence for a curator, not a calibrated test. A clip whose audio cannot be loaded or scored gets
``{"error": ...}`` on its changes, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from asr_audit.audio.io import load_audio
from asr_audit.corpus.clips import Clip
from asr_audit.errors import AuditError, ConfigError
from asr_audit.models.base import SCORE, load_backend, require_capability
from asr_audit.probes.predfiles.corrected import CorrectedClip, corrected_benchmark, with_verification

MARGIN = 0.05  # nats per token: a smaller difference of the means is a tie


def verify_changes(
    clips: Sequence[CorrectedClip],
    backend: Any,
    load: Callable[[str], np.ndarray],
    *,
    margin: float = MARGIN,
) -> dict[tuple[str, int], Mapping[str, Any]]:
    """``(clip id, change index) -> verification`` for every change of ``clips``.

    ``load(clip_id)`` returns the clip's 16 kHz mono audio. One backend call per clip scores the
    reference and each single-change text.
    """

    require_capability(backend, SCORE)
    spec = backend.identity().spec
    out: dict[tuple[str, int], Mapping[str, Any]] = {}
    for clip in clips:
        if not clip.changes:
            continue
        targets = [" ".join(clip.reference), *(" ".join(ch.apply(clip.reference)) for ch in clip.changes)]
        try:
            audio = load(clip.clip_id)
            scores = backend.score([audio] * len(targets), [""] * len(targets), targets)
        except AuditError as exc:
            for i in range(len(clip.changes)):
                out[(clip.clip_id, i)] = {"backend": spec, "error": " ".join(str(exc).split())}
            continue
        base, base_mean = _logp(scores[0])
        for i, s in enumerate(scores[1:]):
            fixed, fixed_mean = _logp(s)
            diff = fixed_mean - base_mean
            out[(clip.clip_id, i)] = {
                "backend": spec,
                "logp_reference": round(base, 4),
                "logp_corrected": round(fixed, 4),
                "mean_reference": round(base_mean, 4),
                "mean_corrected": round(fixed_mean, 4),
                "prefers": "corrected" if diff > margin else "reference" if diff < -margin else "tie",
            }
    return out


def _logp(scores: Any) -> tuple[float, float]:
    """A text's total log-probability and its mean per token (0 for an empty text)."""
    total = float(scores.total)
    return total, total / len(scores.tokens) if scores.tokens else 0.0


def cleaned_benchmark(
    preds: Any,
    result: Any,
    *,
    verify_with: str | None = None,
    audio_root: str | None = None,
) -> tuple[list[CorrectedClip], str]:
    """The cleaned benchmark of a panel-mode refdis ``result`` on ``preds``, and how its corrected
    texts are written (``text_form``). With ``verify_with`` (a scoring backend's spec) each change
    is verified on the clip's audio, found at ``audio_root / clip id`` (the leaderboard's
    ``audio_filepath``; an absolute id is used as it is)."""
    from pathlib import Path

    if result.mode != "panel":
        raise ConfigError(
            "--write-corrected writes the panel's corrections; in two-reference mode the corrected "
            "references are the input; fix: run refdis with --panel instead of --corrected-refs"
        )
    refs = {cid: tuple(text.split()) for cid, text in result.references.items()}
    clips = corrected_benchmark(preds, refs, result.edits)
    label = result.normalizer.get("label", result.normalizer.get("name", "?"))
    text2num = " + text2num" if result.normalizer.get("text2num") else ""
    text_form = f"normalized: {label}{text2num}"
    if verify_with is None:
        return clips, text_form
    if audio_root is None:
        raise ConfigError(
            "--verify-with needs --audio-root DIR (where the clips' audio files are); fix: add --audio-root"
        )
    root = Path(audio_root)
    if not root.is_dir():
        raise ConfigError(f"--audio-root {audio_root} is not a folder; fix: pass the folder holding the audio files")

    backend = load_backend(verify_with)

    def load(cid: str) -> np.ndarray:
        return load_audio(Clip(cid, preds.references[cid], audio_path=str(root / cid)))

    return with_verification(clips, verify_changes(clips, backend, load)), text_form
