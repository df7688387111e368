"""One registered object per probe, called the same way by the CLI verb, the spec runner and the API.

A probe is a :class:`Probe`: it turns option values into its options record once
(``options_from(values, surface)``: a CLI verb's flags, a spec's ``[probes.<name>]`` table or an API
call's keyword arguments, each named back to the user as written, see :class:`asr_audit.options.Surface`),
then runs on a :class:`ProbeInputs` (``run(inputs, options)``) and returns its typed result, which
``to_dict`` turns into the JSON-able dictionary the report and ``results.json`` read. Every front door
does the same three steps::

    probe = get_probe("switch_rate")
    options = probe.options_from({"min_per_arm": 5}, Surface.cli())
    result = probe.run(ProbeInputs(corpus="vox", predictions=pset, panel=(), seed=0, normalizer="whisper"), options)
    data = probe.to_dict(result)

so the verb, the spec and the API cannot drift apart (tests/probes/test_parity.py runs each probe
through all three). Models are reached through ``inputs.pool`` (a :class:`ModelPool`), which the local
executor and the Ray executor both implement: no probe asks where a model runs.

The registry (:data:`PROBES`) is filled by the modules that define probes. Probes of this layer
register when their module is imported; probes of higher layers (``calib``, ``mechrun``) register
the same way, and the runner, which sits above them all, imports their modules
(``asr_audit.runner.probes.PROBE_MODULES``) before it looks a probe up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from asr_audit.errors import ConfigError
from asr_audit.options import CliFlag, Surface
from asr_audit.registry import Registry
from asr_audit.store.base import Store, require_store

if TYPE_CHECKING:
    from asr_audit.corpus.clips import Clip, Corpus
    from asr_audit.corpus.predfiles import PredictionSet
    from asr_audit.probes.core.models import Model, Transcribed

OptionsT = TypeVar("OptionsT")  # a probe's options record
ResultT = TypeVar("ResultT")  # a probe's typed result


@runtime_checkable
class ModelPool(Protocol):
    """The models of a run, wherever they run: in this process or on a cluster's workers.

    ``model(name, store)`` is the model's :class:`~asr_audit.probes.core.models.Model` handle
    (``transcribe``, ``score``, ``forced``, ``isolated``, and what the model is), the same calls
    whether the pool runs it here or elsewhere; ``transcribe(jobs, store)`` transcribes several
    models' clips in one call (model name or :class:`~asr_audit.probes.core.models.Variant` -> clips
    in, the same key -> :class:`~asr_audit.probes.core.models.Transcribed` out), side by side where
    the pool can. ``get(name)`` is the model's backend loaded in this process, for a probe that
    hooks the model itself (steering); ``names`` are the models the pool hands out. Implemented by
    :class:`~asr_audit.probes.core.models.LocalPool` (a verb's or the API's backends),
    ``runner.run.LocalExecutor`` and ``runner.ray_exec.RayExecutor``; a probe never tests which.
    """

    @property
    def names(self) -> tuple[str, ...]: ...

    def get(self, name: str) -> Any: ...

    def model(self, name: str, store: Store | None) -> Model: ...

    def transcribe(self, jobs: Mapping[Any, Iterable[Clip]], store: Store | None) -> Mapping[Any, Transcribed]: ...


@dataclass(frozen=True, slots=True)
class PredictionFiles:
    """The prediction files a corpus's predictions are read from: the folder (or file) ``path``, the
    ``dataset`` of a bucketed folder, and ``load``, the front door's reader of them (its reading
    options, its normalizer for references, what it says of repairs). ``plain``: the files are read
    as without reading options, so a probe may read them itself (refdis's columns and text cache,
    whose entries are keyed by the files' bytes, not by how they were read)."""

    path: Path
    dataset: str | None
    load: Callable[[], PredictionSet]
    plain: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeInputs:
    """What a probe gets for one corpus, built the same way by every front door.

    ``predictions``: the corpus's prediction set (from the store's transcripts, or from prediction
    files); ``files``: those files, where the predictions are read from files (a front door that
    gives ``files`` may leave ``predictions`` out: they are then read, by ``files.load``, when a probe
    first asks for them, so refdis's columns can run without reading any row); ``panel``: the
    consensus panel; ``clips``: the corpus's clips (``None`` for a prediction-file corpus); ``pool``:
    its models (``None`` when only predictions are at hand); ``models``: the models under audit that
    have audio to run on (``()`` for prediction files); ``store``: the results store every derived
    transcription is cached in; ``base``: the folder a relative path in the options is read from
    (the spec's folder, or the working directory); ``verify_truth``: turns a calibration folder's
    planted truth into a verification step (``asr_audit.calib.score.truth_verify``: ``calib`` sits
    above the probes, so the front door hands it in); ``log``: where a probe says what the user
    should know while it runs (the verb's stderr; ``None``: nowhere).
    """

    corpus: str
    predictions: PredictionSet = cast("PredictionSet", None)  # None only with files: read on first use
    panel: tuple[str, ...] = ()
    seed: int = 0
    normalizer: str = "whisper"
    clips: Corpus | None = None
    pool: ModelPool | None = None
    models: tuple[str, ...] = ()
    store: Store | None = None
    base: Path | None = None
    files: PredictionFiles | None = None
    # returns a verification step (``probes.predfiles.verified.Verify``; that module sits above this one)
    verify_truth: Callable[[Path], Callable[[Sequence[Any]], Any]] | None = None
    log: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        if self.predictions is None and self.files is not None:
            object.__delattr__(self, "predictions")  # unset: __getattr__ reads the files on first use

    def __getattr__(self, name: str) -> Any:
        """``predictions`` left out: read from :attr:`files` now, once."""
        if name != "predictions" or self.files is None:
            raise AttributeError(name)
        loaded = self.files.load()
        object.__setattr__(self, "predictions", loaded)
        return loaded

    @property
    def predictions_read(self) -> bool:
        """Whether :attr:`predictions` are at hand (given, or read from :attr:`files` already)."""
        try:
            object.__getattribute__(self, "predictions")
        except AttributeError:
            return False
        return True

    def say(self, line: str) -> None:
        """``line`` to :attr:`log`, if any."""
        if self.log is not None:
            self.log(line)

    def need_pool(self, probe: str) -> ModelPool:
        """The pool, or a one-line error saying the probe runs models on audio."""
        if self.pool is None or self.clips is None:
            raise ConfigError(
                f"corpus {self.corpus!r}: probe {probe} runs the models on the corpus's audio, and this corpus "
                "has prediction files only; fix: give the corpus a manifest (spec = ...) and [[models]]"
            )
        return self.pool

    def need_store(self, probe: str) -> Store:
        """The store, or a one-line error saying the probe caches its models' outputs in one."""
        return require_store(self.store, f"corpus {self.corpus!r}: probe {probe}")

    def resolve(self, path: str | Path) -> Path:
        """``path`` as given when absolute, else under :attr:`base` (when set)."""
        p = Path(path)
        return p if p.is_absolute() or self.base is None else self.base / p


class Probe(Generic[OptionsT, ResultT]):
    """A probe: its name, parameters, options record, run and result dictionary.

    Subclass it (or build one with :func:`probe`) and register it with :func:`register_probe`.
    ``params`` are the option names a spec table may set (besides ``skip``); ``options_from`` builds
    and checks the options record, naming a bad value as the user wrote it; ``run`` returns the
    typed result, or ``None`` when the probe does not apply to the corpus; ``to_dict`` is the
    JSON-able form (``results.json``, the report's section, ``--json``).
    """

    name: str
    params: tuple[str, ...]
    description: str
    #: its verb's command-line flag of each option (by field, declared beside the options record) and
    #: the verb's worked examples, ``(command line, what it does)``: ``cli/probe_verbs.py`` builds the
    #: verb from them
    flags: Mapping[str, CliFlag] = MappingProxyType({})
    examples: tuple[tuple[str, str], ...] = ()

    def options_from(self, values: Mapping[str, Any], surface: Surface) -> OptionsT:
        raise NotImplementedError

    def check(self, options: OptionsT, inputs: ProbeInputs, surface: Surface) -> None:
        """Refuse options the inputs cannot satisfy (a panel too small, a model not in the corpus)
        before any work; by default nothing to check."""

    def run(self, inputs: ProbeInputs, options: OptionsT) -> ResultT | None:
        raise NotImplementedError

    def to_dict(self, result: ResultT) -> dict[str, Any]:
        to = getattr(result, "to_dict", None)
        if callable(to):
            return dict(to())
        if isinstance(result, Mapping):
            return dict(result)
        raise TypeError(f"probe {self.name}: result {type(result).__name__} has no to_dict()")

    def run_checked(self, inputs: ProbeInputs, options: OptionsT, surface: Surface) -> ResultT | None:
        """``options`` (read on ``surface``) checked against ``inputs``, then run: the typed result."""
        self.check(options, inputs, surface)
        return self.run(inputs, options)

    def evaluate(self, inputs: ProbeInputs, values: Mapping[str, Any], surface: Surface) -> ResultT | None:
        """Options from ``values``, checked against ``inputs``, run: the typed result (a verb renders it)."""
        return self.run_checked(inputs, self.options_from(values, surface), surface)

    def __call__(self, inputs: ProbeInputs, values: Mapping[str, Any], surface: Surface) -> dict[str, Any] | None:
        """:meth:`evaluate` as a dictionary (the spec runner's call)."""
        result = self.evaluate(inputs, values, surface)
        return None if result is None else self.to_dict(result)


@dataclass(frozen=True, slots=True)
class FunctionProbe(Probe[OptionsT, ResultT]):
    """A probe made of functions (:func:`probe`); subclass :class:`Probe` when it needs more."""

    name: str
    params: tuple[str, ...]
    description: str
    options_fn: Callable[[Mapping[str, Any], Surface], OptionsT]
    run_fn: Callable[[ProbeInputs, OptionsT], ResultT | None]
    check_fn: Callable[[OptionsT, ProbeInputs, Surface], None] | None = None
    flags: Mapping[str, CliFlag] = field(default_factory=dict)
    examples: tuple[tuple[str, str], ...] = ()

    def options_from(self, values: Mapping[str, Any], surface: Surface) -> OptionsT:
        return self.options_fn(values, surface)

    def check(self, options: OptionsT, inputs: ProbeInputs, surface: Surface) -> None:
        if self.check_fn is not None:
            self.check_fn(options, inputs, surface)

    def run(self, inputs: ProbeInputs, options: OptionsT) -> ResultT | None:
        return self.run_fn(inputs, options)


def probe(
    name: str,
    params: Sequence[str],
    description: str,
    options: Callable[[Mapping[str, Any], Surface], OptionsT],
    run: Callable[[ProbeInputs, OptionsT], ResultT | None],
    check: Callable[[OptionsT, ProbeInputs, Surface], None] | None = None,
    *,
    flags: Mapping[str, CliFlag] | None = None,
    examples: tuple[tuple[str, str], ...] = (),
) -> FunctionProbe[OptionsT, ResultT]:
    """A :class:`FunctionProbe`, registered under ``name`` (``flags``, ``examples``: its verb's, see
    :attr:`Probe.flags`)."""
    return register_probe(
        FunctionProbe(name, tuple(params), description, options, run, check, dict(flags or {}), examples)
    )


PROBES: Registry[Probe[Any, Any]] = Registry("probe", fix="name one of them in a [probes.<name>] table")

P = TypeVar("P", bound=Probe[Any, Any])


def register_probe(p: P) -> P:
    """Register ``p`` under its name (a second registration of the same name is an error)."""
    PROBES.register(p.name, p)
    return p


def get_probe(name: str) -> Probe[Any, Any]:
    """The registered probe ``name`` (a one-line error listing the names otherwise)."""
    return PROBES.get(name)


def validate_params(spec_path: str, name: str, params: Mapping[str, Any]) -> None:
    """Unknown parameters of probe ``name`` are errors naming the spec file and field."""
    unknown = sorted(set(params) - set(get_probe(name).params) - {"skip"})
    if unknown:
        raise ConfigError(
            f"{spec_path}: field 'probes.{name}.{unknown[0]}' is not a parameter of {name}; "
            f"fix: use {', '.join(get_probe(name).params) or 'no parameters'}"
        )
