"""Span edits: mask a span (silence / noise / cut), truncate to a window, splice a donor.

Times are seconds from the start of the clip and become sample indices with
:func:`~asr_audit.audio.dsp.to_samples` (nearest sample). Spans are half-open ``[t0, t1)``.

The masked-number probe silences a number span: ``Mask(t0, t1)`` sets ``samples[s0:s1] = 0``
and keeps the length. ``pad`` widens the span on both sides; ``prev_end`` / ``next_start`` (the
neighbouring words' boundaries) stop the padding from eating into those words, but never shrink
the given span itself (see :func:`guard_span`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from asr_audit.audio.assets import AudioAsset
from asr_audit.audio.dsp import (
    Seconds,
    TransformError,
    check_samples,
    fit_length,
    fmt_num,
    rms,
    scale_to_rms,
    to_samples,
)
from asr_audit.audio.transforms import Info, SampleRange, Transform, register_transform
from asr_audit.errors import ConfigError

FILLS = ("silence", "noise", "cut")
POSITIONS = ("append", "prepend")


def _finite(name: str, value: Any, minimum: float | None = None) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number of seconds, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} must be >= {minimum:g}, got {value!r}")


def guard_span(
    t0: Seconds, t1: Seconds, pad: Seconds = 0.0, prev_end: Seconds | None = None, next_start: Seconds | None = None
) -> tuple[Seconds, Seconds]:
    """``[t0 - pad, t1 + pad)`` clamped at 0, at ``prev_end`` and at ``next_start``; never narrower than ``[t0, t1)``.

    >>> guard_span(1.0, 2.0, pad=0.25)
    (0.75, 2.25)
    >>> guard_span(1.0, 2.0, pad=0.25, prev_end=0.9, next_start=2.1)
    (0.9, 2.1)
    >>> guard_span(1.0, 2.0, pad=0.25, prev_end=1.2)  # overlapping alignment: keep the span
    (1.0, 2.25)
    """
    lo, hi = t0 - pad, t1 + pad
    if prev_end is not None:
        lo = max(lo, min(prev_end, t0))
    if next_start is not None:
        hi = min(hi, max(next_start, t1))
    return max(lo, 0.0), hi


def _sample_span(lo: Seconds, hi: Seconds, n: int, sr: int, what: str) -> tuple[int, int]:
    s0, s1 = max(to_samples(lo, sr), 0), min(to_samples(hi, sr), n)
    if s0 >= n:
        raise TransformError(
            f"{what} [{lo:.3f}, {hi:.3f}) s starts at or after the end of the clip "
            f"({n / sr:.3f} s); fix: check the word timings against the audio"
        )
    if s1 <= s0:
        raise TransformError(f"{what} [{lo:.3f}, {hi:.3f}) s covers no sample at {sr} Hz; fix: widen the span")
    return s0, s1


def silence_span(samples: np.ndarray, s0: int, s1: int) -> np.ndarray:
    """A copy with ``samples[s0:s1] = 0``."""
    y = np.array(samples, dtype=np.float32, copy=True)
    y[s0:s1] = 0.0
    return y


def noise_span(samples: np.ndarray, s0: int, s1: int, rng: np.random.Generator, level: float) -> np.ndarray:
    """A copy with ``samples[s0:s1]`` replaced by Gaussian white noise of RMS ``level``."""
    y = np.array(samples, dtype=np.float32, copy=True)
    y[s0:s1] = (rng.standard_normal(s1 - s0) * level).astype(np.float32)
    return y


def cut_span(samples: np.ndarray, s0: int, s1: int) -> np.ndarray:
    """``samples`` without ``[s0, s1)`` (shorter by ``s1 - s0``)."""
    return np.ascontiguousarray(np.concatenate([samples[:s0], samples[s1:]]), dtype=np.float32)


@register_transform
@dataclass(frozen=True, slots=True)
class Mask(Transform):
    """Mask ``[t0, t1)`` (widened by ``pad``, guarded by neighbouring words) with ``fill``.

    ``silence`` zeroes the span (length kept); ``noise`` replaces it with seeded white noise at the
    whole clip's RMS (length kept); ``cut`` removes it (output shorter by the span).
    """

    name: ClassVar[str] = "mask"
    t0: Seconds
    t1: Seconds
    fill: str = "silence"
    pad: Seconds = 0.0
    prev_end: Seconds | None = None
    next_start: Seconds | None = None

    def __post_init__(self) -> None:
        _finite("mask t0", self.t0, 0.0)
        _finite("mask t1", self.t1)
        _finite("mask pad", self.pad, 0.0)
        if self.t1 <= self.t0:
            raise ConfigError(f"mask span needs t1 > t0, got [{self.t0}, {self.t1}); fix: check the word timings")
        if self.fill not in FILLS:
            raise ConfigError(f"unknown mask fill {self.fill!r}; available fills: {', '.join(FILLS)}")
        for field_name in ("prev_end", "next_start"):
            if getattr(self, field_name) is not None:
                _finite(f"mask {field_name}", getattr(self, field_name))

    @property
    def random(self) -> bool:  # type: ignore[override]
        return self.fill == "noise"

    @property
    def span(self) -> tuple[Seconds, Seconds]:
        """The padded, guarded span in seconds (before clamping to the clip's end)."""
        return guard_span(self.t0, self.t1, self.pad, self.prev_end, self.next_start)

    @property
    def tag(self) -> str:
        lo, hi = self.span
        return f"mask-{self.fill}-{fmt_num(lo)}-{fmt_num(hi)}s"

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        x = check_samples(samples, sr)
        lo, hi = self.span
        s0, s1 = _sample_span(lo, hi, x.size, sr, "mask span")
        info: Info = {"fill": self.fill, "span_s": [lo, hi], "span_samples": [s0, s1]}
        if self.fill == "silence":
            y = silence_span(x, s0, s1)
        elif self.fill == "noise":
            level = rms(x)
            info["noise_rms"] = level
            y = noise_span(x, s0, s1, self.need_rng(rng), level)
        else:
            y = cut_span(x, s0, s1)
        return y, info

    def map_range(self, span: SampleRange, n_in: int, info: Info) -> SampleRange:
        if self.fill != "cut":
            return span
        s0, s1 = info["span_samples"]

        def move(p: int) -> int:
            return p if p <= s0 else (s0 if p <= s1 else p - (s1 - s0))

        return move(span[0]), move(span[1])


@register_transform
@dataclass(frozen=True, slots=True)
class Truncate(Transform):
    """Keep only ``[t0 - pad, t1 + pad)`` (clamped to the clip); see :func:`truncation_window`."""

    name: ClassVar[str] = "truncate"
    t0: Seconds
    t1: Seconds
    pad: Seconds = 0.0

    def __post_init__(self) -> None:
        _finite("truncate t0", self.t0)
        _finite("truncate t1", self.t1)
        _finite("truncate pad", self.pad, 0.0)
        if self.t1 <= self.t0:
            raise ConfigError(f"truncate window needs t1 > t0, got [{self.t0}, {self.t1})")

    @property
    def window(self) -> tuple[Seconds, Seconds]:
        return max(self.t0 - self.pad, 0.0), self.t1 + self.pad

    @property
    def tag(self) -> str:
        lo, hi = self.window
        return f"trunc-{fmt_num(lo)}-{fmt_num(hi)}s"

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        x = check_samples(samples, sr)
        lo, hi = self.window
        s0, s1 = _sample_span(lo, hi, x.size, sr, "truncation window")
        return x[s0:s1].copy(), {"window_s": [lo, hi], "window_samples": [s0, s1]}

    def map_range(self, span: SampleRange, n_in: int, info: Info) -> SampleRange:
        s0, s1 = info["window_samples"]
        return (min(max(span[0] - s0, 0), s1 - s0), min(max(span[1] - s0, 0), s1 - s0))


def _timing(entry: Any, i: int) -> tuple[float, float]:
    if isinstance(entry, Sequence) and not isinstance(entry, str) and len(entry) == 3:
        start, end = entry[1], entry[2]
    elif hasattr(entry, "start") and hasattr(entry, "end"):
        start, end = entry.start, entry.end
    else:
        raise ConfigError(f"word timing {i} is {entry!r}; fix: pass (word, start, end) tuples or WordTiming records")
    try:
        start, end = float(start), float(end)
    except (TypeError, ValueError):
        raise ConfigError(f"word timing {i} has non-numeric times {entry!r}") from None
    if not (math.isfinite(start) and math.isfinite(end)) or end < start or start < 0:
        raise ConfigError(f"word timing {i} has invalid times [{start}, {end}]; fix: re-run the aligner")
    return start, end


def truncation_window(
    words: Sequence[Any], start: int, end: int, k: int = 1, pad: Seconds = 0.25, duration: Seconds | None = None
) -> tuple[Seconds, Seconds]:
    """The window around words ``[start, end)`` extended by ``k`` aligned words each side, then ``pad`` s.

    ``words`` are ``(word, start_s, end_s)`` tuples (or records with ``.start``/``.end``). An empty
    index span (``start == end``, an insertion point) takes the ``k`` words on each side. The
    window is clamped to ``[0, duration]``. The paper's truncation condition is ``k=1, pad=0.25``.

    >>> w = [("we", 0.1, 0.3), ("paid", 0.35, 0.6), ("forty", 0.7, 1.0), ("euros", 1.05, 1.5)]
    >>> truncation_window(w, 2, 3)
    (0.1, 1.75)
    >>> truncation_window(w, 2, 2, k=1, pad=0.0)
    (0.35, 1.0)
    """
    n = len(words)
    if not (isinstance(k, int) and k >= 0):
        raise ConfigError(f"k must be an integer >= 0, got {k!r}")
    _finite("truncation pad", pad, 0.0)
    if not (0 <= start <= end <= n):
        raise ConfigError(f"word index span [{start}, {end}) is outside the {n} aligned words")
    lo, hi = max(start - k, 0), min(end + k, n)
    if lo >= hi:
        raise ConfigError(f"no aligned words around index span [{start}, {end}); fix: use k >= 1 or a non-empty span")
    times = [_timing(words[i], i) for i in range(lo, hi)]
    t0 = max(min(t[0] for t in times) - pad, 0.0)
    t1 = max(t[1] for t in times) + pad
    if duration is not None:
        t1 = min(t1, float(duration))
    return round(t0, 6), round(t1, 6)


def mask_words(words: Sequence[Any], start: int, end: int, fill: str = "silence", pad: Seconds = 0.0) -> Mask:
    """A :class:`Mask` over aligned words ``[start, end)``, guarded by the words on either side.

    >>> w = [("we", 0.1, 0.3), ("paid", 0.35, 0.6), ("forty", 0.7, 1.0), ("euros", 1.05, 1.5)]
    >>> mask_words(w, 2, 3, pad=0.1).span
    (0.6, 1.05)
    """
    n = len(words)
    if not (0 <= start < end <= n):
        raise ConfigError(f"word index span [{start}, {end}) must be non-empty and inside the {n} aligned words")
    t0, t1 = _timing(words[start], start)[0], _timing(words[end - 1], end - 1)[1]
    prev_end = _timing(words[start - 1], start - 1)[1] if start > 0 else None
    next_start = _timing(words[end], end)[0] if end < n else None
    if t1 <= t0:
        raise ConfigError(f"aligned words [{start}, {end}) have zero duration ({t0:.3f} s); fix: re-run the aligner")
    return Mask(t0, t1, fill, pad, prev_end, next_start)


def truncate_words(
    words: Sequence[Any], start: int, end: int, k: int = 1, pad: Seconds = 0.25, duration: Seconds | None = None
) -> Truncate:
    """A :class:`Truncate` to :func:`truncation_window` (the paper's condition: ``k=1, pad=0.25``)."""
    t0, t1 = truncation_window(words, start, end, k, pad, duration)
    return Truncate(t0, t1)


def asset_label(asset: AudioAsset) -> str:
    """``name.sha6`` (just the name when the name already is a hash prefix)."""
    return asset.name if asset.sha256.startswith(asset.name) else f"{asset.name}.{asset.sha256[:6]}"


@register_transform
@dataclass(frozen=True, slots=True)
class Splice(Transform):
    """Append or prepend ``donor`` with ``gap`` s of silence between.

    ``donor_seconds`` trims or loops the donor to that length; ``match_level`` scales the donor
    to the clip's RMS. ``info["source_range"]`` / ``info["donor_range"]`` are the sample ranges of
    the original clip and the donor in the output.
    """

    name: ClassVar[str] = "splice"
    donor: AudioAsset
    position: str = "append"
    gap: Seconds = 0.3
    donor_seconds: Seconds | None = None
    match_level: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.donor, AudioAsset):
            raise ConfigError("splice donor must be an AudioAsset; fix: AudioAsset.from_samples(samples, sr, name)")
        if self.position not in POSITIONS:
            raise ConfigError(f"unknown splice position {self.position!r}; available: {', '.join(POSITIONS)}")
        _finite("splice gap", self.gap, 0.0)
        if self.donor_seconds is not None:
            _finite("splice donor_seconds", self.donor_seconds, 0.0)
            if self.donor_seconds == 0:
                raise ConfigError("splice donor_seconds must be > 0 (or None to keep the donor's length)")

    @property
    def tag(self) -> str:
        tag = f"splice-{self.position}-{asset_label(self.donor)}-gap{fmt_num(self.gap)}s"
        if self.donor_seconds is not None:
            tag += f"-{fmt_num(self.donor_seconds)}s"
        return tag if self.match_level else tag + "-raw"

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        x = check_samples(samples, sr)
        donor = self.donor.at_rate(sr)
        if self.donor_seconds is not None:
            donor = fit_length(donor, to_samples(self.donor_seconds, sr))
        level = rms(x)
        if self.match_level and level > 0.0:
            donor = scale_to_rms(donor, level)
        gap = np.zeros(to_samples(self.gap, sr), dtype=np.float32)
        n, g, d = x.size, gap.size, donor.size
        if self.position == "append":
            y = np.concatenate([x, gap, donor])
            src, don = (0, n), (n + g, n + g + d)
        else:
            y = np.concatenate([donor, gap, x])
            src, don = (d + g, d + g + n), (0, d)
        info = {"source_range": list(src), "donor_range": list(don), "donor": self.donor.name, "donor_rms": rms(donor)}
        return np.ascontiguousarray(y, dtype=np.float32), info

    def map_range(self, span: SampleRange, n_in: int, info: Info) -> SampleRange:
        offset = info["source_range"][0]
        return span[0] + offset, span[1] + offset
