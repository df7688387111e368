"""Waveforms that transforms take as parameters: splice donors, babble talkers, noise files, RIRs.

An :class:`AudioAsset` is identified by its content (sha256 of the float32 samples, as
:func:`asr_audit.audio.io.audio_hash`) and its sample rate; its ``name`` only labels derived ids.
It serializes to ``{name, sha256, sr, path}`` without the samples; :meth:`AudioAsset.from_dict`
gets them back from a caller-supplied mapping (name or sha256 -> samples or asset) or from
``path``, and refuses audio whose hash differs, so a replayed chain is the chain that was run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from asr_audit.audio.dsp import check_samples, resample
from asr_audit.audio.io import audio_hash
from asr_audit.errors import ConfigError, InputFileError, require

AssetSource = Union["AudioAsset", np.ndarray]


def slug(text: str, limit: int = 40) -> str:
    """A lowercase, filesystem- and id-safe label.

    >>> slug("Donor: EP 2009/05 (Conversational)")
    'donor-ep-2009-05-conversational'
    """
    out = re.sub(r"[^a-z0-9.]+", "-", str(text).lower()).strip("-.")
    return out[:limit].rstrip("-.") or "x"


@dataclass(frozen=True, slots=True)
class AudioAsset:
    """A mono float32 waveform at ``sr`` with a content hash; samples are excluded from equality."""

    name: str
    sha256: str
    sr: int
    path: str | None = None
    # default None only so that __post_init__ can raise a one-line error naming the fix
    samples: np.ndarray = field(default=None, compare=False, repr=False)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if self.samples is None:
            raise ConfigError(
                f"audio asset {self.name!r} has no samples; "
                "fix: build it with AudioAsset.from_samples or AudioAsset.from_file"
            )
        object.__setattr__(self, "name", slug(self.name))

    @classmethod
    def from_samples(cls, samples: np.ndarray, sr: int, name: str | None = None, path: str | None = None) -> AudioAsset:
        """Wrap in-memory mono samples; ``name`` defaults to the first 10 hex digits of the hash."""
        x = check_samples(samples, sr)
        x.setflags(write=False)
        digest = audio_hash(x)
        return cls(name or digest[:10], digest, int(sr), path, x)

    @classmethod
    def from_file(cls, path: str | Path, name: str | None = None) -> AudioAsset:
        """Read an audio file (any rate; channels averaged) with soundfile."""
        sf = require("soundfile", "audio")
        p = Path(path)
        if not p.is_file():
            raise InputFileError(p, "audio file not found", "check the path")
        try:
            data, sr = sf.read(str(p), dtype="float32", always_2d=True)
        except Exception as exc:  # noqa: BLE001 - soundfile raises several types for unreadable files
            raise InputFileError(
                p, f"unreadable audio ({' '.join(str(exc).split())[:100]})", "re-encode it as WAV or FLAC"
            ) from None
        if data.shape[0] == 0:
            raise InputFileError(p, "audio is empty (0 samples)", "use a file with samples")
        mono = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else data[:, 0]
        if not np.all(np.isfinite(mono)):
            raise InputFileError(p, "audio holds NaN/inf samples", "regenerate or re-encode the file")
        return cls.from_samples(mono, int(sr), name or p.stem, str(p))

    def at_rate(self, sr: int) -> np.ndarray:
        """The samples resampled to ``sr`` (a copy)."""
        return resample(self.samples, self.sr, sr)

    @property
    def duration(self) -> float:
        return self.samples.size / self.sr

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "sr": self.sr, "path": self.path}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], assets: Mapping[str, AssetSource] | None = None) -> AudioAsset:
        """Rebuild an asset; samples come from ``assets`` (keyed by sha256 or name) or from ``path``."""
        try:
            name, digest, sr = str(data["name"]), str(data["sha256"]), int(data["sr"])
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                f"audio asset entry {dict(data)!r} needs name, sha256 and sr; fix: export it with AudioAsset.to_dict"
            ) from None
        path = data.get("path")
        found: AssetSource | None = None
        for key in (digest, name):
            if assets is not None and key in assets:
                found = assets[key]
                break
        if isinstance(found, AudioAsset):
            asset = found
        elif found is not None:
            asset = cls.from_samples(np.asarray(found), sr, name, path)
        elif path:
            asset = cls.from_file(path, name)
        else:
            raise ConfigError(
                f"audio asset {name!r} (sha256 {digest[:12]}) has no path and was not passed in; "
                "fix: pass assets={name: samples} when loading the chain"
            )
        if asset.sha256 != digest or asset.sr != sr:
            raise ConfigError(
                f"audio asset {name!r}: the supplied audio (sha256 {asset.sha256[:12]}, {asset.sr} Hz) "
                f"differs from the recorded one (sha256 {digest[:12]}, {sr} Hz); "
                "fix: supply the original donor/noise/RIR audio"
            )
        return cls(name, digest, sr, path, asset.samples)
