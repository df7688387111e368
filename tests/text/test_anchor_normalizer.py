"""The anchor preset's text steps equal the public code's (parentheses, CJK), checked by an oracle.

The oracle is written from ``shared/reference/refdis-algorithm.md`` ("Inputs"), independently of
:mod:`asr_audit.text.anchor`: a literal regex, the slow reference of Whisper's normalizer, a
character loop over the listed CJK code-point ranges, ``str.split`` for whitespace, and
``text_to_num.alpha2digit``.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asr_audit.text.anchor import anchor_normalizer
from asr_audit.text.normalize import get_normalizer
from asr_audit.text.text2num import with_text2num
from asr_audit.text.whisper_en import reference_normalizer

_OPENAI = reference_normalizer()  # the slow reference, itself checked against openai-whisper's source


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (
        0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0x3040 <= code <= 0x309F
        or 0x30A0 <= code <= 0x30FF
        or 0xAC00 <= code <= 0xD7AF
    )


def oracle(text: str, text2num: bool = False) -> str:
    """The public code's normalization of English text, step by step from the description."""
    text = re.sub("[(\uff08][^)\uff09]+?[)\uff09]", "", text)  # 1. halfwidth/fullwidth in any mix
    text = _OPENAI(text)  # 2. Whisper's EnglishTextNormalizer
    text = "".join(f" {ch} " if _is_cjk(ch) else ch for ch in text)  # 3. space out CJK
    text = " ".join(text.split())
    if text2num:  # 4. spelled numbers as digits
        from text_to_num import alpha2digit

        text = alpha2digit(text, "en")
    return text


HANDWRITTEN = [
    "Tokyo （東京） is big (really） and (mixed） too （half)",
    "（拍手） Thank you, Madam President.",
    "我们 thank you 東京タワー is tall ひらがな カタカナ",
    "(a）b) [x (y] z) <tag>（注）",
    "Twenty one （twenty two） ＡＢＣ ｆｕｌｌｗｉｄｔｈ",
    "한국어 텍스트 (주) 日本語テキスト、句読点。",
    "㐀㐁 𠀀 ー ・ 々",  # Extension A, a supplementary ideograph, prolonged sound mark, middle dot
    "（）() (） empty parens",
    "",
]


@pytest.mark.parametrize("text", HANDWRITTEN)
def test_anchor_steps_equal_the_oracle(text: str) -> None:
    anchor = anchor_normalizer(get_normalizer("whisper"))
    assert anchor(text).split() == oracle(text).split()
    assert with_text2num(anchor)(text).split() == oracle(text, text2num=True).split()


PIECES = st.sampled_from(
    [
        "（",
        "）",
        "(",
        ")",
        "東京",
        "タワー",
        "ひらがな",
        "한국",
        "漢字",
        "㐀",
        "Hello",
        "world",
        "twenty",
        "one",
        "Mr.",
        "colour",
        "it's",
        ",",
        "。",
        "、",
        " ",
        " ",
        "[noise]",
        "ｆｕｌｌ",
        "３",
        "'",
    ]
)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=16).map("".join))
def test_anchor_steps_equal_the_oracle_on_random_text(text: str) -> None:
    anchor = anchor_normalizer(get_normalizer("whisper"))
    assert anchor(text).split() == oracle(text).split()


def test_without_the_anchor_steps_the_tokens_differ() -> None:
    """The steps matter: Whisper's normalizer alone keeps fullwidth asides and CJK runs."""
    text = "（拍手） Thank you 東京タワー"
    assert get_normalizer("whisper")(text).split() == ["拍手", "thank", "you", "東京タワー"]
    assert oracle(text).split() == ["thank", "you", "東", "京", "タ", "ワ", "ー"]


def test_describe_names_the_extra_steps() -> None:
    info = anchor_normalizer(get_normalizer("whisper")).describe()
    assert info["name"] == "whisper"
    steps, label = info["anchor_steps"], info["label"]
    assert isinstance(steps, str) and isinstance(label, str)
    assert "CJK" in steps and "parenthesis" in label


def oracle_other_language(text: str, language: str) -> str:
    """The public code on non-English text: OpenAI's BasicTextNormalizer(remove_diacritics=True)."""
    from text_to_num import alpha2digit
    from whisper_normalizer.basic import BasicTextNormalizer

    # whisper_normalizer's class equals openai-whisper's for remove_diacritics=True (fixture test)

    text = re.sub("[(\uff08][^)\uff09]+?[)\uff09]", "", text)
    text = BasicTextNormalizer(remove_diacritics=True)(text)
    text = " ".join("".join(f" {ch} " if _is_cjk(ch) else ch for ch in text).split())
    try:
        return alpha2digit(text, language)
    except ValueError:  # unsupported language: unchanged
        return text


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Vingt et un élèves (environ）sont là, n'est-ce pas ?", "fr"),
        ("東京は、晴れです。（注）今日は暑い", "ja"),
        ("Dreiundzwanzig Größen （ungefähr) – „gut“", "de"),
        ("Привет (мир） один два", "ru"),
    ],
)
def test_anchor_steps_on_other_languages_equal_the_oracle(text: str, language: str) -> None:
    anchor = with_text2num(anchor_normalizer(get_normalizer("whisper-basic")), language)
    assert anchor(text).split() == oracle_other_language(text, language).split()
