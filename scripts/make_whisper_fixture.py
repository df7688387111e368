"""Regenerate the OpenAI Whisper normalizer fixtures from the real openai-whisper source.

``tests/fixtures/whisper_openai_normalizer.jsonl`` holds (input, expected) pairs where
``expected`` is what OpenAI Whisper's own ``EnglishTextNormalizer`` returns;
``tests/fixtures/whisper_openai_basic_normalizer.jsonl`` the same for
``BasicTextNormalizer(remove_diacritics=True)`` on multilingual text.
``tests/text/test_normalize_whisper_openai.py`` checks that asr-audit's ``whisper`` and
``whisper-basic`` normalizers return the same. Only ``whisper/normalizers/*.py`` is
loaded (as a stand-alone package), so neither torch nor the rest of openai-whisper is needed:

    pip download openai-whisper==20250625 --no-deps -d /tmp/ow
    tar xzf /tmp/ow/openai_whisper-20250625.tar.gz -C /tmp/ow
    PYTHONPATH=src python3 scripts/make_whisper_fixture.py /tmp/ow/openai_whisper-20250625

Inputs: the self-check sentences, the 1,500 shipped VoxPopuli references, sentences with the
words PyPI whisper-normalizer 0.1.15 rewrites (kinda, sorta, dunno, cause) and 2,000 seeded
random sentences built from number words, contractions, symbols and non-ASCII text.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
FIXTURE = FIXTURES / "whisper_openai_normalizer.jsonl"
BASIC_FIXTURE = FIXTURES / "whisper_openai_basic_normalizer.jsonl"
BASIC_TEXTS = [
    "Ça coûte 5€ (environ), n'est-ce pas ?",
    "Größe, Straße und Übermaß — „Zitat“",
    "¿Qué tal? ¡Muy bien!",
    "東京は、晴れです。（注）",
    "한국어 텍스트 (주) 입니다",
    "Привет, мир! Ёлка",
    "Ελληνικά: αύριο",
    "हिन्दी में लिखा गया पाठ",
    "ภาษาไทย ไม่มีช่องว่าง",
    "Œuvre ﬁn ½ ² ℃ ™ ® ©",
    "[noise] <unk> (aside) text",
    "łódź żółć ø æ ß ð þ",
    "Tiếng Việt có dấu",
    "العربية: مرحبا بالعالم",
    "עברית ניקוד שָׁלוֹם",
]
BASIC_CHARS = "aeiouxyz ÀÉÎÕÜçñßøæœ東京はタワー한국어Привет,.;:!?¿¡()[]<>{}«»„“”'\"-—–…·•€$£¥%&@#*/\\|~^`_+=0123456789½²ﬁ\t\n\u0301\u0308\u200b\u00a0"

WORDS = [
    "o",
    "oh",
    "zero",
    "one",
    "two",
    "five",
    "eleven",
    "twenty",
    "ninety",
    "twenties",
    "fiftieth",
    "hundred",
    "thousand",
    "million",
    "first",
    "second",
    "third",
    "and",
    "a",
    "half",
    "point",
    "double",
    "triple",
    "minus",
    "plus",
    "pound",
    "pounds",
    "euros",
    "dollars",
    "cents",
    "per",
    "percent",
    "colour",
    "organise",
    "centre",
    "grey",
    "the",
    "of",
    "is",
    "I",
    "won't",
    "can't",
    "let's",
    "it's",
    "Paul's",
    "he'd",
    "we'll",
    "they're",
    "I'm",
    "y'all",
    "ma'am",
    "wanna",
    "gonna",
    "cause",
    "'cause",
    "Cause",
    "because",
    "kinda",
    "sorta",
    "dunno",
    "Kinda",
    "Mr",
    "Mr.",
    "Dr.",
    "St",
    "uh",
    "um",
    "hmm",
    "naïve",
    "café",
    "Œuvre",
    "straße",
    "1",
    "10",
    "1,000",
    "3.5",
    "$5",
    "£3.50",
    "€20",
    "5%",
    "3:30",
    "-5°C",
    "(aside)",
    "[noise]",
    "<unk>",
    ".",
    ",",
    "!",
    "—",
    "'",
    "a.m.",
    "U.S.",
    "e-mail",
    "東京",
    "（注）",
    "한국",
    "peace",
]
SEPARATORS = [" ", " ", " ", "", "  ", ", ", ". ", "-"]
HANDWRITTEN = [
    "in the cause of peace",
    "'cause I dunno, it's kinda sorta fine",
    "The root cause was a cause célèbre.",
    "Kinda. Sorta? Dunno! Cause:",
    "because cause causes caused",
    "I kinda want twenty-one pounds 'cause it's sorta cheap",
]


def load_openai_normalizer(source: Path) -> Any:
    """``EnglishTextNormalizer()`` from ``<source>/whisper/normalizers`` without importing whisper."""
    return load_openai_module(source).EnglishTextNormalizer()


def load_openai_module(source: Path) -> Any:
    """``whisper/normalizers`` of an extracted openai-whisper sdist, loaded as a stand-alone package."""
    folder = source / "whisper" / "normalizers"
    spec = importlib.util.spec_from_file_location(
        "openai_whisper_normalizers", folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"{folder}: no whisper/normalizers package; pass the extracted openai-whisper sdist")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def basic_inputs(seed: int = 20250625, n_random: int = 1500) -> list[str]:
    rng = random.Random(seed)
    out = list(BASIC_TEXTS)
    for _ in range(n_random):
        out.append("".join(rng.choice(BASIC_CHARS) for _ in range(rng.randint(0, 30))))
    return list(dict.fromkeys(out))


def inputs(seed: int = 20250625, n_random: int = 2000) -> list[str]:
    from asr_audit.data import voxpopuli_texts
    from asr_audit.text.whisper_en import SELF_CHECK

    rng = random.Random(seed)
    out = [*SELF_CHECK, *HANDWRITTEN, *voxpopuli_texts()]
    for _ in range(n_random):
        parts = []
        for _ in range(rng.randint(0, 14)):
            parts += [rng.choice(WORDS), rng.choice(SEPARATORS)]
        out.append("".join(parts))
    return list(dict.fromkeys(out))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    normalize = load_openai_normalizer(Path(argv[1]))
    with FIXTURE.open("w", encoding="utf-8") as fh:
        for text in inputs():
            fh.write(json.dumps({"input": text, "expected": normalize(text)}, ensure_ascii=False) + "\n")
    basic = load_openai_module(Path(argv[1])).BasicTextNormalizer(remove_diacritics=True)
    with BASIC_FIXTURE.open("w", encoding="utf-8") as fh:
        for text in basic_inputs():
            fh.write(json.dumps({"input": text, "expected": basic(text)}, ensure_ascii=False) + "\n")
    print(f"wrote {FIXTURE} and {BASIC_FIXTURE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
