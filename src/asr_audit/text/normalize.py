"""Text normalizers: a small registry (``whisper``, ``oal``, ``basic``) and a cached batch call.

Every measure normalizes references and hypotheses before comparing them. Pick one by name::

    >>> from asr_audit.text.normalize import get_normalizer, normalize_many
    >>> whisper = get_normalizer("whisper")
    >>> normalize_many(whisper, ["Mr. Brown's colour", "Mr. Brown's colour"])
    ['mister brown is color', 'mister brown is color']

``whisper`` (the default, the paper's choice) is OpenAI Whisper's English normalizer with the
en-GB -> en-US spelling map (exactly ``openai-whisper``'s ``EnglishTextNormalizer``);
``whisper-normalizer-0.1.15`` is PyPI ``whisper-normalizer`` 0.1.15's version of it, which adds
kinda/sorta/dunno/cause rewrites (asr-audit's ``whisper`` before 0.2); ``whisper-basic`` is
OpenAI Whisper's ``BasicTextNormalizer(remove_diacritics=True)`` (the paper's code for
non-English text); ``oal`` is the Open ASR Leaderboard's current English normalizer;
``basic`` is a language-agnostic normalizer (see :class:`BasicNormalizer`); ``basic-chars`` is
``basic`` with one token per character, so WER over it is CER (for Chinese, Japanese, Korean, ...);
``basic-es``, ``basic-fr`` and ``basic-de`` add a language's abbreviations, ``%`` / ``€`` words
and spelled numbers to ``basic`` (see :mod:`asr_audit.text.languages`, and
``docs/normalizers.md`` for all of them side by side).

:func:`normalize_many` keeps one cache per normalizer instance keyed by the raw string, so a
reference scored against ten models is normalized once.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from asr_audit.errors import ConfigError
from asr_audit.registry import Registry
from asr_audit.text.languages import CharTokens, LanguageNormalizer
from asr_audit.text.oal import OalNormalizer
from asr_audit.text.whisper_en import (
    WHISPER_NORMALIZER_0_1_15,
    WhisperBasicNormalizer,
    WhisperNormalizer,
    package_version,
)

__all__ = [
    "DEFAULT_NORMALIZER",
    "NORMALIZERS",
    "BasicNormalizer",
    "CacheStats",
    "Normalizer",
    "available_normalizers",
    "clear_normalize_cache",
    "get_normalizer",
    "normalize_cache_stats",
    "normalize_many",
    "register_normalizer",
]

DEFAULT_NORMALIZER = "whisper"
DEFAULT_CACHE_LIMIT = 2_000_000


@runtime_checkable
class Normalizer(Protocol):
    """A named, pure ``str -> str`` text normalizer that can describe itself for outputs."""

    name: str

    def __call__(self, text: str) -> str:
        """Return the normalized text."""
        ...

    def describe(self) -> dict[str, Any]:
        """Name, implementation, package version and notes (JSON values), recorded in every output."""
        ...


# ----------------------------------------------------------------------------- registry


def _whisper() -> Normalizer:
    return WhisperNormalizer()


def _whisper_0_1_15() -> Normalizer:
    return WhisperNormalizer(variant=WHISPER_NORMALIZER_0_1_15)


def _whisper_basic() -> Normalizer:
    return WhisperBasicNormalizer()


def _oal() -> Normalizer:
    return OalNormalizer()


def _basic() -> Normalizer:
    return BasicNormalizer()


def _basic_chars() -> Normalizer:
    return CharTokens(get_normalizer("basic"))


def _basic_language(language: str) -> Callable[[], Normalizer]:
    def factory() -> Normalizer:
        return LanguageNormalizer(language, get_normalizer("basic"))

    return factory


NORMALIZERS: Registry[Callable[[], Normalizer]] = Registry("normalizer", fix="use one of them")
NORMALIZERS.register("whisper", _whisper)
NORMALIZERS.register("oal", _oal)
NORMALIZERS.register("basic", _basic)
NORMALIZERS.register("whisper-normalizer-0.1.15", _whisper_0_1_15)
NORMALIZERS.register("whisper-basic", _whisper_basic)
NORMALIZERS.register("basic-chars", _basic_chars)
for _language in ("es", "fr", "de"):
    NORMALIZERS.register(f"basic-{_language}", _basic_language(_language))
_INSTANCES: dict[str, Normalizer] = {}


def available_normalizers() -> list[str]:
    """Registered normalizer names, sorted.

    >>> available_normalizers()
    ['basic', 'basic-chars', 'basic-de', 'basic-es', 'basic-fr', 'oal', 'whisper', 'whisper-basic', 'whisper-normalizer-0.1.15']
    """
    return NORMALIZERS.names()


def register_normalizer(name: str, factory: Callable[[], Normalizer], *, replace: bool = False) -> None:
    """Register a normalizer factory under ``name`` (``replace=True`` to redefine a taken name)."""
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ConfigError(f"normalizer name {name!r} is not valid; fix: use letters, digits, '-' or '_'")
    NORMALIZERS.register(name, factory, replace=replace)
    _INSTANCES.pop(name, None)


def get_normalizer(name: str = DEFAULT_NORMALIZER) -> Normalizer:
    """The shared normalizer instance registered under ``name``.

    >>> get_normalizer("nope")
    Traceback (most recent call last):
    ...
    asr_audit.errors.ConfigError: unknown normalizer 'nope'; available normalizers: basic, basic-chars, basic-de, basic-es, basic-fr, oal, whisper, whisper-basic, whisper-normalizer-0.1.15; fix: use one of them
    """
    instance = _INSTANCES.get(name)
    if instance is not None:
        return instance
    instance = _INSTANCES[name] = NORMALIZERS.get(name)()
    return instance


# ----------------------------------------------------------------------------- cache


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters of one normalizer's cache (``hits + misses`` = strings normalized via it)."""

    normalizer: str
    entries: int
    hits: int
    misses: int

    @property
    def hit_rate(self) -> float:
        """Fraction of lookups answered from the cache (0.0 when there were none)."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class _Cache:
    __slots__ = ("normalizer", "entries", "hits", "misses", "limit")

    def __init__(self, normalizer: Normalizer, limit: int) -> None:
        self.normalizer = normalizer  # held so that id(normalizer) stays unique while cached
        self.entries: dict[str, str] = {}
        self.hits = 0
        self.misses = 0
        self.limit = limit


_CACHES: dict[int, _Cache] = {}


PARALLEL_MIN_STRINGS = 20_000  # below this many new strings, workers cost more than they save


def normalize_many(
    normalizer: Normalizer | str,
    texts: Iterable[str],
    *,
    cache_limit: int = DEFAULT_CACHE_LIMIT,
    workers: int = 1,
) -> list[str]:
    """Normalize ``texts`` in order, normalizing each distinct string once per normalizer.

    The cache lives as long as the process (or until :func:`clear_normalize_cache`); once it
    holds ``cache_limit`` entries, new strings are still normalized but no longer stored.
    A non-string item raises :class:`~asr_audit.errors.ConfigError` naming its position.

    ``workers > 1`` normalizes the strings not yet cached in that many forked processes when
    there are at least ``PARALLEL_MIN_STRINGS`` of them (and the platform can fork); the output
    is the same as serial. It saves wall time only where idle cores exist, and the workers' CPU
    time is added, not saved.
    """
    if isinstance(normalizer, str):
        normalizer = get_normalizer(normalizer)
    cache = _CACHES.get(id(normalizer))
    if cache is None:
        cache = _CACHES[id(normalizer)] = _Cache(normalizer, cache_limit)
    entries = cache.entries
    computed = 0  # strings the workers normalized: misses, though the loop below finds them
    if workers > 1:
        texts = list(texts)
        computed = _normalize_in_workers(normalizer, entries, texts, cache_limit, workers)
    out: list[str] = []
    append = out.append
    misses = 0
    for index, text in enumerate(texts):
        result = entries.get(text) if type(text) is str else None
        if result is None:
            if not isinstance(text, str):
                raise ConfigError(
                    f"text #{index} given to normalizer {normalizer.name!r} is "
                    f"{type(text).__name__}, not str; fix: pass transcripts as strings "
                    "(use '' for an empty one)"
                )
            result = normalizer(text)
            misses += 1
            if len(entries) < cache_limit:
                entries[text] = result
        append(result)
    cache.misses += misses + computed
    cache.hits += len(out) - misses - computed
    return out


_WORKER_NORMALIZER: Normalizer | None = None


def _normalize_chunk(texts: list[str]) -> list[str]:
    normalize = _WORKER_NORMALIZER
    assert normalize is not None
    return [normalize(t) for t in texts]


def _normalize_in_workers(
    normalizer: Normalizer,
    entries: dict[str, str],
    texts: list[str],
    cache_limit: int,
    workers: int,
) -> int:
    """Fill ``entries`` for the new strings of ``texts`` using ``workers`` forked processes.

    Returns how many strings it normalized (0 when there are too few, or no ``fork``).
    """
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 0
    new = list(dict.fromkeys(t for t in texts if type(t) is str and t not in entries))
    new = new[: max(0, cache_limit - len(entries))]  # what the serial pass would store
    if len(new) < PARALLEL_MIN_STRINGS:
        return 0
    global _WORKER_NORMALIZER
    _WORKER_NORMALIZER = normalizer  # inherited by the forked workers, never pickled
    try:
        n_chunks = workers * 4
        size = -(-len(new) // n_chunks)
        chunks = [new[i : i + size] for i in range(0, len(new), size)]
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = pool.map(_normalize_chunk, chunks, chunksize=1)
    finally:
        _WORKER_NORMALIZER = None
    for chunk, res in zip(chunks, results):
        entries.update(zip(chunk, res))
    return len(new)


def normalize_cache_stats(normalizer: Normalizer | str | None = None) -> list[CacheStats]:
    """Cache counters for one normalizer (instance or registered name), or for all."""
    if isinstance(normalizer, str):
        normalizer = get_normalizer(normalizer)
    caches = _CACHES.values() if normalizer is None else [c for key, c in _CACHES.items() if key == id(normalizer)]
    return [CacheStats(c.normalizer.name, len(c.entries), c.hits, c.misses) for c in caches]


def clear_normalize_cache(normalizer: Normalizer | str | None = None) -> None:
    """Drop the cached results (and counters) of one normalizer, or of all."""
    if normalizer is None:
        _CACHES.clear()
        return
    if isinstance(normalizer, str):
        normalizer = get_normalizer(normalizer)
    _CACHES.pop(id(normalizer), None)


# ----------------------------------------------------------------------------- basic

_BRACKETS = re.compile(r"[<\[][^>\]]*[>\]]")
_PARENS = re.compile(r"\(([^)]+?)\)")
_WS = re.compile(r"\s+")


def _split_char_pattern() -> Any:  # a compiled ``regex`` (third-party, imported lazily) pattern
    import regex

    scripts = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar")
    cls = "".join(f"\\p{{scx={script}}}" for script in scripts)
    # one grapheme cluster (a base character plus its combining marks) starting in these scripts
    return regex.compile(f"(?=[{cls}])\\X")


class _LetterMarkNumberTable(dict[int, str]):
    """``str.translate`` table: letters, marks and numbers stay, anything else -> space."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        out = char if unicodedata.category(char)[0] in "LMN" else " "
        self[code] = out
        return out


class BasicNormalizer:
    """Language-agnostic normalizer for any script.

    Steps: NFKC; lowercase; drop ``<...>``/``[...]`` tags and ``(...)`` asides (as Whisper's
    basic normalizer); every character that is not a letter, mark or number (Unicode
    categories L*, M*, N*) becomes a space, so punctuation and symbols go but accents, Indic
    vowel signs and viramas stay; scripts written without spaces (Han, Hiragana, Katakana,
    including the shared prolonged-sound mark, Thai, Lao, Khmer, Myanmar) are split into one
    token per grapheme cluster, so word error rate on them is a character error rate;
    Hangul and all space-delimited scripts keep their words; whitespace collapses.

    >>> BasicNormalizer()("L'Élève a dit: « Bonjour ! »")
    'l élève a dit bonjour'
    >>> BasicNormalizer()("東京は、晴れです。")
    '東 京 は 晴 れ で す'
    """

    name = "basic"

    def __init__(self) -> None:
        self._split = _split_char_pattern()
        self._table = _LetterMarkNumberTable()

    def __call__(self, text: str) -> str:
        s = unicodedata.normalize("NFKC", text).lower()
        if "<" in s or "[" in s:
            s = _BRACKETS.sub("", s)
        if "(" in s:
            s = _PARENS.sub("", s)
        s = s.translate(self._table)
        if not s.isascii():
            s = self._split.sub(lambda m: f" {m.group()} ", s)
        return _WS.sub(" ", s).strip()

    def describe(self) -> dict[str, str]:
        """Name, implementation and the ``regex`` version used for script classes."""

        return {
            "name": self.name,
            "label": "basic (asr-audit BasicNormalizer, any script)",
            "implementation": "asr_audit.text.normalize.BasicNormalizer",
            "package": "regex",
            "package_version": package_version("regex"),
            "notes": "NFKC, lowercase, drop <..>/[..]/(..), keep Unicode L/M/N only, "
            "split Han/kana/Thai/Lao/Khmer/Myanmar into grapheme clusters, collapse spaces",
        }
