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
    """A normalizer followed by ``text_to_num.alpha2digit(text, language)`` (spelled numbers as digits).

    One object, so that :func:`~asr_audit.text.normalize.normalize_many` caches the composed
    result and a warm run does neither step again. A language text2num does not support leaves
    the text unchanged, as in the paper's code.
    """

    def __init__(self, base, language: str = "en") -> None:  # noqa: ANN001
        from text_to_num import alpha2digit

        self.base = base
        self.language = language
        self.name = f"{base.name}+text2num" + ("" if language == "en" else f":{language}")
        self._alpha2digit = alpha2digit

    def __call__(self, text: str) -> str:
        out = self.base(text)
        if not out:
            return out
        try:
            return self._alpha2digit(out, self.language)
        except ValueError:  # "unsupported language xx"
            return out

    def describe(self) -> dict[str, Any]:
        extra = {} if self.language == "en" else {"text2num_language": self.language}
        return {**self.base.describe(), "text2num": True, **extra}


_TEXT2NUM: dict[tuple[int, str], Text2Num] = {}


def with_text2num(normalize, language: str = "en"):  # noqa: ANN001, ANN201
    """The shared :class:`Text2Num` over ``normalize`` (one per normalizer and language, so its cache is reused)."""
    composed = _TEXT2NUM.get((id(normalize), language))
    if composed is None or composed.base is not normalize:
        composed = _TEXT2NUM[(id(normalize), language)] = Text2Num(normalize, language)
    return composed
