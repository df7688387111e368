"""The public reference code's text steps around a normalizer (``refdis --preset anchor``).

The paper's public scoring code (``normalize.py``; see ``docs/refdis.md``) does more than run
Whisper's normalizer. In order:

1. remove every parenthesized span whose brackets are halfwidth or fullwidth in any mix,
   regex :data:`PAREN_SPAN` (``[(（][^)）]+?[)）]``), on the raw text;
2. the normalizer (Whisper's ``EnglishTextNormalizer`` for English);
3. put a space around every CJK character (:data:`CJK_RANGES`: CJK Extension A, CJK Unified
   Ideographs, Hiragana, Katakana, Hangul syllables), then collapse whitespace and strip;
4. spelled numbers as digits (``text2num``; asr-audit composes that step outside, see
   :func:`asr_audit.text.text2num.with_text2num`).

:class:`AnchorNormalizer` wraps a normalizer with steps 1 and 3, so that the ``anchor`` preset
feeds the miner the very tokens the public code does, on any text (CJK, fullwidth
parentheses), not only on ASCII English. Only the anchor preset uses it.

>>> from asr_audit.text.normalize import get_normalizer
>>> anchor = anchor_normalizer(get_normalizer("whisper"))
>>> anchor("Tokyo （東京） is big (really） 東京タワー")
'tokyo is big 東 京 タ ワ ー'
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["CJK_RANGES", "PAREN_SPAN", "AnchorNormalizer", "anchor_normalizer"]

PAREN_SPAN = re.compile(r"[(（][^)）]+?[)）]")
CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0xAC00, 0xD7AF),  # Hangul syllables
)
_CJK = re.compile("([" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "])")

STEPS = (
    "remove [(（][^)）]+?[)）] spans before normalizing; after it, space out CJK characters "
    "(U+3400-4DBF, U+4E00-9FFF, U+3040-309F, U+30A0-30FF, U+AC00-D7AF), collapse whitespace, strip"
)


class AnchorNormalizer:
    """``base`` with the public code's parenthesis step before it and CJK step after it."""

    def __init__(self, base: Any) -> None:
        self.base = base
        self.name = f"{base.name}+anchor"

    def __call__(self, text: str) -> str:
        if "(" in text or "（" in text:  # either opening parenthesis: two substring tests, no per-character loop
            text = PAREN_SPAN.sub("", text)
        out = self.base(text)
        if not out.isascii():
            out = _CJK.sub(r" \1 ", out)
        return " ".join(out.split())  # = _WS.sub(" ", out).strip(): \s and str.split share one whitespace set

    def describe(self) -> dict[str, object]:
        """The base normalizer's description plus the public code's extra steps."""
        info = dict(self.base.describe())
        label = info.get("label", info.get("name", ""))
        info["label"] = f"{label} + the public code's parenthesis and CJK steps"
        info["anchor_steps"] = STEPS
        return info


_SHARED: dict[int, AnchorNormalizer] = {}


def anchor_normalizer(base: Any) -> AnchorNormalizer:
    """The shared :class:`AnchorNormalizer` over ``base`` (one per base, so its cache is reused)."""
    wrapped = _SHARED.get(id(base))
    if wrapped is None or wrapped.base is not base:
        wrapped = _SHARED[id(base)] = AnchorNormalizer(base)
    return wrapped
