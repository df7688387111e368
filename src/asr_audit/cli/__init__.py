"""The ``asr-audit`` command line: thin verbs over the library.

Each verb lives in its own module under ``asr_audit.cli`` and registers itself on :data:`app`
when imported; :data:`VERB_MODULES` lists them. Any :class:`~asr_audit.errors.AuditError`
becomes one line on stderr and exit code 2 — never a traceback.
"""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from asr_audit.errors import AuditError

app = typer.Typer(
    name="asr-audit",
    help="Does a speech-recognition model listen, or recite the benchmark's answer key?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# tables are wide: when output is piped (CI logs, files), do not squeeze them into 80 columns
console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 400)

# one module per verb group; importing it registers its commands on `app`
VERB_MODULES = [
    "asr_audit.cli.predictions",
    "asr_audit.cli.ortho",
    "asr_audit.cli.inference",
    "asr_audit.cli.align",
    "asr_audit.cli.run",
    "asr_audit.cli.calib",
    "asr_audit.cli.audio_probes",
    "asr_audit.cli.battery",
    "asr_audit.cli.organism",
    "asr_audit.cli.demo",
]


def _register() -> None:
    for name in VERB_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real missing dependency inside the module
                raise


def split_list(value: str | None, flag: str) -> list[str] | None:
    """A comma-separated CLI list (``None`` stays ``None``); empty items are an error."""
    from asr_audit.errors import ConfigError

    if value is None:
        return None
    items = [v.strip() for v in value.split(",")]
    if not all(items):
        raise ConfigError(f"{flag} {value!r} has an empty item; fix: e.g. {flag} a,b,c")
    return items


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    import os

    # library chatter (weight-loading bars, generation warnings) would drown the tables
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    _register()
    try:
        app(args=argv, standalone_mode=False)
    except AuditError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        err_console.print("aborted")
        return 130
    except KeyboardInterrupt:
        err_console.print("interrupted; rerun the same command to resume")
        return 130
    except Exception as exc:  # click usage errors
        import click

        if isinstance(exc, click.exceptions.UsageError):
            exc.show()
            return 2
        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            return exc.exit_code
        raise
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
