"""Differential test: the skip paths of the fast ``whisper`` normalizer change no output byte.

The fast normalizer (:mod:`asr_audit.text.whisper_en`) skips work it can prove is a no-op: the
number normalizer's ``preprocess``/``postprocess`` steps whose trigger characters are absent,
the per-token digit regex on alphabetic tokens, the spelling map when no token is in it, the
last whitespace collapse when no step added spaces; the anchor preset's collapse is one
``str.split``; the reference's ``process_words`` is remembered per run of number words. Each must return what the unmodified reference returns, so this runs the
reference (``whisper-normalizer``'s own ``EnglishTextNormalizer``, OpenAI's table) and the
fast path over a varied corpus: synthetic leaderboard texts (:mod:`asr_audit.testing`), the
VoxPopuli example sentences, and hand-written edge cases aimed at each skip, and compares the
outputs byte for byte (and the composed refdis normalizer: anchor steps + text2num).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from asr_audit.data import voxpopuli_texts
from asr_audit.testing.synthetic import make_prediction_set
from asr_audit.text.anchor import PAREN_SPAN, anchor_normalizer
from asr_audit.text.text2num import with_text2num
from asr_audit.text.whisper_en import FastNumberNormalizer, WhisperNormalizer

# Each line aims at one skip: "and a half" (preprocess goes to the reference), blank and
# whitespace-only strings (preprocess drops them), letter/digit boundaries and ordinal suffixes
# (the three preprocess regexes), currencies and cents (postprocess goes to the reference),
# "1"/"1s" (the last postprocess step), adjacent context words (the identity test), unicode
# digits and alphabetic non-ASCII tokens (the per-token digit test), British spellings (the
# map), symbols that add spaces (the final collapse), exotic whitespace, brackets, CJK.
EDGE_CASES: tuple[str, ...] = (
    "",
    " ",
    "\t\n",
    "\u3000\xa0\x1c\x1d\x1e\x1f\x85",
    "two and a half million",
    "and a half",
    "one and a half and a half",
    "the half of it, and a  half",
    "half and half",
    "a1 b2 3c 4th 21 st 22 nd 3 rd 5 th the 1960 s 90s",
    "abc123def 7up r2d2 mp3",
    "1",
    "1s",
    "the 1s and 10s",
    "one 1 11 1.1 1,000 01",
    "$1",
    "$2 and ¢7",
    "£0.07 €0.5 $0.99 $0.100",
    "$ 5 £ € ¢",
    "20 dollars and 7 cents",
    "minus and",
    "and and",
    "point point",
    "per cent per",
    "double triple",
    "plus minus negative positive",
    "and minus point and",
    "it is the point and the per",
    "٣ cats ² ³ ① ½ ٠١٢ ৩",
    "Ⅻ ⅻ ᛮ 〇",
    "the cat ٣",
    "naïve café Œuvre straße ﬁn ǅ",
    "colour favour organise realise programme",
    "flyer / flier flyer",
    "harmonisation of the labour market programme, the organisation's behaviour",
    "i.e. e.g. a.m. p.m. u.s. 3.5 .5 5. ...",
    "50% % 10 % 5%5 x%",
    "$5. £.50 .$ $. €",
    "(aside) [noise] <unk> ((nested)) [unclosed (open",
    "（全角） 東京タワー 한국어 ひらがな",
    "won't can't let's ain't i'ma ma'am he'd been she's gone 'cause",
    "Mr. Mrs. Dr St. Jr. Sr. Hon. Prof.",
    "uh hmm um mm mhm mmm uhm",
    "gonna wanna gotta imma woulda coulda shoulda",
    "e mail e-mail",
    "twenty-one twenty one hundred and five",
    "first second third fourth twenty-first hundredth",
    "oh one oh double oh triple seven",
    "one oh one point five",
    "zero o nought",
    "the first of July, one oh one, double seven, point five, twenty-one euros.",
    "I won't pay $20 million and a half, it's two hundred and five percent!",
    "Ma'am, y'all gonna wanna see Dr Jones's £3.50 — naïve café, ŒUVRE ß.",
    "  <tag> spaces\tand\nnewlines ... 10% 50 % 4th 1960s the 90s ",
)


def _synthetic_texts(folder: Path, n_clips: int) -> list[str]:
    make_prediction_set(n_clips, 6, rng=np.random.default_rng(7), folder=folder, copy_shares=(0.9,))
    texts: list[str] = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts.append(row["text"])
            if row["pred_text"] is not None:
                texts.append(row["pred_text"])
    return list(dict.fromkeys(texts))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    synthetic = _synthetic_texts(tmp_path_factory.mktemp("synthetic"), 700)
    texts = [*EDGE_CASES, *synthetic, *voxpopuli_texts()]
    # each case also lower-case, upper-case and joined to its neighbour (numbers meeting across)
    texts += [t.upper() for t in EDGE_CASES] + [f"{a} {b}" for a, b in zip(EDGE_CASES, EDGE_CASES[1:])]
    return texts


@pytest.fixture(scope="module")
def whisper() -> WhisperNormalizer:
    normalizer = WhisperNormalizer()
    assert normalizer.fast and normalizer.self_check_failures == 0
    return normalizer


@pytest.fixture(scope="module")
def expected(whisper: WhisperNormalizer, corpus: list[str]) -> list[str]:
    """The reference's output on every corpus text (computed once)."""
    return [whisper.reference(t) for t in corpus]


def test_corpus_is_large_and_varied(corpus: list[str]) -> None:
    assert len(corpus) > 4000
    assert sum(bool(re.search(r"\d", t)) for t in corpus) > 300  # the number stage's slow path runs


def test_fast_whisper_equals_reference_byte_for_byte(
    whisper: WhisperNormalizer, corpus: list[str], expected: list[str]
) -> None:
    mismatches = [(t, got, want) for t, want in zip(corpus, expected) if (got := whisper(t)) != want]
    assert mismatches == []


def test_number_stage_skips_equal_reference(corpus: list[str]) -> None:
    """preprocess / postprocess / the whole number normalizer against the reference's own."""
    fast = FastNumberNormalizer()
    ref = fast.reference
    lowered = [t.lower() for t in corpus]
    assert [fast.preprocess(t) for t in lowered] == [ref.preprocess(t) for t in lowered]
    assert [fast.postprocess(t) for t in lowered] == [ref.postprocess(t) for t in lowered]
    assert [fast(t) for t in lowered] == [ref(t) for t in lowered]


def test_remembered_number_runs_equal_the_reference(corpus: list[str]) -> None:
    """``process_words`` remembers the reference's output per run of number words: first calls,
    repeated calls (memo hits) and calls after the memo was emptied (a tiny limit) all give
    the reference's output."""
    lowered = [t.lower() for t in corpus]
    want = [list(FastNumberNormalizer().reference.process_words(t.split())) for t in lowered]
    want = [[w for w in words if w is not None] for words in want]
    fast = FastNumberNormalizer()
    assert [fast.process_words(t.split()) for t in lowered] == want
    assert len(fast._memo) > 50  # the corpus has many runs of number words
    assert [fast.process_words(t.split()) for t in lowered] == want  # now from the memo
    tiny = FastNumberNormalizer()
    tiny.RUN_MEMO = 4
    assert [tiny.process_words(t.split()) for t in lowered * 2] == want * 2
    assert len(tiny._memo) <= 4


def test_ascii_word_run_table_names_every_ascii_character() -> None:
    """``word_runs``' ASCII table maps every ASCII code (a missing one would still be correct,
    only slow): word characters to themselves, the rest to a space, as ``\\w`` decides."""
    from asr_audit.text.replacers import _ASCII_NON_WORD

    assert sorted(_ASCII_NON_WORD) == list(range(128))
    assert all(_ASCII_NON_WORD[c] == (chr(c) if re.fullmatch(r"\w", chr(c)) else " ") for c in range(128))


def test_composed_refdis_normalizer_equals_reference_steps(
    whisper: WhisperNormalizer, corpus: list[str], expected: list[str]
) -> None:
    """The anchor preset's normalizer (parenthesis step, whisper, CJK step, text2num) against the
    same steps written out over the reference, with the regex whitespace collapse."""
    from text_to_num import alpha2digit

    cjk = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\u3040-\u309f\u30a0-\u30ff\uac00-\ud7af])")

    def reference(text: str, whispered: str | None = None) -> str:
        out = whisper.reference(PAREN_SPAN.sub("", text)) if whispered is None else whispered
        out = re.sub(r"\s+", " ", cjk.sub(r" \1 ", out)).strip()
        return alpha2digit(out, "en") if out else out

    composed = with_text2num(anchor_normalizer(whisper))
    # the parenthesis step changes only texts with a parenthesis: reuse the reference's output elsewhere
    want = [reference(t, None if ("(" in t or "（" in t) else w) for t, w in zip(corpus, expected)]
    assert [composed(t) for t in corpus] == want


def test_regex_whitespace_is_str_split_whitespace() -> None:
    """The collapse skips rest on ``\\s`` (regex) and ``str.split`` agreeing on every code point."""
    everything = "".join(map(chr, range(0x110000)))
    assert re.findall(r"\s", everything) == [c for c in everything if c.isspace()]


def test_alphabetic_tokens_hold_no_digit() -> None:
    """The per-token digit test is skipped on ``str.isalpha`` tokens: no code point is both."""
    everything = "".join(map(chr, range(0x110000)))
    assert not [c for c in re.findall(r"\d", everything) if c.isalpha()]
