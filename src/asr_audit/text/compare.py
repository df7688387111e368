"""Normalizers side by side: what each one makes of the same text, and where they disagree.

:func:`compare_normalizers` runs every named normalizer on every text and marks, per output,
the tokens that differ from the first normalizer's output (the *baseline*), aligned word by
word (difflib opcodes, as the refdis miner aligns)::

    >>> rows = compare_normalizers(["whisper", "basic"], ["Mr. Brown's colour"])
    >>> [(o.normalizer, o.text, o.same) for o in rows[0].outputs]
    [('whisper', 'mister brown is color', True), ('basic', 'mr brown s colour', False)]
    >>> rows[0].outputs[1].marked()
    '[mr] brown [s colour]'

``docs/normalizers.md`` holds a table of the known traps made with it, and a test checks the
table against the normalizers themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from asr_audit.errors import ConfigError
from asr_audit.text.normalize import get_normalizer

__all__ = ["DEFAULT_COMPARE", "Comparison", "NormalizedText", "compare_normalizers", "normalize_lines", "parse_names"]

DEFAULT_COMPARE = ("whisper", "whisper-normalizer-0.1.15", "oal", "basic")


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """One normalizer's output for one text; ``differs[i]`` marks token ``i`` as unlike the baseline's."""

    normalizer: str
    text: str
    differs: tuple[bool, ...]
    same: bool  # the same tokens as the baseline's output

    def marked(self, left: str = "[", right: str = "]") -> str:
        """The output with each run of tokens unlike the baseline's wrapped in ``left`` / ``right``."""
        out: list[str] = []
        run: list[str] = []
        for token, differs in zip(self.text.split(), self.differs):
            if differs:
                run.append(token)
                continue
            if run:
                out.append(left + " ".join(run) + right)
                run = []
            out.append(token)
        if run:
            out.append(left + " ".join(run) + right)
        return " ".join(out)

    def to_dict(self) -> dict[str, object]:
        return {"normalizer": self.normalizer, "text": self.text, "same": self.same, "marked": self.marked()}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every normalizer's output for one input text (the first output is the baseline)."""

    text: str
    outputs: tuple[NormalizedText, ...]

    @property
    def agree(self) -> bool:
        """Whether every normalizer gives the baseline's tokens."""
        return all(o.same for o in self.outputs)

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "agree": self.agree, "outputs": [o.to_dict() for o in self.outputs]}


def parse_names(value: str | Sequence[str]) -> tuple[str, ...]:
    """Normalizer names from a comma-separated string or a list: each registered, none twice.

    >>> parse_names("whisper, basic")
    ('whisper', 'basic')
    >>> parse_names("whisper,whisper")
    Traceback (most recent call last):
    ...
    asr_audit.errors.ConfigError: normalizer 'whisper' is named twice; fix: name each normalizer once, e.g. whisper,oal,basic
    """
    names = tuple(n.strip() for n in (value.split(",") if isinstance(value, str) else value))
    if not names or not all(names):
        raise ConfigError(f"normalizer list {value!r} has an empty item; fix: e.g. whisper,oal,basic")
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(
                f"normalizer {name!r} is named twice; fix: name each normalizer once, e.g. whisper,oal,basic"
            )
        get_normalizer(name)  # an unknown name fails here, listing the registered ones
    return names


def _differs(base: list[str], other: list[str]) -> tuple[bool, ...]:
    import difflib

    marks = [True] * len(other)
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, base, other, autojunk=False).get_opcodes():
        if tag == "equal":
            marks[j1:j2] = [False] * (j2 - j1)
    return tuple(marks)


def compare_normalizers(names: Sequence[str], texts: Sequence[str]) -> list[Comparison]:
    """Each text normalized by each of ``names`` (the first is the baseline), in order."""
    names = parse_names(names)
    normalizers = [get_normalizer(n) for n in names]
    out: list[Comparison] = []
    for text in texts:
        results = [n(text) for n in normalizers]
        base = results[0].split()
        outputs = tuple(
            NormalizedText(name, result, _differs(base, result.split()), result.split() == base)
            for name, result in zip(names, results)
        )
        out.append(Comparison(text, outputs))
    return out


def normalize_lines(names: Sequence[str], lines: Iterable[str]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each line with each of ``names``' output, in order, one at a time (bulk normalizing: no
    marks, nothing held). A blank line gives empty outputs, so output ``i`` is line ``i``'s.

    >>> list(normalize_lines(["whisper", "basic"], ["Mr. Brown", ""]))
    [('Mr. Brown', ('mister brown', 'mr brown')), ('', ('', ''))]
    """
    normalizers = [get_normalizer(n) for n in parse_names(names)]
    for line in lines:
        yield line, tuple(n(line) if line.strip() else "" for n in normalizers)
