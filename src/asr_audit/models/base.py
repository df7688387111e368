"""The one small interface every ASR backend implements, and the backend registry.

A backend declares its capabilities:

* ``transcribe`` — greedy, deterministic transcription of a batch of 16 kHz mono waveforms;
* ``score`` — teacher-forced per-token log-probabilities of a target text given the audio and a
  text prefix (seq2seq and CTC models);
* ``sites`` — white-box hook points (PyTorch models), used by ``asr_audit.mech``.

Backends are created from *spec strings* (``hf:openai/whisper-tiny.en``, ``ct2:/path``,
``sphinx:en-us``, ``openai:http://host:8000#model``, ``preds:file.jsonl``, bundled names such as
``whisper-tiny.en``). A spec string plus the weights hash plus the decode options plus the
*code* entries (the backend's decoding-code version and what it resolved at load time: the
compute type a ``default`` request became on this machine, the converter revision of rebuilt
weights) is the backend's :class:`BackendIdentity`, recorded with every output and used as the
cache key. Bump a backend's ``code_version`` whenever a change to its decoding code can change
its outputs: results cached by the old code are then never served for the new.

Where a backend runs (:class:`RuntimeOptions`: device, batch size) is chosen per model at load
time. **The key rule:** the identity carries a runtime setting exactly when it can change the
outputs. The resolved compute type (``compute_type`` / ``dtype``) always does; the device kind
enters as a ``device`` code entry when it is not the CPU (kernels differ between devices; the
CPU is the reference every key without the entry was computed on); the device index
(``cuda:0`` vs ``cuda:1``) and the batch size do not enter: backends batch so that each clip's
inputs are the same in any batch (Whisper pads every clip to 30 s, CTC models mask the
padding), and the tests check that greedy outputs are identical batched and unbatched.
See ``docs/inference.md``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from asr_audit.errors import BackendError, ConfigError
from asr_audit.registry import Registry

SAMPLE_RATE = 16_000
Seconds = float

TRANSCRIBE = "transcribe"
SCORE = "score"
SITES = "sites"
CAPABILITIES = (TRANSCRIBE, SCORE, SITES)


@dataclass(frozen=True, slots=True)
class DecodeOptions:
    """Decoding options that change outputs (and therefore belong to the cache key).

    Defaults follow the project convention: greedy, temperature 0, no timestamps, language
    given, no prompt. ``device`` and ``batch_size`` are :class:`RuntimeOptions`, not here (the
    resolved device and compute type enter the identity's code entries where they change outputs).
    """

    language: str | None = "en"
    task: str = "transcribe"  # "transcribe" | "translate"
    beam_size: int = 1
    max_new_tokens: int = 440
    compute_type: str = "default"  # ct2 / torch dtype request: default | float32 | float16 | bfloat16 | int8

    def __post_init__(self) -> None:
        for name, typ, what in (
            ("language", (str, type(None)), 'a language code such as "en" (or leave it out)'),
            ("task", str, '"transcribe" or "translate"'),
            ("beam_size", int, "a whole number >= 1"),
            ("max_new_tokens", int, "a whole number >= 1"),
            ("compute_type", str, '"default", "float32", "float16", "bfloat16" or "int8"'),
        ):
            value = getattr(self, name)
            if not isinstance(value, typ) or isinstance(value, bool):
                raise ConfigError(
                    f"decode option {name} = {value!r} is a {type(value).__name__}; fix: write {name} as {what}"
                )
        if self.task not in ("transcribe", "translate"):
            raise ConfigError(f"decode option task={self.task!r} is unknown; fix: use transcribe or translate")
        if self.beam_size < 1:
            raise ConfigError(f"decode option beam_size={self.beam_size} must be >= 1; fix: use 1 (greedy) or more")
        if self.max_new_tokens < 1:
            raise ConfigError(f"decode option max_new_tokens={self.max_new_tokens} must be >= 1; fix: use e.g. 440")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DecodeOptions:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"unknown decode option(s) {', '.join(unknown)}; fix: use only {', '.join(sorted(known))}"
            )
        return cls(**data)


DEVICE_KINDS = ("auto", "cpu", "cuda")


@dataclass(frozen=True, slots=True)
class RuntimeOptions:
    """Where and in what batches a backend runs, chosen per model (spec ``device`` / ``batch_size``,
    CLI ``--device`` / ``--batch-size``).

    ``device``: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (CUDA when available); ``None`` defers to
    ``$ASR_AUDIT_DEVICE``, then ``auto``. ``batch_size``: clips per forward pass (``None`` = the
    backend's default). Neither is a decode option: the batch size never changes outputs, and
    the resolved device enters the identity only where it does (see the module docstring).
    """

    device: str | None = None
    batch_size: int | None = None

    def __post_init__(self) -> None:
        if self.device is not None and (
            not isinstance(self.device, str) or self.device.strip().lower().split(":")[0] not in DEVICE_KINDS
        ):
            raise ConfigError(f"device {self.device!r} is unknown; fix: use cpu, cuda, cuda:N or auto")
        if self.batch_size is not None and (
            not isinstance(self.batch_size, int) or isinstance(self.batch_size, bool) or self.batch_size < 1
        ):
            raise ConfigError(f"batch size {self.batch_size!r} must be a whole number >= 1; fix: use e.g. 8")

    def kwargs(self, default_batch_size: int = 8) -> dict[str, Any]:
        """``device`` / ``batch_size`` keywords for a backend constructor."""
        return {"device": self.device, "batch_size": self.batch_size or default_batch_size}


CodeEntries = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class BackendIdentity:
    """What makes two transcriptions comparable: spec, weights hash, decode options, code.

    ``code`` holds sorted ``(name, value)`` pairs: ``code_version`` (the decoding code's
    version, e.g. ``ct2-whisper/1``) and settings resolved at load time (``compute_type``,
    ``converter``). All of it enters :attr:`key`.

    >>> a = BackendIdentity("x", "h", code=(("code_version", "ct2-whisper/1"), ("compute_type", "float32")))
    >>> b = BackendIdentity("x", "h", code=(("code_version", "ct2-whisper/1"), ("compute_type", "float16")))
    >>> a.key != b.key
    True
    """

    spec: str
    weights_hash: str
    options: DecodeOptions = field(default_factory=DecodeOptions)
    code: CodeEntries = ()

    @property
    def key(self) -> str:
        """A stable short hash used as the store key."""
        payload = json.dumps(
            {
                "spec": self.spec,
                "weights": self.weights_hash,
                "options": self.options.to_dict(),
                "code": dict(self.code),
            },
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:24]

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "weights_hash": self.weights_hash,
            "options": self.options.to_dict(),
            "code": dict(self.code),
            "key": self.key,
        }


@dataclass(frozen=True, slots=True)
class TokenScores:
    """Teacher-forced scores of one target text: one entry per target token."""

    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]

    @property
    def total(self) -> float:
        return float(sum(self.logprobs))


@runtime_checkable
class Backend(Protocol):
    """A loaded ASR model. Implementations set the attributes and the methods they support."""

    # Read-only in the protocol, so that implementations may narrow them (a ``ClassVar``
    # ``capabilities``, a ``max_duration`` that is always ``None`` or always a number).
    @property
    def spec(self) -> str: ...

    @property
    def capabilities(self) -> frozenset[str]: ...

    @property
    def max_duration(self) -> Seconds | None:
        """Longest clip the backend accepts, ``None`` = unlimited."""
        ...

    def identity(self) -> BackendIdentity: ...

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        """Greedy transcription of 16 kHz mono float32 waveforms, one string per input."""
        ...


class ScoringBackend(Backend, Protocol):
    def score(self, audios: Sequence[np.ndarray], prefixes: Sequence[str], targets: Sequence[str]) -> list[TokenScores]:
        """Teacher-forced log-probabilities of ``targets`` given audio and the text ``prefixes``."""
        ...


_CAN = {"sites": "expose hook sites"}  # capability -> what a backend lacking it cannot do (else its name)


class Capable(Protocol):
    """What :func:`require_capability` reads: a backend, or a probe's model handle wherever it runs."""

    @property
    def spec(self) -> str: ...

    @property
    def capabilities(self) -> frozenset[str]: ...


def require_capability(backend: Capable, capability: str) -> None:
    """Raise a clear error when ``backend`` lacks ``capability``."""
    if capability not in backend.capabilities:
        have = ", ".join(sorted(backend.capabilities)) or "none"
        raise BackendError(
            f"backend {backend.spec!r} cannot {_CAN.get(capability, capability)} (it supports: {have}); "
            f"fix: choose a backend with the '{capability}' capability (see `asr-audit models`)"
        )


# --------------------------------------------------------------------------- registry

# ``(argument, options) -> Backend``; a factory that also takes a keyword ``runtime``
# (:class:`RuntimeOptions`) can be placed on a device and batched by the caller.
BackendFactory = Callable[..., Backend]


@dataclass(frozen=True, slots=True)
class BackendKind:
    """A registered backend family: spec prefix (``hf``) or bundled name (``whisper-tiny.en``)."""

    name: str
    factory: BackendFactory
    description: str
    capabilities: frozenset[str]
    bundled: bool = False
    extra: str | None = None  # the pip extra that provides its dependencies


BACKEND_ENTRY_POINTS = "asr_audit.backends"

# Modules whose import registers backends (they must import heavy dependencies lazily). Backends
# of higher layers (the model organisms) and of other packages are entry points of the group
# BACKEND_ENTRY_POINTS, declared in their pyproject.toml (see asr_audit.registry).
BUILTIN_BACKEND_MODULES: tuple[str, ...] = (
    "asr_audit.models.sphinx",
    "asr_audit.models.openai_http",
    "asr_audit.models.preds",
    "asr_audit.models.ct2",
    "asr_audit.models.hf",
    "asr_audit.models.hf_ctc",
)

BACKENDS: Registry[BackendKind] = Registry(
    "backend kind",
    fix="see `asr-audit models`",
    modules=BUILTIN_BACKEND_MODULES,
    entry_points=BACKEND_ENTRY_POINTS,
)


def register_backend(
    name: str,
    *,
    description: str,
    capabilities: Sequence[str],
    bundled: bool = False,
    extra: str | None = None,
) -> Callable[[BackendFactory], BackendFactory]:
    """Decorator registering a factory ``(argument, options) -> Backend`` under ``name``.

    For prefix kinds the argument is the text after ``name:``; for bundled names it is ``""``.
    A name already taken by another factory is a :class:`ConfigError`.
    """

    def deco(factory: BackendFactory) -> BackendFactory:
        bad = set(capabilities) - set(CAPABILITIES)
        if bad:
            raise ValueError(f"unknown capabilities {sorted(bad)}")
        BACKENDS.register(name, BackendKind(name, factory, description, frozenset(capabilities), bundled, extra))
        return factory

    return deco


def available_backends() -> list[BackendKind]:
    """Every registered backend kind, prefix kinds first, then bundled names."""
    return sorted((kind for _, kind in BACKENDS.items()), key=lambda k: (k.bundled, k.name))


def model_specs(value: str, flag: str = "--model") -> list[str]:
    """Comma-separated model specs (a ``--model`` flag), each parsed once so a typo fails before any work."""
    items = [v.strip() for v in value.split(",")]
    if not all(items):
        raise ConfigError(f"{flag} {value!r} has an empty item; fix: e.g. {flag} sphinx:en-us,whisper-tiny.en")
    if len(set(items)) != len(items):
        raise ConfigError(f"{flag} {value!r} names a model twice; fix: list each model once")
    for spec in items:
        parse_spec(spec)
    return items


def parse_spec(spec: str) -> tuple[str, str]:
    """Split a spec string into (kind, argument).

    >>> parse_spec("hf:openai/whisper-tiny.en")
    ('hf', 'openai/whisper-tiny.en')
    >>> parse_spec("whisper-tiny.en")
    ('whisper-tiny.en', '')
    """
    spec = spec.strip()
    if spec in BACKENDS and BACKENDS.get(spec).bundled:
        return spec, ""
    kind, sep, arg = spec.partition(":")
    if sep and kind in BACKENDS and not BACKENDS.get(kind).bundled:
        if not arg:
            raise ConfigError(f"model spec {spec!r} has nothing after '{kind}:'; fix: e.g. {kind}:<model id or path>")
        return kind, arg
    valid = ", ".join(k.name + ("" if k.bundled else ":<arg>") for k in available_backends())
    raise ConfigError(
        f"model spec {spec!r} is not recognised; fix: use one of the forms {valid} (see `asr-audit models`)"
    )


def takes_runtime(factory: BackendFactory) -> bool:
    """Whether ``factory`` accepts the ``runtime`` keyword (device and batch size)."""
    try:
        return "runtime" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def load_backend(spec: str, options: DecodeOptions | None = None, runtime: RuntimeOptions | None = None) -> Backend:
    """Create the backend named by ``spec`` (see :func:`available_backends`), placed by ``runtime``.

    A backend kind whose factory takes no ``runtime`` (CPU engines, HTTP, prediction files)
    ignores the batch size and refuses a CUDA device.
    """
    kind, arg = parse_spec(spec)
    factory = BACKENDS.get(kind).factory
    options = options or DecodeOptions()
    if runtime is None or runtime == RuntimeOptions():
        return factory(arg, options)
    if takes_runtime(factory):
        return factory(arg, options, runtime=runtime)
    if (runtime.device or "auto").strip().lower() not in ("auto", "cpu"):
        raise ConfigError(
            f"model {spec!r} cannot be placed on device {runtime.device!r}; fix: remove its device setting"
        )
    return factory(arg, options)


class BaseBackend:
    """Convenience base: subclasses set ``capabilities`` and ``code_version`` and implement ``transcribe``.

    ``code_version`` names the decoding code and its revision (``"ct2-whisper/1"``); bump the
    number whenever a change can alter outputs. Settings resolved at load time go into
    :meth:`identity_code` (override it, calling ``super()``).
    """

    capabilities: ClassVar[frozenset[str]] = frozenset({TRANSCRIBE})
    code_version: ClassVar[str] = "unversioned"
    max_duration: Seconds | None = None

    def __init__(self, spec: str, options: DecodeOptions, weights_hash: str) -> None:
        self.spec = spec
        self.options = options
        self._weights_hash = weights_hash

    def identity_code(self) -> dict[str, str]:
        """The code entries of the identity: the decoding-code version and resolved settings."""
        return {"code_version": self.code_version}

    def identity(self) -> BackendIdentity:
        return BackendIdentity(self.spec, self._weights_hash, self.options, tuple(sorted(self.identity_code().items())))

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the OS has one (a container or
    ``taskset`` limits it; ``os.cpu_count()`` counts the whole machine's, and more threads than
    cores only contend)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def hash_files(paths: Sequence[str], chunk: int = 1 << 20) -> str:
    """sha256 over the contents of ``paths`` (sorted), used as a weights hash."""
    h = hashlib.sha256()
    for p in sorted(paths):
        with open(p, "rb") as fh:
            while block := fh.read(chunk):
                h.update(block)
    return h.hexdigest()[:16]
