"""Additive noise at a target SNR: white, pink (1/f), babble (other clips), or a noise recording.

SNR is defined over the whole clip: ``10 log10(sum x^2 / sum n^2)`` where ``n`` is the noise
actually added. The noise is scaled in float64 to hit the target; the SNR reported in the info
dict (``snr_db``) is re-measured on the float32 output (``y - x``), so it is the SNR the model sees.

>>> import numpy as np
>>> x = np.sin(np.arange(16000) * 0.05).astype(np.float32)
>>> y, info = AddNoise("white", 10.0).apply_with_info(x, 16000, np.random.default_rng(0))
>>> abs(info["snr_db"] - 10.0) < 0.01
True
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from asr_audit.audio.assets import AudioAsset
from asr_audit.audio.dsp import TransformError, check_samples, fit_length, fmt_num, power, snr_db
from asr_audit.audio.spans import asset_label
from asr_audit.audio.transforms import Info, Transform, register_transform
from asr_audit.errors import ConfigError

Decibels = float
KINDS = ("white", "pink", "babble", "file")


def white_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of unit-variance Gaussian white noise (float64)."""
    return rng.standard_normal(n)


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of 1/f (pink) noise with unit RMS: white noise shaped by ``1/sqrt(f)`` in the
    frequency domain (power falls 3 dB per octave), zero mean."""
    if n == 0:
        return np.zeros(0)
    spec = np.fft.rfft(rng.standard_normal(n))
    freqs = np.arange(spec.size, dtype=np.float64)
    shape = np.zeros_like(freqs)
    shape[1:] = 1.0 / np.sqrt(freqs[1:])
    y = np.fft.irfft(spec * shape, n)
    level = math.sqrt(float(np.mean(y * y)))
    return y / level if level > 0 else y


def babble_noise(donors: list[np.ndarray], n: int, rng: np.random.Generator) -> np.ndarray:
    """Sum of the donors, each looped to ``n`` from a random offset and scaled to unit RMS."""
    total = np.zeros(n)
    used = 0
    for donor in donors:
        p = power(donor)
        if p == 0.0:
            continue
        offset = int(rng.integers(0, donor.size))
        total += fit_length(donor, n, offset).astype(np.float64) / math.sqrt(p)
        used += 1
    if used == 0:
        raise TransformError("every babble donor is silent; fix: pass donor clips with speech")
    return total


def file_noise(noise: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """A noise recording looped/trimmed to ``n`` samples from a random offset."""
    if power(noise) == 0.0:
        raise TransformError("the noise recording is silent; fix: pass a noise file with signal")
    return fit_length(noise, n, int(rng.integers(0, noise.size))).astype(np.float64)


def mix_at_snr(signal: np.ndarray, noise: np.ndarray, target_db: Decibels) -> tuple[np.ndarray, Decibels]:
    """``signal + g * noise`` with ``g`` chosen for ``target_db``; returns (float32 mix, measured SNR)."""
    ps, pn = power(signal), power(noise)
    if ps == 0.0:
        raise TransformError("the clip is silent, so an SNR is undefined; fix: skip silent clips")
    if pn == 0.0:
        raise TransformError("the noise is silent; fix: use another noise source")
    gain = math.sqrt(ps / (pn * 10.0 ** (target_db / 10.0)))
    y = (np.asarray(signal, dtype=np.float64) + gain * noise).astype(np.float32)
    return y, snr_db(signal, y.astype(np.float64) - np.asarray(signal, dtype=np.float64))


@register_transform
@dataclass(frozen=True, slots=True)
class AddNoise(Transform):
    """Add ``kind`` noise at ``snr_db``: ``white``, ``pink``, ``babble`` (``sources`` = donor
    clips, at least two) or ``file`` (``sources`` = one noise recording). Seeded (needs an rng)."""

    name: ClassVar[str] = "noise"
    random: ClassVar[bool] = True
    kind: str = "white"
    snr_db: Decibels = 10.0
    sources: tuple[AudioAsset, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"unknown noise kind {self.kind!r}; available kinds: {', '.join(KINDS)}")
        if not isinstance(self.snr_db, (int, float)) or not math.isfinite(self.snr_db):
            raise ConfigError(f"noise snr_db must be a finite number of dB, got {self.snr_db!r}")
        sources = tuple(self.sources)
        object.__setattr__(self, "sources", sources)
        if any(not isinstance(s, AudioAsset) for s in sources):
            raise ConfigError("noise sources must be AudioAssets; fix: AudioAsset.from_samples / from_file")
        need = {"white": (0, 0), "pink": (0, 0), "babble": (2, None), "file": (1, 1)}[self.kind]
        if len(sources) < need[0] or (need[1] is not None and len(sources) > need[1]):
            want = {
                "white": "no sources",
                "pink": "no sources",
                "babble": "at least 2 donor clips",
                "file": "exactly 1 noise recording",
            }[self.kind]
            raise ConfigError(f"{self.kind} noise takes {want}, got {len(sources)}")

    @property
    def tag(self) -> str:
        snr = f"{fmt_num(self.snr_db)}db"
        if self.kind == "file":
            return f"noise-file-{asset_label(self.sources[0])}-{snr}"
        if self.kind == "babble":
            digest = hashlib.sha256("".join(s.sha256 for s in self.sources).encode()).hexdigest()[:6]
            return f"noise-babble{len(self.sources)}-{digest}-{snr}"
        return f"noise-{self.kind}-{snr}"

    def noise(self, n: int, sr: int, rng: np.random.Generator) -> np.ndarray:
        """The unscaled noise for a clip of ``n`` samples at ``sr`` (float64)."""
        if self.kind == "white":
            return white_noise(n, rng)
        if self.kind == "pink":
            return pink_noise(n, rng)
        waves = [s.at_rate(sr) for s in self.sources]
        if self.kind == "babble":
            return babble_noise(waves, n, rng)
        return file_noise(waves[0], n, rng)

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        x = check_samples(samples, sr)
        gen = self.need_rng(rng)
        if x.size == 0:
            raise TransformError("the clip has no samples; fix: skip empty clips")
        y, measured = mix_at_snr(x, self.noise(x.size, sr, gen), self.snr_db)
        return y, {"kind": self.kind, "snr_target_db": self.snr_db, "snr_db": measured}
