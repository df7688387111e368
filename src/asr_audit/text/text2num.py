"""A normalizer composed with ``text_to_num.alpha2digit``: spelled numbers become digits.

The reference-disagreement probe (and the battery when it measures accept-ref) compares
normalized texts after this step, as the paper's code does. The composition is one named
normalizer object (``<base>+text2num``), so :func:`~asr_audit.text.normalize.normalize_many`
caches the composed result and a warm run does neither step again.

>>> from asr_audit.text.normalize import get_normalizer
>>> t = with_text2num(get_normalizer("whisper"))
>>> t.name, t("Twenty three members voted.")
('whisper+text2num', '23 members voted')
>>> with_text2num(get_normalizer("whisper")) is t  # one shared object per base normalizer
True
"""

from __future__ import annotations

from typing import Any


class Text2Num:
    """A normalizer followed by ``text_to_num.alpha2digit`` (spelled numbers as digits).

    One object, so that :func:`~asr_audit.text.normalize.normalize_many` caches the composed
    result and a warm run does neither step again.
    """

    def __init__(self, base) -> None:  # noqa: ANN001
        from text_to_num import alpha2digit

        self.base = base
        self.name = f"{base.name}+text2num"
        self._alpha2digit = alpha2digit

    def __call__(self, text: str) -> str:
        out = self.base(text)
        return self._alpha2digit(out, "en") if out else out

    def describe(self) -> dict[str, Any]:
        return {**self.base.describe(), "text2num": True}


_TEXT2NUM: dict[int, Text2Num] = {}


def with_text2num(normalize):  # noqa: ANN001, ANN201
    """The shared :class:`Text2Num` over ``normalize`` (one per normalizer, so its cache is reused)."""
    composed = _TEXT2NUM.get(id(normalize))
    if composed is None or composed.base is not normalize:
        composed = _TEXT2NUM[id(normalize)] = Text2Num(normalize)
    return composed
