"""OpenAI Whisper's English text normalizer (and PyPI ``whisper-normalizer`` 0.1.15's), faster.

Two references, one per registered name:

* ``whisper`` — OpenAI Whisper's own ``EnglishTextNormalizer`` (``openai-whisper``,
  ``whisper/normalizers/english.py``, unchanged since 2022; checked against release
  :data:`OPENAI_WHISPER_RELEASE`), including the en-GB -> en-US spelling map. It is built from
  ``whisper-normalizer`` 0.1.15's tables with the four replacers that package adds removed
  (:data:`WHISPER_NORMALIZER_ADDITIONS`: kinda, sorta, dunno, cause); every other table of that
  package equals OpenAI's (``tests/text/test_normalize_whisper_openai.py`` compares outputs
  with a fixture generated from the ``openai-whisper`` source).
* ``whisper-normalizer-0.1.15`` — :class:`whisper_normalizer.english.EnglishTextNormalizer` as
  shipped (so "in the cause of peace" -> "in the because of peace"); asr-audit's ``whisper``
  before 0.2.

:class:`WhisperNormalizer` runs the same twelve steps with the reference's own tables
(replacer patterns, filler pattern, spelling map, number-normalizer vocabulary) and changes
only *how* each step runs, never what it returns:

* every regex is compiled once; the filler pattern and the ordered replacers run through
  :class:`~asr_audit.text.replacers.ReplacerPlan`, which skips a ``re.sub`` only when its
  pattern provably cannot match (its words are not word runs, its literal is absent);
* symbol and diacritic removal is one ``str.translate`` over the NFKD string with a
  per-character table filled lazily by calling the reference function on that character;
* the number normalizer is skipped when it provably returns ``" ".join(s.split())``
  (see :class:`FastNumberNormalizer`); where it runs, its ``preprocess`` / ``postprocess``
  steps run only when their trigger characters occur;
* the spelling map is looked up only when a token is in it, and the last whitespace collapse
  runs only after a step that adds spaces (the tokens of ``str.split`` hold none).

``tests/text/test_normalize_fast_equivalence.py`` compares every skip with the reference over
synthetic leaderboard texts, the VoxPopuli examples and hand-written edge cases.

At construction the fast path is checked against the reference on :data:`SELF_CHECK`
sentences; if any differ (an unexpected ``whisper-normalizer`` version), the instance falls
back to the reference and says so in :meth:`WhisperNormalizer.describe`.
"""

from __future__ import annotations

import re
import unicodedata
from importlib import metadata
from typing import Any

from asr_audit.text.replacers import ReplacerPlan, word_alternatives, word_runs

__all__ = [
    "OPENAI_WHISPER",
    "OPENAI_WHISPER_RELEASE",
    "SELF_CHECK",
    "WHISPER_NORMALIZER_0_1_15",
    "WHISPER_NORMALIZER_ADDITIONS",
    "FastNumberNormalizer",
    "SymbolTable",
    "WhisperBasicNormalizer",
    "WhisperNormalizer",
    "package_version",
    "reference_normalizer",
]

_DIGIT = re.compile(r"\d")
_ASCII_DIGIT = re.compile(r"[0-9]")
_WS = re.compile(r"\s+")
_NUMERIC = re.compile(r"^\d+(\.\d+)?$")

# Sentences exercising every step; fast and reference outputs must agree on each at load time.
SELF_CHECK: tuple[str, ...] = (
    "Mr. Smith's colour was grey; he'd been there at 3:30 p.m. [noise] (aside)",
    "I won't pay $20 million and a half, it's two hundred and five percent!",
    "The first of July, one oh one, double seven, point five, twenty-one euros.",
    "Ma'am, y'all gonna wanna see Dr Jones's £3.50 — naïve café, ŒUVRE ß.",
    "minus and, point and, per cent, plus dollars, double a",
    "triple oh, negative point, positive",
    "five and a half, and a half of it, a half million",
    "uh hmm um, We'll've they're you've I'm; St Paul's 1,000,000 1.5 $0.07 ¢5",
    "  <tag> spaces\tand\nnewlines ... 10% 50 % 4th 1960s the 90s ",
    "",
)


OPENAI_WHISPER = "whisper"
WHISPER_NORMALIZER_0_1_15 = "whisper-normalizer-0.1.15"
OPENAI_WHISPER_RELEASE = "20250625"  # the openai-whisper release the test fixture was made with

# Replacers PyPI whisper-normalizer 0.1.15 adds to OpenAI's table (absent from openai-whisper).
WHISPER_NORMALIZER_ADDITIONS: dict[str, str] = {
    r"\bkinda\b": "kind of",
    r"\bsorta\b": "sort of",
    r"\bdunno\b": "do not know",
    r"\bcause\b": "because",
}

_VARIANTS: dict[str, dict[str, str]] = {
    OPENAI_WHISPER: {
        "label": f"whisper (OpenAI Whisper EnglishTextNormalizer, openai-whisper {OPENAI_WHISPER_RELEASE})",
        "implementation": "openai-whisper whisper/normalizers/english.py EnglishTextNormalizer",
        "source": f"openai-whisper {OPENAI_WHISPER_RELEASE} (PyPI), whisper/normalizers/english.py; "
        "run from whisper-normalizer 0.1.15's tables without its kinda/sorta/dunno/cause replacers",
    },
    WHISPER_NORMALIZER_0_1_15: {
        "label": "whisper-normalizer-0.1.15 (PyPI whisper-normalizer 0.1.15 EnglishTextNormalizer)",
        "implementation": "whisper_normalizer.english.EnglishTextNormalizer",
        "source": "PyPI whisper-normalizer 0.1.15: OpenAI's EnglishTextNormalizer plus "
        "kinda/sorta/dunno/cause replacers",
    },
}


def reference_normalizer(variant: str = OPENAI_WHISPER) -> Any:
    """The slow reference of ``variant`` (``whisper`` or ``whisper-normalizer-0.1.15``).

    For ``whisper`` this is ``whisper-normalizer``'s ``EnglishTextNormalizer`` with the
    replacers of :data:`WHISPER_NORMALIZER_ADDITIONS` removed, which is OpenAI's table.

    >>> reference_normalizer()("in the cause of peace, kinda")
    'in the cause of peace kinda'
    >>> reference_normalizer("whisper-normalizer-0.1.15")("in the cause of peace, kinda")
    'in the because of peace kind of'
    """
    from whisper_normalizer.english import EnglishTextNormalizer

    if variant not in _VARIANTS:
        raise ValueError(f"unknown Whisper normalizer variant {variant!r}; valid: {', '.join(_VARIANTS)}")
    ref = EnglishTextNormalizer()
    if variant == OPENAI_WHISPER:
        for pattern, replacement in WHISPER_NORMALIZER_ADDITIONS.items():
            if ref.replacers.get(pattern) != replacement:
                raise RuntimeError(
                    f"whisper-normalizer {package_version('whisper-normalizer')} lacks its replacer "
                    f"{pattern!r}; fix: install whisper-normalizer==0.1.15 (asr-audit derives OpenAI's "
                    "table from it)"
                )
            del ref.replacers[pattern]
    return ref


def package_version(dist: str) -> str:
    """Installed version of a distribution, or ``"unknown"``.

    >>> package_version("definitely-not-installed-xyz")
    'unknown'
    """
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


class SymbolTable(dict[int, str]):
    """``str.translate`` table equal to ``remove_symbols_and_diacritics(c, keep)`` per character.

    Valid only on NFKD-normalized text (each character of an NFKD string is its own NFKD
    form, so the reference function applied to one character returns exactly what it
    contributes inside the whole string).
    """

    def __init__(self, keep: str) -> None:
        super().__init__()
        from whisper_normalizer.basic import remove_symbols_and_diacritics

        self._keep = keep
        self._ref = remove_symbols_and_diacritics
        for code in range(128):
            self[code]

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if unicodedata.normalize("NFKD", char) != char:  # never on NFKD input
            raise ValueError(f"SymbolTable needs NFKD text; got U+{code:04X}")
        out = self._ref(char, keep=self._keep)
        self[code] = out
        return out

    def apply(self, text: str) -> str:
        """NFKD-normalize ``text`` and remove symbols/diacritics (the reference step)."""
        return unicodedata.normalize("NFKD", text).translate(self)


class FastNumberNormalizer:
    """Whisper's ``EnglishNumberNormalizer`` with a proven identity fast path.

    The vocabulary comes from the wrapped normalizer's own tables. Words that start or
    change a number (zeros, ones, tens, multipliers and their suffixed forms) are
    *triggers*; the rest of its vocabulary (prefixers, suffixers, specials such as "and",
    "point") are *context* words. Reading ``process_words``: without digits and triggers no
    number value is ever started, so a context word is emitted unchanged unless the next
    token is itself in the vocabulary ("minus and" -> "-and", "point and" -> "and"). The
    pre-processing regexes need a digit or "and a half"; the post-processing ones need a
    digit. Hence when a string has no digit (``\\d``), no "and a half", no trigger, and no
    context word followed by a vocabulary word, the output is ``" ".join(s.split())``.
    Anything else goes to the reference.
    """

    def __init__(self, reference: Any | None = None) -> None:
        if reference is None:
            from whisper_normalizer.english import EnglishNumberNormalizer

            reference = EnglishNumberNormalizer()
        ref = reference
        self.reference = ref
        self.triggers: frozenset[str] = frozenset().union(
            ref.zeros,
            ref.ones,
            ref.ones_suffixed,
            ref.tens,
            ref.tens_suffixed,
            ref.multipliers,
            ref.multipliers_suffixed,
        )
        self.context: frozenset[str] = frozenset().union(
            ref.preceding_prefixers, ref.following_prefixers, ref.suffixers, ref.specials
        )
        self.words: frozenset[str] = frozenset(ref.words)
        # The proof covers exactly these categories; a new one disables the fast path.
        self.enabled = (self.triggers | self.context) == self.words
        self.prefixes: frozenset[str] = frozenset(ref.prefixes)
        self._memo: dict[tuple[str, ...], tuple[Any, ...]] = {}  # run -> reference output (see _run)
        self._half = re.compile(r"\band\s+a\s+half\b")
        # the reference's preprocess / postprocess patterns, compiled once (see _preprocess)
        self._letter_digit = re.compile(r"([a-z])([0-9])")
        self._digit_letter = re.compile(r"([0-9])([a-z])")
        self._digit_suffix = re.compile(r"([0-9])\s+(st|nd|rd|th|s)\b")
        self._one = re.compile(r"\b1(s?)\b")

    def identity_tokens(self, s: str) -> list[str] | None:
        """``s.split()`` when the normalizer provably leaves those tokens unchanged, else None."""
        if not self.enabled or _DIGIT.search(s) is not None:
            return None
        tokens = s.split()
        if not self.triggers.isdisjoint(tokens):
            return None
        present = self.context.intersection(tokens)
        if present:
            # no trigger is present, so a vocabulary word after a context word is a context word:
            # look for two adjacent context words (tokens hold no whitespace, so " a b " occurs
            # in the space-joined tokens exactly when token b follows token a)
            joined = f" {' '.join(tokens)} "
            for current in present:
                for nxt in present:
                    if f" {current} {nxt} " in joined:
                        return None
        if "half" in s and self._half.search(s) is not None:
            return None
        return tokens

    def process_words(self, words: list[str]) -> list[str]:
        """The reference ``process_words``, run only on the runs of words that need it.

        A *breaker* token (not in the vocabulary, not numeric even without a currency or
        sign prefix) takes the reference's "non-numeric word" branch: it flushes any
        pending number, is emitted unchanged and resets the whole state; as the neighbour
        of another token it fails every ``next``/``prev`` test. So the output is the
        concatenation over breakers of the reference applied to the runs between them.
        A run that is one context word is emitted unchanged (nothing follows it).
        """
        out: list[str] = []
        run: list[str] = []
        vocab, context = self.words, self.context
        for token in words:
            # an alphabetic token holds no digit (\d is category Nd, never alphabetic): no regex for it
            if token in vocab or (not token.isalpha() and _DIGIT.search(token) is not None and self._numeric(token)):
                run.append(token)
                continue
            if run:
                out.extend(run if len(run) == 1 and run[0] in context else self._run(run))
                run = []
            out.append(token)
        if run:
            out.extend(run if len(run) == 1 and run[0] in context else self._run(run))
        return [word for word in out if word is not None]

    RUN_MEMO = 1 << 16  # runs remembered (the memo is emptied when full)

    def _run(self, run: list[str]) -> tuple[Any, ...]:
        """The reference ``process_words(run)``, remembered per run: a pure function of the run's
        tokens (its state is local to one call; it reads only the normalizer's fixed tables)."""
        key = tuple(run)
        got = self._memo.get(key)
        if got is None:
            got = tuple(self.reference.process_words(run))
            if len(self._memo) >= self.RUN_MEMO:
                self._memo.clear()
            self._memo[key] = got
        return got

    def _numeric(self, token: str) -> bool:
        if _NUMERIC.match(token) is not None:
            return True
        return token[0] in self.prefixes and _NUMERIC.match(token[1:]) is not None

    def __call__(self, s: str) -> str:
        tokens = self.identity_tokens(s)
        if tokens is not None:
            return " ".join(tokens)
        return self.normalize_slow(s)

    def normalize_slow(self, s: str) -> str:
        """The reference ``__call__`` with :meth:`process_words`, :meth:`preprocess` and
        :meth:`postprocess` swapped in."""
        s = self.preprocess(s)
        s = " ".join(self.process_words(s.split()))
        return self.postprocess(s)

    def preprocess(self, s: str) -> str:
        """The reference ``preprocess``, skipping the steps that cannot match.

        Without "half" its ``re.split`` on "and a half" returns ``[s]``, so its join gives
        ``s`` back (``""`` for a blank ``s``, a segment it drops); its three substitutions each
        need an ASCII digit (``[0-9]``). Anything with "half" goes to the reference.
        """
        if "half" in s:
            return self.reference.preprocess(s)
        if not s.strip():
            return ""
        if _ASCII_DIGIT.search(s) is None:
            return s
        s = self._letter_digit.sub(r"\1 \2", s)
        s = self._digit_letter.sub(r"\1 \2", s)
        return self._digit_suffix.sub(r"\1\2", s)

    def postprocess(self, s: str) -> str:
        """The reference ``postprocess``, skipping the steps that cannot match: both currency
        steps need one of ``€£$`` (then the reference runs), the last one needs a ``1``."""
        if "$" in s or "€" in s or "£" in s:
            return self.reference.postprocess(s)
        if "1" not in s:
            return s
        return self._one.sub(r"one\1", s)


class WhisperBasicNormalizer:
    """``whisper-basic``: OpenAI Whisper's ``BasicTextNormalizer(remove_diacritics=True)``.

    What the paper's public code applies to non-English text (``--preset anchor`` with a
    non-English ``--language``). ``whisper-normalizer`` 0.1.15's class with
    ``remove_diacritics=True`` runs exactly OpenAI's code (the package only adds a
    ``preserve_marks`` option); ``tests/text/test_normalize_whisper_openai.py`` checks it
    against a fixture made with the openai-whisper source.

    >>> WhisperBasicNormalizer()("Ça coûte 5€ (environ), n'est-ce pas ?")
    'ca coute 5 n est ce pas '
    """

    name = "whisper-basic"

    def __init__(self) -> None:
        from whisper_normalizer.basic import BasicTextNormalizer

        self.reference = BasicTextNormalizer(remove_diacritics=True)

    def __call__(self, text: str) -> str:
        return self.reference(text)

    def describe(self) -> dict[str, str]:
        """Name, exact reference and package version, for recording in outputs."""
        return {
            "name": self.name,
            "label": "whisper-basic (OpenAI Whisper BasicTextNormalizer(remove_diacritics=True), "
            f"openai-whisper {OPENAI_WHISPER_RELEASE})",
            "implementation": "whisper_normalizer.basic.BasicTextNormalizer(remove_diacritics=True)",
            "source": f"openai-whisper {OPENAI_WHISPER_RELEASE} (PyPI), whisper/normalizers/basic.py",
            "package": "whisper-normalizer",
            "package_version": package_version("whisper-normalizer"),
            "notes": "lowercase, drop <..>/[..]/(..), NFKD and drop marks, symbols and punctuation to spaces",
        }


class WhisperNormalizer:
    """The ``whisper`` normalizer: Whisper's English normalizer, reference output, faster.

    ``variant`` picks the reference: ``whisper`` (OpenAI's, the default) or
    ``whisper-normalizer-0.1.15``; the instance's ``name`` is the variant.
    ``fast=False`` runs the reference itself (useful to check or time it).

    >>> WhisperNormalizer()("Mr. Brown's colour, twenty-one")
    'mister brown is color 21'
    >>> WhisperNormalizer(variant="whisper-normalizer-0.1.15")("'cause I dunno")
    'because i do not know'
    """

    def __init__(self, fast: bool = True, variant: str = OPENAI_WHISPER) -> None:
        self.reference = reference_normalizer(variant)
        self.name = variant
        self.fast = fast
        self.self_check_failures = 0
        self.fallback_reason = ""
        if not fast:
            return
        try:
            self._build(self.reference)
        except (AttributeError, TypeError, ValueError) as exc:  # an unexpected package layout
            self.fast, self.fallback_reason = False, f"tables not found ({exc})"
            return
        self.self_check_failures = sum(self._fast(s) != self.reference(s) for s in SELF_CHECK)
        if self.self_check_failures:
            self.fast = False
            self.fallback_reason = f"{self.self_check_failures} self-check mismatches"

    def _build(self, ref: Any) -> None:
        self._brackets = re.compile(r"[<\[][^>\]]*[>\]]")
        self._parens = re.compile(r"\(([^)]+?)\)")
        self._ignore = re.compile(ref.ignore_patterns)
        self._ignore_words = word_alternatives(ref.ignore_patterns)
        self._space_apostrophe = re.compile(r"\s+'")
        self._replacers = ReplacerPlan(ref.replacers)
        self._digit_comma = re.compile(r"(\d),(\d)")
        self._period = re.compile(r"\.([^0-9]|$)")
        self._symbols = SymbolTable(".%$¢€£")
        self._numbers = FastNumberNormalizer(ref.standardize_numbers)
        self._spelling: dict[str, str] = dict(ref.standardize_spellings.mapping)
        self._spelled: frozenset[str] = frozenset(self._spelling)
        # A token (no whitespace) maps to a value that is one token, so the joined tokens hold
        # single spaces only and the final whitespace collapse is the identity (see _fast).
        self._spelling_one_token = all(v.split() == [v] for k, v in self._spelling.items() if k.split() == [k])
        self._prefix_symbol = re.compile(r"[.$¢€£]([^0-9])")
        self._suffix_percent = re.compile(r"([^0-9])%")

    def __call__(self, text: str) -> str:
        return self._fast(text) if self.fast else self.reference(text)

    def _fast(self, s: str) -> str:
        s = s.lower()
        if "<" in s or "[" in s:
            s = self._brackets.sub("", s)
        if "(" in s:
            s = self._parens.sub("", s)
        s0 = s
        runs = word_runs(s)
        if self._ignore_words is None or not self._ignore_words.isdisjoint(runs):
            s = self._ignore.sub("", s)
        if "'" in s:
            s = self._space_apostrophe.sub("'", s)
        s = self._replacers(s, runs, s0)
        if "," in s:
            s = self._digit_comma.sub(r"\1\2", s)
        if "." in s:
            s = self._period.sub(r" \1", s)
        s = self._symbols.apply(s)
        tokens = self._numbers.identity_tokens(s)
        if tokens is None:
            tokens = self._numbers.normalize_slow(s).split()
        if self._spelled.isdisjoint(tokens):
            s = " ".join(tokens)
        else:
            spelling = self._spelling
            s = " ".join([spelling.get(word, word) for word in tokens])
        spaced = not self._spelling_one_token
        if "." in s or "$" in s or "¢" in s or "€" in s or "£" in s:
            s = self._prefix_symbol.sub(r" \1", s)
            spaced = True
        if "%" in s:
            s = self._suffix_percent.sub(r"\1 ", s)
            spaced = True
        # tokens of str.split() hold no whitespace (Python's str.split and the regex \s share one
        # definition of whitespace), so without a step that adds spaces s is already collapsed
        return _WS.sub(" ", s) if spaced else s

    def describe(self) -> dict[str, str]:
        """Name, exact reference (label, source), package version, for recording in outputs."""
        variant = _VARIANTS[self.name]
        return {
            "name": self.name,
            "label": variant["label"],
            "implementation": variant["implementation"]
            + (" (asr_audit fast path, identical output)" if self.fast else " (reference)"),
            "source": variant["source"],
            "package": "whisper-normalizer",
            "package_version": package_version("whisper-normalizer"),
            "notes": "Whisper EnglishTextNormalizer semantics incl. en-GB->en-US spelling map"
            + (f"; fast path disabled: {self.fallback_reason}" if self.fallback_reason else ""),
        }
