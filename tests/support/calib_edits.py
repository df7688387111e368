"""A minimal mined :class:`Edit` for scoring tests (the miner's fields a score reads, the rest empty)."""

from __future__ import annotations

from asr_audit.probes.predfiles.refdis import INSERTION, Edit


def make_edit(
    kind: str, idx: tuple[int, ...], alt: str = "", *, clip: str = "c", confidence: float | None = None
) -> Edit:
    """An edit of ``kind`` at reference indices ``idx`` (an insertion's anchor) of clip ``clip``."""
    return Edit(
        clip_id=clip,
        kind=kind,
        position="start",
        ref_tokens=("w",) * (0 if kind == INSERTION else len(idx)),
        ref_indices=idx,
        alt_text=alt,
        n_panel_agree=3,
        n_panel=3,
        consensus_cer=None,
        miners=(),
        verdicts={},
        renderings={},
        confidence=confidence,
    )
