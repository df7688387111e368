"""Probe options: one frozen record per probe, built from CLI flags or a TOML table by the same code.

A :class:`Surface` is where the user wrote a value and how to name it back to them:
``Surface.cli()`` names a field by its flag (``--min-panel``), ``Surface.toml(path, "probes.refdis")``
by the spec file, table and key (``audit.toml: [probes.refdis] min_panel``), ``Surface.python("refdis")``
by the keyword argument of the Python API's function (``refdis(min_panel=...)``).

Every options record has ``from_mapping(values, surface)``. It reads the values with a
:class:`Reader` (type checks; ``None`` means "not given", so CLI flags left unset take the
default), then constructs the record, whose ``__post_init__`` is the one function that checks
the values. That function raises :class:`OptionError` naming the *field*; :func:`build`
re-words it for the surface the user used. Constructed directly (library use), a record speaks
the CLI's flags.

>>> Surface.cli().name("min_panel")
'--min-panel'
>>> Surface.toml("audit.toml", "probes.refdis").name("min_panel")
'[probes.refdis] min_panel'
>>> str(Surface.toml("audit.toml", "probes.refdis").error("majority", 2.0, "must be in (0, 1]", "use 0.8"))
'audit.toml: [probes.refdis] majority = 2.0 must be in (0, 1]; fix: use 0.8'
>>> str(Surface.cli().error("majority", 2.0, "must be in (0, 1]", "use 0.8"))
'--majority 2.0 must be in (0, 1]; fix: use 0.8'
>>> str(Surface.python("refdis").error("majority", 2.0, "must be in (0, 1]", "use 0.8"))
'refdis(majority=2.0) must be in (0, 1]; fix: use 0.8'

Options that cannot go together are one :class:`OptionConflict` (raised by :func:`refuse` in a
record's ``__post_init__``), worded for the surface the same way:

>>> str(Surface.toml("a.toml", "probes.refdis").conflict(("truth", "labels"), "{truth} and {labels} clash", "drop one"))
'a.toml: [probes.refdis] truth and [probes.refdis] labels clash; fix: drop one'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from asr_audit.errors import ConfigError

T = TypeVar("T")
CLI, TOML, PYTHON = "cli", "toml", "python"


class OptionError(ConfigError):
    """A bad option value. Carries the field, so a :class:`Surface` can name it as the user wrote it."""

    def __init__(self, field: str, value: object, problem: str, fix: str, message: str | None = None) -> None:
        self.field, self.value, self.problem, self.fix = field, value, problem, fix
        super().__init__(message or f"{_flag(field)} {_cli_value(value)} {problem}; fix: {fix}")


class OptionConflict(OptionError):
    """Options that cannot go together: ``problem`` and ``fix`` name each of ``fields`` as
    ``{field}``, filled in for the surface by :meth:`Surface.conflict`."""

    def __init__(self, fields: tuple[str, ...], problem: str, fix: str, message: str | None = None) -> None:
        self.fields = fields
        super().__init__(
            fields[0], None, problem, fix, message or _conflict_message(Surface.cli(), fields, problem, fix)
        )


def _conflict_message(surface: Surface, fields: tuple[str, ...], problem: str, fix: str) -> str:
    def fill(text: str) -> str:
        for f in fields:
            text = text.replace("{" + f + "}", surface.name(f))
        return text

    where = f"{surface.path or '<spec>'}: " if surface.kind == TOML else ""
    return f"{where}{fill(problem)}; fix: {fill(fix)}"


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _cli_value(value: object) -> str:
    """A value as it would be typed on the command line (a list comma-separated), quoted."""
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    return repr(value)


def _toml_value(value: object) -> str:
    """A value as it would be written in TOML (``true``, ``"text"``, ``[1, 2]``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Surface:
    """Where option values came from: CLI flags, one TOML table of an experiment spec, or the
    keyword arguments of a Python API function (``table`` names the function).

    ``flags`` renames fields whose flag is not ``--field-name`` (CLI); ``tables`` names another
    table for fields set there, e.g. a per-corpus override (TOML).
    """

    kind: str = CLI
    path: str = ""
    table: str = ""
    flags: Mapping[str, str] = field(default_factory=dict)
    tables: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def cli(cls, **flags: str) -> Surface:
        """Command-line flags; ``flags`` maps a field to its flag where it is not ``--field-name``."""
        return cls(kind=CLI, flags=flags)

    @classmethod
    def toml(cls, path: str, table: str, tables: Mapping[str, str] | None = None) -> Surface:
        """The table ``table`` (dotted, e.g. ``probes.refdis``) of the spec file ``path``."""
        return cls(kind=TOML, path=path, table=table, tables=dict(tables or {}))

    @classmethod
    def python(cls, function: str) -> Surface:
        """The keyword arguments of the :mod:`asr_audit.api` function ``function``."""
        return cls(kind=PYTHON, table=function)

    def name(self, name: str) -> str:
        """How the user wrote the field ``name`` on this surface."""
        if self.kind == CLI:
            return self.flags.get(name, _flag(name))
        if self.kind == PYTHON:
            return f"{self.table}({name}=...)"
        return f"[{self.tables.get(name, self.table)}] {name}"

    def error(self, name: str, value: object, problem: str, fix: str) -> OptionError:
        """A one-line error about ``name`` = ``value``, worded for this surface (``fix`` empty: the
        problem, e.g. a quoted error, says its own fix)."""
        rest = f"{problem}; fix: {fix}" if fix else problem
        if self.kind == CLI:
            message = f"{self.name(name)} {_cli_value(value)} {rest}"
        elif self.kind == PYTHON:
            message = f"{self.table}({name}={value!r}) {rest}"
        else:
            message = f"{self.path or '<spec>'}: {self.name(name)} = {_toml_value(value)} {rest}"
        return OptionError(name, value, problem, fix, message)

    def conflict(self, fields: tuple[str, ...], problem: str, fix: str) -> OptionConflict:
        """A one-line error about ``fields`` that cannot go together (``{field}`` in ``problem`` and
        ``fix``: the field as the user wrote it on this surface)."""
        return OptionConflict(fields, problem, fix, _conflict_message(self, fields, problem, fix))

    def missing(self, name: str, fix: str) -> OptionError:
        """A one-line error: the required field ``name`` was not given."""
        where = "" if self.kind != TOML else f"{self.path or '<spec>'}: "
        return OptionError(name, None, "is missing", fix, f"{where}{self.name(name)} is missing; fix: {fix}")

    def reword(self, exc: OptionError) -> OptionError:
        if isinstance(exc, OptionConflict):
            return self.conflict(exc.fields, exc.problem, exc.fix)
        return self.error(exc.field, exc.value, exc.problem, exc.fix)


def build(cls: Callable[..., T], surface: Surface, **values: Any) -> T:
    """``cls(**values)``, with a validation error re-worded for ``surface``."""
    try:
        return cls(**values)
    except OptionError as exc:
        raise surface.reword(exc) from None


def check(ok: bool, name: str, value: object, problem: str, fix: str) -> None:
    """Raise :class:`OptionError` for ``name`` unless ``ok`` (the validators' one idiom)."""
    if not ok:
        raise OptionError(name, value, problem, fix)


def refuse(bad: bool, fields: tuple[str, ...], problem: str, fix: str) -> None:
    """Raise :class:`OptionConflict` when ``bad``: ``fields`` cannot go together (``problem`` and
    ``fix`` name each as ``{field}``; :func:`build` words them for the surface)."""
    if bad:
        raise OptionConflict(fields, problem, fix)


class Reader:
    """Typed reads of option values; ``None`` or a missing key gives the default.

    Unknown names are an error listing the known ones (``probe`` names whose options they are).
    """

    def __init__(self, values: Mapping[str, Any], surface: Surface, known: Collection[str], probe: str) -> None:
        self.values = {k: v for k, v in values.items() if v is not None}
        self.surface = surface
        unknown = sorted(set(self.values) - set(known))
        if unknown:
            raise surface.error(
                unknown[0],
                self.values[unknown[0]],
                f"is not an option of {probe}",
                f"use {', '.join(sorted(known)) or 'no options'}",
            )

    def has(self, key: str) -> bool:
        return key in self.values

    def _typed(self, key: str, default: Any, ok: Callable[[Any], bool], want: str) -> Any:
        if key not in self.values:
            return default
        value = self.values[key]
        if not ok(value):
            raise self.surface.error(
                key, value, f"is a {type(value).__name__}, expected {want}", f"write {key} as {want}"
            )
        return value

    def number(self, key: str, default: Any) -> Any:
        """A float (an int is accepted and converted)."""
        v = self._typed(key, default, lambda x: isinstance(x, (int, float)) and not isinstance(x, bool), "a number")
        return float(v) if isinstance(v, int) and key in self.values else v

    def integer(self, key: str, default: Any) -> Any:
        return self._typed(key, default, lambda x: isinstance(x, int) and not isinstance(x, bool), "an integer")

    def flag(self, key: str, default: Any) -> Any:
        return self._typed(key, default, lambda x: isinstance(x, bool), "true or false")

    def text(self, key: str, default: Any) -> Any:
        return self._typed(key, default, lambda x: isinstance(x, str), "a string")

    def names(self, key: str, default: Any) -> Any:
        """A list of strings, as a tuple (a comma-separated string is split)."""
        if isinstance(self.values.get(key), str):
            return tuple(v.strip() for v in self.values[key].split(","))
        v = self._typed(
            key,
            default,
            lambda x: isinstance(x, (list, tuple)) and all(isinstance(i, str) for i in x),
            "a list of strings",
        )
        return tuple(v) if key in self.values else v

    def choice(self, key: str, choices: Collection[str], default: Any) -> Any:
        v = self.text(key, default)
        if key in self.values and v not in choices:
            raise self.surface.error(
                key, v, f"is unknown (valid: {', '.join(choices)})", f"use one of {', '.join(choices)}"
            )
        return v


REQUIRED: Any = ...  # a flag's default when the user must give it


@dataclass(frozen=True, slots=True)
class CliFlag:
    """One command-line flag, declared once next to the option (or input) it sets, for every verb
    that takes it (``cli/probe_verbs.py`` builds the verbs from these; the spec docs may read them).

    ``field``: the option's name; ``type``: ``str``, ``int``, ``float``, ``bool`` or ``Path``;
    ``default`` (:data:`REQUIRED`: the user must give it); ``help``; ``names``: the flag and its
    short form (default ``--field-name``; a switch ``--x/--no-x``); ``minimum``: the smallest value
    the command line accepts; ``parse(value, flag)``: turns the typed text into the option's value
    (e.g. :func:`split_names`); ``output``: a file the verb writes (checked before the work).

    >>> CliFlag("min_panel", int).flag, CliFlag("loo", bool, True, names=("--loo/--no-loo",)).flag
    ('--min-panel', '--loo')
    """

    field: str
    type: type = str
    default: Any = None
    help: str = ""
    names: tuple[str, ...] = ()
    minimum: float | None = None
    parse: Callable[[Any, str], Any] | None = None
    output: bool = False

    @property
    def flag(self) -> str:
        """The long flag the user types (the first of a ``--x/--no-x`` pair)."""
        return self.names[0].split("/")[0] if self.names else _flag(self.field)

    def value(self, given: Any) -> Any:
        """``given`` as the option's value: parsed, a path as text (``None`` stays ``None``)."""
        if given is None:
            return None
        if self.parse is not None:
            return self.parse(given, self.flag)
        return str(given) if self.type.__name__ == "Path" else given


def flag_table(*flags: CliFlag) -> dict[str, CliFlag]:
    """Flags by field (one declaration per field)."""
    table = {f.field: f for f in flags}
    if len(table) != len(flags):
        raise ValueError("a field is declared twice")
    return table


def renamed(flags: Iterable[CliFlag]) -> dict[str, str]:
    """The fields whose flag is not ``--field-name``, for :meth:`Surface.cli`."""
    return {f.field: f.flag for f in flags if f.flag != _flag(f.field)}


def split_names(value: str | None, flag: str) -> list[str] | None:
    """A comma-separated list (``None`` stays ``None``); an empty item is an error naming ``flag``.

    >>> split_names("a, b", "--models")
    ['a', 'b']
    """
    if value is None:
        return None
    items = [v.strip() for v in value.split(",")]
    if not all(items):
        raise ConfigError(f"{flag} {value!r} has an empty item; fix: e.g. {flag} a,b,c")
    return items
