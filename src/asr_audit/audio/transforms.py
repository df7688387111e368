"""Audio transforms: frozen parameter dataclasses over pure functions, a registry, chains, provenance.

A transform maps ``(samples float32, sr, rng) -> samples``; :meth:`Transform.apply_with_info`
also returns a JSON-ready dict of what it measured (the SNR reached, the RT60 of the room, where
the original clip sits after a splice). Each has a short stable :attr:`Transform.tag`; a
:class:`Chain` of transforms names its output ``derived_id(clip_id, chain)`` =
``clip_id__tag1__tag2``. :func:`derive` runs a chain with a recorded seed and returns the samples
with a :class:`Provenance` record; :meth:`Provenance.replay` re-runs it byte-identically.

>>> from asr_audit.audio.spans import Mask
>>> chain = Chain((Mask(1.0, 1.5), Gain(-6.0)))
>>> derived_id("clip7", chain)
'clip7__mask-silence-1-1.5s__gain-neg6db'
>>> Chain.from_dict(chain.to_dict()) == chain
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from asr_audit.audio.assets import AssetSource, AudioAsset
from asr_audit.audio.dsp import TransformError, check_samples, db_to_amplitude, fmt_num, rms
from asr_audit.audio.io import SAMPLE_RATE, audio_hash, load_audio
from asr_audit.corpus.clips import ArraySource, Clip
from asr_audit.errors import ConfigError
from asr_audit.registry import Registry

Info = dict[str, Any]
SampleRange = tuple[int, int]
T = TypeVar("T", bound=type)

# modules whose import registers the transforms defined outside this module
_BUILTIN_MODULES = ("asr_audit.audio.spans", "asr_audit.audio.noise", "asr_audit.audio.reverb")
TRANSFORMS: Registry[type[Transform]] = Registry(
    "transform", fix="use one of them or register yours with @register_transform", modules=_BUILTIN_MODULES
)

__all__ = [
    "TRANSFORMS",
    "Chain",
    "DerivedAudio",
    "DerivedSource",
    "Gain",
    "Normalize",
    "Provenance",
    "Transform",
    "TransformError",
    "available_transforms",
    "clip_seed",
    "derive",
    "derive_clip",
    "derived_id",
    "held_clip",
    "register_transform",
    "transform_from_dict",
]


def register_transform(cls: T) -> T:
    """Class decorator: register a :class:`Transform` subclass under its ``name`` class variable."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} needs a non-empty class variable 'name'")
    return TRANSFORMS.register(name, cls)


def available_transforms() -> list[str]:
    """Registered transform names, sorted."""
    return TRANSFORMS.names()


def transform_class(name: str) -> type[Transform]:
    """The transform class registered as ``name``, or :class:`ConfigError` listing the valid names."""
    return TRANSFORMS.get(name)


def _encode(value: Any) -> Any:
    if isinstance(value, AudioAsset):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _decode(value: Any, assets: Mapping[str, AssetSource] | None) -> Any:
    if isinstance(value, Mapping) and "sha256" in value:
        return AudioAsset.from_dict(value, assets)
    if isinstance(value, list):
        return tuple(_decode(v, assets) for v in value)
    return value


def jsonable(value: Any) -> Any:
    """``value`` with tuples as lists, numpy scalars as Python numbers and non-finite floats as strings."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


class Transform:
    """Base class: subclasses are ``@register_transform @dataclass(frozen=True, slots=True)``.

    Subclasses set ``name`` (registry key), ``random`` (needs an rng) and implement
    :attr:`tag` and :meth:`apply_with_info`; a transform that changes the length overrides
    :meth:`map_range`. Parameter checks raise :class:`ConfigError` in ``__post_init__``.
    """

    __slots__ = ()
    name: ClassVar[str]
    random: ClassVar[bool] = False

    @property
    def tag(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        """Return ``(new samples float32, info)``; never modifies ``samples``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def apply(self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """The transformed samples (float32)."""
        return self.apply_with_info(samples, sr, rng)[0]

    def __call__(self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None) -> np.ndarray:
        return self.apply(samples, sr, rng)

    def map_range(self, span: SampleRange, n_in: int, info: Info) -> SampleRange:
        """Where input samples ``span`` lie in the output (identity for length-preserving transforms)."""
        return span

    def need_rng(self, rng: np.random.Generator | None) -> np.random.Generator:
        if rng is None:
            raise ConfigError(
                f"transform {self.tag!r} is random; fix: pass a seeded numpy Generator "
                "(np.random.default_rng(seed)) or use derive(..., seed=...)"
            )
        return rng

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., <parameters>}``, JSON-ready (assets as ``{name, sha256, sr, path}``)."""
        out: dict[str, Any] = {"name": self.name}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            out[f.name] = _encode(getattr(self, f.name))
        return out

    @staticmethod
    def from_dict(data: Mapping[str, Any], assets: Mapping[str, AssetSource] | None = None) -> Transform:
        return transform_from_dict(data, assets)


def transform_from_dict(data: Mapping[str, Any], assets: Mapping[str, AssetSource] | None = None) -> Transform:
    """Rebuild a transform from :meth:`Transform.to_dict` output; bad entries raise :class:`ConfigError`."""
    if not isinstance(data, Mapping) or "name" not in data:
        raise ConfigError(
            f"transform entry {data!r} has no 'name'; fix: use one of {', '.join(available_transforms())}"
        )
    cls = transform_class(data["name"])
    valid = [f.name for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(valid) - {"name"})
    if unknown:
        raise ConfigError(
            f"transform {data['name']!r}: unknown parameter(s) {', '.join(unknown)}; valid: {', '.join(valid)}"
        )
    kwargs = {k: _decode(v, assets) for k, v in data.items() if k != "name"}
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"transform {data['name']!r}: {exc}; valid parameters: {', '.join(valid)}") from None


@dataclass(frozen=True, slots=True)
class Chain:
    """Transforms applied in order. Each step gets its own child generator drawn from ``rng``."""

    steps: tuple[Transform, ...] = ()

    def __post_init__(self) -> None:
        steps = tuple(self.steps)
        for step in steps:
            if not isinstance(step, Transform):
                raise ConfigError(
                    f"chain step {step!r} is not a Transform; fix: build steps from "
                    f"asr_audit.audio transforms ({', '.join(available_transforms())})"
                )
        object.__setattr__(self, "steps", steps)

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(step.tag for step in self.steps)

    @property
    def random(self) -> bool:
        return any(step.random for step in self.steps)

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        """Apply all steps. ``info["steps"]`` holds each step's info; ``info["source_range"]`` is
        the ``[start, end)`` sample range the input occupies in the output."""
        x = check_samples(samples, sr)
        span: SampleRange = (0, x.size)
        seeds: Sequence[int | None] = [None] * len(self.steps)
        if rng is not None:
            seeds = [int(s) for s in rng.integers(0, 2**63 - 1, size=len(self.steps))]
        infos = []
        for step, seed in zip(self.steps, seeds):
            child = None if seed is None else np.random.default_rng(seed)
            n_in = x.size
            x, info = step.apply_with_info(x, sr, child)
            span = step.map_range(span, n_in, info)
            infos.append({"tag": step.tag, **info})
        return x, {"steps": infos, "source_range": span}

    def apply(self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None) -> np.ndarray:
        return self.apply_with_info(samples, sr, rng)[0]

    def __call__(self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None) -> np.ndarray:
        return self.apply(samples, sr, rng)

    def then(self, *steps: Transform) -> Chain:
        """A new chain with ``steps`` appended."""
        return Chain(self.steps + tuple(steps))

    def to_dict(self) -> dict[str, Any]:
        return {"transforms": [step.to_dict() for step in self.steps]}

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any] | Sequence[Mapping[str, Any]], assets: Mapping[str, AssetSource] | None = None
    ) -> Chain:
        """From :meth:`to_dict` output or a plain list of transform dicts."""
        entries = data.get("transforms") if isinstance(data, Mapping) else data
        if not isinstance(entries, (list, tuple)):
            raise ConfigError(f"chain {data!r} needs a list under 'transforms'; fix: export it with Chain.to_dict")
        return cls(tuple(transform_from_dict(entry, assets) for entry in entries))


def derived_id(clip_id: str, chain: Chain | Iterable[Transform]) -> str:
    """``clip_id`` followed by ``__<tag>`` for every step (the clip id itself for an empty chain)."""
    steps = chain.steps if isinstance(chain, Chain) else tuple(chain)
    return str(clip_id) + "".join(f"__{step.tag}" for step in steps)


def clip_seed(base_seed: int, clip_id: str) -> int:
    """A per-clip seed: different clips get independent noise, the same clip always the same.

    >>> clip_seed(0, "a") == clip_seed(0, "a") != clip_seed(0, "b")
    True
    """
    digest = hashlib.sha256(f"{int(base_seed)}\x1f{clip_id}".encode()).hexdigest()
    return int(digest[:15], 16)


@dataclass(frozen=True, slots=True)
class Provenance:
    """How a derived clip was made: source, transforms (dicts), seed, and what each step measured."""

    source_id: str
    source_hash: str
    derived_id: str
    transforms: tuple[dict[str, Any], ...]
    seed: int | None
    output_hash: str
    measured: tuple[dict[str, Any], ...] = ()
    source_range: SampleRange = (0, 0)

    def chain(self, assets: Mapping[str, AssetSource] | None = None) -> Chain:
        return Chain.from_dict(list(self.transforms), assets)

    def replay(self, samples: np.ndarray, sr: int, assets: Mapping[str, AssetSource] | None = None) -> np.ndarray:
        """Re-run the chain on the source audio; raises :class:`TransformError` if the source or the
        output differs from the recorded hash."""
        x = check_samples(samples, sr)
        if audio_hash(x) != self.source_hash:
            raise TransformError(
                f"source audio of {self.derived_id!r} differs from the recorded one; "
                "fix: load the original clip audio (16 kHz float32)"
            )
        rng = None if self.seed is None else np.random.default_rng(self.seed)
        y = self.chain(assets).apply(x, sr, rng)
        if audio_hash(y) != self.output_hash:
            raise TransformError(
                f"replaying {self.derived_id!r} gave different audio than recorded; "
                "fix: use the same asr-audit, numpy and pyroomacoustics versions"
            )
        return y

    def to_dict(self) -> dict[str, Any]:
        return jsonable({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        try:
            start, stop = (int(v) for v in data.get("source_range", (0, 0)))
            return cls(
                str(data["source_id"]),
                str(data["source_hash"]),
                str(data["derived_id"]),
                tuple(dict(t) for t in data["transforms"]),
                None if data.get("seed") is None else int(data["seed"]),
                str(data["output_hash"]),
                tuple(dict(m) for m in data.get("measured", ())),
                (start, stop),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"provenance record is malformed ({exc}); fix: write it with Provenance.to_dict"
            ) from None


@dataclass(frozen=True, slots=True, eq=False)
class DerivedAudio:
    """A transformed clip: its id, samples, and the provenance to attach to it."""

    id: str
    samples: np.ndarray
    sr: int
    provenance: Provenance

    @property
    def source_range(self) -> SampleRange:
        return self.provenance.source_range

    @property
    def measured(self) -> tuple[dict[str, Any], ...]:
        return self.provenance.measured


def derive(
    clip_id: str, samples: np.ndarray, sr: int, chain: Chain | Sequence[Transform], seed: int | None = None
) -> DerivedAudio:
    """Apply ``chain`` with ``np.random.default_rng(seed)`` and record the provenance.

    A chain with a random step (noise) needs a ``seed``; use :func:`clip_seed` for per-clip seeds.
    """
    chain = chain if isinstance(chain, Chain) else Chain(tuple(chain))
    if chain.random and seed is None:
        raise ConfigError(
            f"chain {'/'.join(chain.tags)} has random steps; fix: pass seed=<int> (e.g. clip_seed(run_seed, clip_id))"
        )
    x = check_samples(samples, sr)
    rng = None if seed is None else np.random.default_rng(seed)
    y, info = chain.apply_with_info(x, sr, rng)
    y.setflags(write=False)
    new_id = derived_id(clip_id, chain)
    prov = Provenance(
        str(clip_id),
        audio_hash(x),
        new_id,
        tuple(s.to_dict() for s in chain.steps),
        seed,
        audio_hash(y),
        tuple(jsonable(i) for i in info["steps"]),
        tuple(info["source_range"]),
    )
    return DerivedAudio(new_id, y, sr, prov)


@dataclass(frozen=True, slots=True, eq=False)
class DerivedSource:
    """Samples derived in this process from ``origin`` by ``steps`` with ``seed``, held in memory, with
    how to derive them again: an :class:`~asr_audit.corpus.clips.AudioSource` that loads as the
    samples it holds. Where a clip's audio must travel (a model pool whose models run on other
    machines) the derivation travels instead of the samples; a derivation without steps is the
    ``origin``'s own audio, loaded once here."""

    samples: np.ndarray
    sample_rate: int
    origin: Clip
    steps: tuple[Transform, ...] = ()
    seed: int | None = None
    label: str = "<derived waveform>"

    @property
    def fingerprint(self) -> str | None:
        return None  # as an in-memory waveform: hashing the samples is the fingerprint

    def load(self) -> tuple[np.ndarray, int]:
        return self.samples, self.sample_rate


def held_clip(
    clip: Clip, samples: np.ndarray, steps: Sequence[Transform] = (), seed: int | None = None, label: str | None = None
) -> Clip:
    """``clip`` with ``samples`` (16 kHz, derived from ``clip``'s audio by ``steps`` with ``seed``) as its
    audio: a :class:`DerivedSource`, so the samples are read once here and the derivation is what
    travels."""

    label = label or (clip.audio_label if not steps else f"{clip.audio_label} [{'+'.join(s.tag for s in steps)}]")
    source = DerivedSource(samples, SAMPLE_RATE, clip, tuple(steps), seed, label)
    return dataclasses.replace(clip, audio_path=None, source=source, duration=samples.size / SAMPLE_RATE)


def derive_clip(clip: Clip, chain: Chain | Sequence[Transform], seed: int | None = None) -> tuple[Clip, DerivedAudio]:
    """Load ``clip``'s audio (16 kHz), :func:`derive` it, and return the derived :class:`Clip`
    (id = :func:`derived_id`, in-memory audio, the tags appended to ``clip.provenance``) with the
    :class:`DerivedAudio` holding the full :class:`Provenance`."""

    derived = derive(clip.id, load_audio(clip), SAMPLE_RATE, chain, seed)
    tags = derived.provenance.derived_id[len(clip.id) :].split("__")[1:]
    new_clip = dataclasses.replace(
        clip,
        id=derived.id,
        audio_path=None,
        source=ArraySource(derived.samples, SAMPLE_RATE, label=f"{clip.audio_label} [{'+'.join(tags)}]"),
        duration=derived.samples.size / SAMPLE_RATE,
        provenance=(*clip.provenance, *tags),
    )
    return new_clip, derived


# --- level helpers -----------------------------------------------------------------------------


@register_transform
@dataclass(frozen=True, slots=True)
class Gain(Transform):
    """Multiply by ``10 ** (db / 20)``."""

    name: ClassVar[str] = "gain"
    db: float = 0.0

    def __post_init__(self) -> None:
        if not math.isfinite(self.db):
            raise ConfigError(f"gain db must be finite, got {self.db!r}")

    @property
    def tag(self) -> str:
        return f"gain-{fmt_num(self.db)}db"

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        x = check_samples(samples, sr)
        return (x.astype(np.float64) * db_to_amplitude(self.db)).astype(np.float32), {"gain_db": self.db}


@register_transform
@dataclass(frozen=True, slots=True)
class Normalize(Transform):
    """Scale to an RMS level of ``dbfs`` dB relative to full scale (1.0); silence stays silent."""

    name: ClassVar[str] = "normalize"
    dbfs: float = -23.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.dbfs) and self.dbfs <= 0):
            raise ConfigError(f"normalize dbfs must be a finite value <= 0, got {self.dbfs!r}")

    @property
    def tag(self) -> str:
        return f"norm-{fmt_num(self.dbfs)}dbfs"

    def apply_with_info(
        self, samples: np.ndarray, sr: int, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, Info]:
        x = check_samples(samples, sr)
        level = rms(x)
        if level == 0.0:
            return x.copy(), {"gain_db": 0.0}
        gain = db_to_amplitude(self.dbfs) / level
        return (x.astype(np.float64) * gain).astype(np.float32), {"gain_db": 20.0 * math.log10(gain)}
