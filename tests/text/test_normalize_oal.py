"""The ``oal`` normalizer follows the Open ASR Leaderboard's documented English pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.data import voxpopuli_texts
from asr_audit.text.oal import FILLERS, REPLACERS, OalNormalizer, collapse_acronyms, load_table
from asr_audit.text.whisper_en import WhisperNormalizer


@pytest.fixture(scope="module")
def oal() -> OalNormalizer:
    return OalNormalizer()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # the documented differences from Whisper
        ("u s a", "usa"),
        ("p m", "pm"),
        ("ok", "okay"),
        ("e mail", "email"),
        ("paul's", "paul s"),
        ("3/4", "34"),
        ("-5°C", "5c"),
        ("a big cat", "a big cat"),
        ("b b c", "bbc"),
        ("5 g", "5g"),
        # 1 lowercase, 2 brackets and parentheses
        ("HELLO World", "hello world"),
        ("hello [noise] <unk> there (laughs) friend", "hello there friend"),
        # 3 fillers, Whisper's and the leaderboard's extra ones, whole words only
        ("uh so um ah eh huh hmm well", "so well"),
        ("the ahead human emblem", "the ahead human emblem"),
        # 4 space before apostrophe, 5 contractions
        ("it 's fine", "it is fine"),
        ("I won't, you can't, let's go", "i will not you can not let us go"),
        ("y'all gonna wanna see, ma'am", "you all going to want to see madam"),
        ("I'ma leave", "i am going to leave"),
        ("she'd been there, he's gone", "she had been there he has gone"),
        ("they're here, we'll see, I've, I'm, you'd", "they are here we will see i have i am you would"),
        ("what's that, who's there", "what is that who is there"),
        ("the dog's bone", "the dog s bone"),
        # 5 title abbreviations
        ("Mr. Smith and Dr Jones", "mister smith and doctor jones"),
        ("St. Paul, Prof. Lee, Sen. Ray, Jr.", "saint paul professor lee senator ray junior"),
        # 6 digit commas and periods, 7 symbols and diacritics
        ("1,000,000 people.", "1000000 people"),
        ("3.5 percent", "3.5%"),
        ("naïve café — Œuvre", "naive cafe oeuvre"),
        # 8 compounds
        ("et cetera, all right, how ever", "etc alright however"),
        ("wi fi, sci fi, x ray, t shirt", "wifi scifi xray tshirt"),
        ("at 7 a m", "at 7 am"),
        ("o k then", "okay then"),
        # 9 numbers (Whisper's normalizer)
        ("twenty five dollars", "$25"),
        ("the first of two hundred", "the 1st of 200"),
        ("fifty percent", "50%"),
        # 10 spelling map then name map
        ("the colour of the theatre", "the color of the theater"),
        ("etcetera", "etc"),
        ("Micheal met Kathy and Jon", "michael met cathy and john"),
        # 11 acronyms
        ("the f b i and the c i a", "the fbi and the cia"),
        ("i a m", "i am"),  # step 8 turns "a m" into "am" before step 11
        ("x i a", "xia"),
        ("i am a b", "i am a b"),
        ("B.B.C. news", "bbc news"),
        # 12 trailing symbols and whitespace
        ("price . $ in  total", "price in total"),
        ("  spaced\tout \n", "spaced out"),
        ("", ""),
    ],
)
def test_pipeline_cases(oal: OalNormalizer, raw: str, expected: str) -> None:
    assert oal(raw) == expected


def test_differs_from_whisper_where_documented(oal: OalNormalizer) -> None:
    whisper = WhisperNormalizer()
    assert whisper("paul's").strip() == "paul is"
    assert oal("paul's") == "paul s"
    assert whisper("u s a").strip() == "u s a"
    assert whisper("3/4").strip() == "3 4"


def test_tables_are_packaged_with_notice() -> None:
    spelling = load_table("english_spelling_normalizer")
    names = load_table("english_name_normalizer")
    compounds = load_table("english_compound_normalizer")
    assert (len(spelling), len(names), len(compounds)) == (1743, 152, 16)
    assert spelling["ok"] == "okay" and names["micheal"] == "michael"
    assert list(compounds)[0] == r"\bet\s+cetera\b"
    from importlib import resources

    notice = (resources.files("asr_audit") / "data" / "oal" / "NOTICE.md").read_text()
    assert "Apache License 2.0" in notice and "d1e99b2" in notice


def test_spelling_then_name_map_per_token(oal: OalNormalizer) -> None:
    spelling = load_table("english_spelling_normalizer")
    names = load_table("english_name_normalizer")
    for word in list(spelling)[:200] + list(names):
        step = spelling.get(word, word)
        assert oal(word) == collapse_acronyms([names.get(step, step)])[0] or len(word) == 1


def test_replacer_and_filler_lists_match_the_documentation() -> None:
    assert len(FILLERS) == 20 and "uhuh" in FILLERS
    assert REPLACERS[r"\bmr\b"] == "mister "
    keys = list(REPLACERS)
    assert keys.index(r"'s got\b") < keys.index(r"n't\b") < keys.index(r"'m\b")
    assert r"'s\b" not in REPLACERS


def test_fixture_sentences_normalize_without_error(oal: OalNormalizer) -> None:
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "voxpopuli"
    rows = [json.loads(x) for x in (fixtures / "whisper-tiny.en.jsonl").read_text().splitlines()]
    outputs = [oal(row["pred_text"]) for row in rows]
    assert all(out == out.strip() and "  " not in out for out in outputs)
    assert sum(bool(out) for out in outputs) >= 145


def test_describe(oal: OalNormalizer) -> None:
    info = oal.describe()
    assert info["name"] == "oal" and info["package"] == "whisper-normalizer"
    assert info["package_version"] not in ("", "unknown")


_TABLES = tuple(
    load_table(name)
    for name in ("english_spelling_normalizer", "english_name_normalizer", "english_compound_normalizer")
)


def _naive_oal(text: str) -> str:
    """The documented pipeline written plainly: sequential re.sub, the package's functions."""
    import re

    from whisper_normalizer.basic import remove_symbols_and_diacritics
    from whisper_normalizer.english import EnglishNumberNormalizer

    spelling, names, compounds = _TABLES
    s = text.lower()
    s = re.sub(r"[<\[][^>\]]*[>\]]", "", s)
    s = re.sub(r"\(([^)]+?)\)", "", s)
    s = re.sub(r"\b(" + "|".join(FILLERS) + r")\b", "", s)
    s = re.sub(r"\s+'", "'", s)
    for pattern, replacement in REPLACERS.items():
        s = re.sub(pattern, replacement, s)
    s = re.sub(r"(\d),(\d)", r"\1\2", s)
    s = re.sub(r"\.([^0-9]|$)", r" \1", s)
    s = remove_symbols_and_diacritics(s, keep=".%$¢€£")
    for pattern, replacement in compounds.items():
        s = re.sub(pattern, replacement, s)
    s = EnglishNumberNormalizer()(s)
    s = " ".join(spelling.get(w, w) for w in s.split())
    s = " ".join(names.get(w, w) for w in s.split())
    s = " ".join(collapse_acronyms(s.split()))
    s = re.sub(r"[.$¢€£]([^0-9])", r" \1", s)
    s = re.sub(r"([^0-9])%", r"\1 ", s)
    return re.sub(r"\s+", " ", s).strip()


def test_fixture_sentences_match_naive_pipeline(oal: OalNormalizer) -> None:
    for text in voxpopuli_texts()[:600]:  # the first two files
        assert oal(text) == _naive_oal(text), text


OAL_WORDS = [
    "u",
    "s",
    "a",
    "b",
    "c",
    "i",
    "p",
    "m",
    "e",
    "mail",
    "x",
    "ray",
    "all",
    "right",
    "ok",
    "o",
    "k",
    "kay",
    "colour",
    "Micheal",
    "Kathy",
    "paul's",
    "it's",
    "who's",
    "won't",
    "I'm",
    "Mr.",
    "St",
    "uh",
    "ehehe",
    "huh",
    "5",
    "3/4",
    "-5°C",
    "twenty",
    "one",
    "first",
    "dollars",
    "percent",
    "and",
    "a",
    "half",
    "point",
    "1,000",
    "3.5",
    "$",
    "£3.50",
    "%",
    "[noise]",
    "(aside)",
    "naïve",
    "g",
    "5g",
    "etcetera",
    "et",
    "cetera",
    "the",
    "of",
    "is",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(OAL_WORDS), max_size=12), st.sampled_from([" ", ", ", ". ", "-"]))
def test_random_sentences_match_naive_pipeline(oal: OalNormalizer, words: list[str], sep: str) -> None:
    text = sep.join(words)
    assert oal(text) == _naive_oal(text)
