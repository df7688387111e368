"""Verbs built from flag declarations (issue 28): each flag is declared once, next to the option it
sets (:class:`~asr_audit.options.CliFlag`), and :func:`verb` turns a list of them into a typer command.

A probe verb is then: its flags -> ``probe.options_from(values, Surface.cli())`` -> the verb's body
(the same inputs builder as the spec runner, ``probe.run``, a renderer). What only the verb does
(refdis's ``--write-corrected``, mech's sub-verbs) stays in its body or in a ``check`` hook.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from asr_audit.cli import console, err_console
from asr_audit.cli import examples as worked
from asr_audit.cli.reading import reading_options
from asr_audit.options import REQUIRED, CliFlag, Surface, renamed
from asr_audit.outputs import check_output_file
from asr_audit.report.tables import write_text


@dataclass(frozen=True, slots=True)
class Args:
    """A verb's flag values by field (``read``: its reading options, if any) and, for a probe verb,
    the probe's options record."""

    values: Mapping[str, Any]
    options: Any = None
    surface: Surface = Surface.cli()  # names the options' fields by their flags
    given: Mapping[str, Any] = field(default_factory=dict)  # the options' values, as options_from reads them

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def write(self, field: str, text: str, out: Any = console) -> None:
        """Write ``text`` to the output flag ``field`` (when given) and say so on ``out``."""
        if self.values[field] is not None:
            out.print(f"wrote {write_text(self.values[field], text)}", highlight=False)


def _parameter(flag: CliFlag) -> inspect.Parameter:
    option = typer.Option(flag.default, *(flag.names or (flag.flag,)), help=flag.help, min=flag.minimum)
    annotation = flag.type | None if flag.default is None else flag.type
    return inspect.Parameter(flag.field, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)


def verb(
    group: typer.Typer,
    name: str,
    flags: Iterable[CliFlag],
    *,
    probe: Any = None,
    options: Iterable[CliFlag] | None = None,
    examples: str | Sequence[tuple[str, str]] | None = None,
    read: bool = False,
    check: Callable[[Mapping[str, Any]], None] | None = None,
    inputs: tuple[str, ...] = (),
) -> Callable[[Callable[[Args], Any]], Callable[..., Any]]:
    """Register the body decorated as the verb ``name`` of ``group``, with ``flags`` and the
    ``options`` flags (default: the probe's :attr:`~asr_audit.probes.core.probe.Probe.flags`;
    ``read``: the reading flags too), its ``--help`` ending in ``examples`` (default: the probe's;
    ``(command line, what it does)`` pairs, or the epilog's text). Before the body runs:
    ``check(values)``, then the probe's options from the ``options`` flags, then every output flag
    checked (not a folder, not one of the verb's input paths nor the ``inputs`` flags' values). The
    body's docstring is the verb's help."""
    if options is None:
        options = () if probe is None else probe.flags.values()
    option_flags = list(options)
    every = sorted([*flags, *option_flags], key=lambda f: f.default is not REQUIRED)  # --help: required first
    shown = examples if examples is not None else probe.examples
    epilog = shown if isinstance(shown, str) else worked(*shown)

    def decorate(body: Callable[[Args], Any]) -> Callable[..., Any]:
        def command(**values: Any) -> Any:
            if check is not None:
                check(values)
            surface = Surface.cli(**renamed(option_flags))
            given = {f.field: f.value(values[f.field]) for f in option_flags}
            parsed = None if probe is None else probe.options_from(given, surface)
            sources = [values[f.field] for f in every if f.type is Path and not f.output]
            sources += [values[n] for n in inputs]
            for f in every:
                if f.output:
                    check_output_file(values[f.field], f.flag, sources)
            return body(Args(values, parsed, surface, given))

        params = [_parameter(f) for f in every]
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # read by typer
        command.__annotations__ = {p.name: p.annotation for p in params}
        command.__doc__ = body.__doc__
        command.__name__ = body.__name__
        group.command(name, epilog=epilog)(reading_options(command) if read else command)
        return body

    return decorate


def say(line: str) -> None:
    """A line a probe logs while it runs, on stderr."""
    err_console.print(line, highlight=False, soft_wrap=True)
