"""The ``asr-audit`` command line: thin verbs over the library.

Each verb lives in its own module under ``asr_audit.cli`` and registers itself on :data:`app`
when imported; :data:`VERB_MODULES` lists them. Any :class:`~asr_audit.errors.AuditError`
becomes one line on stderr and exit code 2 — never a traceback — ending in a ``fix:`` (the
verb's ``--help`` when the message names none); a usage error (missing or
malformed option, unknown verb) prints the verb's usage and exits 2, whichever ``click`` (or
``typer``'s vendored copy of it) raised it; Ctrl-C exits 130.

Both consoles print with rich markup *off*: clip ids, model and file names are data, and a
``[red]`` or ``[/x]`` inside them must print as text. Styled messages pass ``rich.text.Text``.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterable
from typing import Any

import typer
from rich.console import Console
from rich.segment import Segment
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from asr_audit.errors import AuditError
from asr_audit.options import split_names

# what a value option's help shows instead of typer's internal `<str>`-style type names (click's words)
TYPE_WORDS = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH", "bool": ""}


def _type_word(marker: str | None) -> str:
    """A readable type for typer's ``<int>``-style marker: ``INTEGER``; a choice ``[a|b]``; a list ``TEXT...``.

    >>> _type_word("<int>"), _type_word("<path>"), _type_word("<anchor|paper>"), _type_word("<list[str]>")
    ('INTEGER', 'PATH', '[anchor|paper]', 'TEXT...')
    """
    if not marker:
        return ""
    inner = marker[1:-1] if marker.startswith("<") and marker.endswith(">") else marker
    if inner.startswith("list[") and inner.endswith("]"):
        return _type_word(f"<{inner[5:-1]}>") + "..."
    if "|" in inner:
        return f"[{inner}]"
    return TYPE_WORDS.get(inner, inner.upper())


def readable_types(command: Any) -> None:
    """Show every option's value type as a plain word in ``command``'s help (and its sub-verbs'):
    ``--out PATH``, ``--seed INTEGER``; a flag (``--force``) shows none. typer >= 0.26 prints its
    internal markers (``<bool>``, ``<str>``) otherwise. An explicit ``metavar`` is kept."""
    context_class = getattr(command, "context_class", None)
    params = list(getattr(command, "params", []))
    if context_class is not None and hasattr(command, "get_help_option"):
        help_option = command.get_help_option(context_class(command))  # created once, then cached
        if help_option is not None:
            params.append(help_option)
    for param in params:
        if not hasattr(param, "display_type_rich") or getattr(param, "_asr_audit_readable", False):
            continue
        if getattr(param, "param_type_name", "") == "option" and getattr(param, "metavar", None) is not None:
            continue  # an option shows its explicit metavar (an argument's names it in the usage line)
        flag = bool(getattr(param, "is_flag", False)) or bool(getattr(param, "count", False))
        word = "" if flag else _type_word(param.display_type(None))
        param.display_type_rich = lambda ctx=None, word=word: word
        param._asr_audit_readable = True
    for sub in getattr(command, "commands", {}).values():
        readable_types(sub)


class _OptionsTable(Table):
    """typer's options table, laid out so that no flag name is ever cut (issue 29).

    typer builds each row as (required mark,) long names, short names, negative long names
    (``--no-loo``), negative short names, type, help, and rich shrinks every column alike when
    the terminal is narrow: at 80 columns ``--min-consensus-cer`` became ``--min-consensus-c…``.
    Here a flag's negative name goes under its name (one column less), and every column but the
    help keeps its width: only the help text wraps."""

    def add_row(self, *cells: Any, **kwargs: Any) -> None:
        if len(cells) in (6, 7):  # an options row (7: with the required mark); the commands table has fewer
            head, (names, short, negative, neg_short, kind, text) = cells[: len(cells) - 6], cells[-6:]
            if isinstance(negative, Text) and negative.plain:
                names = Text.assemble(names, "\n", negative) if isinstance(names, Text) else names
            cells = (*head, names, short, neg_short, kind, text)
        super().add_row(*cells, **kwargs)
        for column in self.columns[:-1]:
            column.no_wrap = True


def fit_help_tables() -> None:
    """Lay typer's option tables out with :class:`_OptionsTable` (its help module's ``Table``)."""
    import typer.rich_utils

    typer.rich_utils.Table = _OptionsTable  # type: ignore[misc]  # the name its panel printers call


class _Group(TyperGroup):
    """The top-level verb group: plain type words in every verb's help (:func:`readable_types`),
    and no flag name cut at 80 columns (:func:`fit_help_tables`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        readable_types(self)
        fit_help_tables()


def examples(*lines: tuple[str, str]) -> str:
    """A verb's help epilog: ``Examples:`` and one or two ``(command line, what it does)`` pairs.

    Every verb's ``--help`` ends with one (``tests/cli/test_help.py`` walks them all). Keep
    square brackets out of the lines: the rich help reads them as markup.

    >>> print(examples(("asr-audit demo", "the whole demo")))
    Examples:
    <BLANKLINE>
      asr-audit demo
          the whole demo
    """
    if not 1 <= len(lines) <= 3:
        raise ValueError("examples() takes one to three (command, explanation) pairs")
    return "Examples:\n\n" + "\n\n".join(f"  {cmd}\n      {what}" for cmd, what in lines)


app = typer.Typer(
    name="asr-audit",
    cls=_Group,
    help="Does a speech-recognition model listen, or recite the benchmark's answer key?",
    epilog=examples(
        ("asr-audit demo", "a complete audit on bundled data and models; open asr-audit-demo/report.html"),
        ("asr-audit refdis --preds preds/ --panel m1,m2,m3", "score your own prediction files"),
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# control characters other than newline and tab, in text that came from data (file names, transcripts)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class _DataConsole(Console):
    """A console that shows control characters in printed *data* as ``^[``-style text, so a file
    name or transcript cannot retitle, clear or move the terminal; rich's own styling and cursor
    control (its ``control`` segments, progress bars) pass unchanged."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control or not _CONTROL.search(seg.text) else seg._replace(text=_visible(seg.text))
            for seg in buffer
        )


def _visible(text: str) -> str:
    r"""``text`` with each control character shown in caret notation.

    >>> _visible("a\x1b]0;title\x07b")
    'a^[]0;title^Gb'
    """
    return _CONTROL.sub(lambda m: "^" + chr((ord(m.group()) + 64) % 128) if ord(m.group()) < 128 else "?", text)


# tables are wide: when output is piped (CI logs, files), do not squeeze them into 80 columns
console = _DataConsole(width=None if sys.stdout.isatty() else 200, markup=False)
err_console = _DataConsole(stderr=True, width=None if sys.stderr.isatty() else 400, markup=False)
# the packages whose versions decide the numbers an audit prints (`asr-audit --version`, results.json)
ENGINES = (
    ("whisper-normalizer", "normalizer tables"),
    ("kaldialign", "WER counts"),
    ("ctranslate2", "bundled Whisper inference"),
    ("torch", "PyTorch backends, organism, teacher forcing"),
    ("transformers", "hf: backends"),
    ("pocketsphinx", "sphinx backend and aligner"),
    ("numpy", "statistics"),
)


def version_text() -> str:
    """What ``asr-audit --version`` prints: the version, the default normalizer (name + version)
    and the installed version of each engine that decides numbers (read from package metadata:
    nothing heavy is imported)."""
    import platform
    from importlib import metadata

    import asr_audit
    from asr_audit.report.summary import norm_label
    from asr_audit.text.normalize import DEFAULT_NORMALIZER, get_normalizer

    def version(pkg: str) -> str:
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return "not installed"

    norm = get_normalizer(DEFAULT_NORMALIZER).describe()
    lines = [
        f"asr-audit {asr_audit.__version__} (Python {platform.python_version()})",
        f"  {'normalizer':<19}{norm_label(norm)}",
    ]
    lines += [f"  {pkg:<19}{version(pkg):<16}{why}" for pkg, why in ENGINES]
    return "\n".join(lines)


def _print_version(value: bool) -> None:
    if value:
        console.print(version_text(), highlight=False, soft_wrap=True)
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and the versions of the engines that decide the numbers (normalizer, CTranslate2, torch).",
    ),
) -> None:
    """Does a speech-recognition model listen, or recite the benchmark's answer key?"""


INTERRUPTED = "interrupted; rerun the same command to resume"
EXIT_USAGE, EXIT_INTERRUPTED = 2, 130

# one module per verb group; importing it registers its commands on `app`
VERB_MODULES = [
    "asr_audit.cli.predictions",
    "asr_audit.cli.normalize",
    "asr_audit.cli.inference",
    "asr_audit.cli.align",
    "asr_audit.cli.run",
    "asr_audit.cli.calib",
    "asr_audit.cli.audio_probes",
    "asr_audit.cli.organism",
    "asr_audit.cli.mech",
    "asr_audit.cli.demo",
    "asr_audit.cli.corpus",
    "asr_audit.cli.gate",
    "asr_audit.cli.export",
    "asr_audit.cli.longform",
    "asr_audit.cli.annotate",
]


# Verbs whose module is imported alone when one of them is invoked: a prediction-file run (whose
# warm re-run takes about a second) does not pay for importing every other verb's libraries. Any
# other invocation (help, --version, other verbs) imports all of VERB_MODULES.
# tests/cli/test_verb_homes.py checks that each module registers exactly the verbs named here.
VERB_HOMES = {"refdis": "asr_audit.cli.predictions", "coverage": "asr_audit.cli.predictions"}


def _register(verb: str | None = None) -> None:
    """Import the verb modules (each registers its verbs on :data:`app`): only ``verb``'s own
    when :data:`VERB_HOMES` names it, else every one of :data:`VERB_MODULES`."""
    home = VERB_HOMES.get(verb or "")
    for name in [home] if home else VERB_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real missing dependency inside the module
                raise


split_list = split_names  # a comma-separated CLI list (``None`` stays ``None``); empty items are an error


def _exception_types(name: str, *also: type[BaseException]) -> tuple[type[BaseException], ...]:
    """``name`` (e.g. ``"UsageError"``) from every click flavour importable here, after ``also``.

    typer < 0.25 raises ``click``'s exceptions; later typers raise their vendored
    ``typer._click`` copies, which do not subclass click's. Both are matched.
    """
    found: list[type[BaseException]] = list(also)
    for module in ("click.exceptions", "typer._click.exceptions"):
        if module == "click.exceptions" and "click" not in sys.modules and _vendored_click():
            continue  # no code imported click, so none of its exceptions exists (saves its import)
        try:
            cls = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if isinstance(cls, type) and cls not in found:
            found.append(cls)
    return tuple(found)


def _vendored_click() -> bool:
    """Whether the installed typer carries its own click (``typer._click``, typer >= 0.25)."""
    try:
        importlib.import_module("typer._click.exceptions")
    except ImportError:
        return False
    return True


def _usage_error(exc: BaseException) -> int:
    """Print a click/typer usage error as the verb's usage line plus one ``error:`` line; 2."""
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:  # bare `asr-audit` / group
        err_console.print(Text(ctx.get_help()), soft_wrap=True)
        return EXIT_USAGE
    message = (exc.format_message() if hasattr(exc, "format_message") else str(exc)).strip().rstrip(".")
    command = getattr(ctx, "command_path", None) or "asr-audit"
    if ctx is not None:
        err_console.print(Text(ctx.get_usage()), soft_wrap=True)
    err_console.print(
        Text.assemble(("error:", "bold red"), f" {command}: {message}; fix: see `{command} --help`"),
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_USAGE


def _command_path(argv: list[str]) -> str:
    """``asr-audit <verb> [<sub-verb>]`` named by ``argv`` (as far as it names registered verbs)."""
    words = ["asr-audit"]
    try:
        command = typer.main.get_command(app)
        for token in argv:
            sub = getattr(command, "commands", {}).get(token)
            if sub is None:
                break
            words.append(token)
            command = sub
    except Exception:  # noqa: BLE001 - only a hint; never mask the error being reported
        pass
    return " ".join(words)


def _with_fix(message: str, argv: list[str]) -> str:
    """``message``, with a pointer to the verb's help when it names no ``fix:`` of its own."""
    if "fix:" in message:
        return message
    return f"{message.rstrip().rstrip('.;')}; fix: see `{_command_path(argv)} --help`"


def _interrupted() -> int:
    err_console.print(Text(INTERRUPTED))
    return EXIT_INTERRUPTED


#: whether this process was started as the CLI (``main()`` called with ``argv=None``, as the
#: console script and ``python -m asr_audit`` do) rather than from code in a longer-lived process
_PROCESS_ENTRY = False


def process_entry() -> bool:
    """Whether ``main`` runs as the process's own entry point (not called in-process with ``argv``).

    Only then may a verb leave process-wide state behind, e.g. ``gc.freeze()`` before printing.
    """
    return _PROCESS_ENTRY


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: the exit code (0 ok, 2 error or usage error, 130 interrupted)."""
    import os

    global _PROCESS_ENTRY
    _PROCESS_ENTRY = argv is None

    # library chatter (weight-loading bars, generation warnings) would drown the tables
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in VERB_HOMES:
        # these verbs' only BLAS work is the bootstrap's small matrix products (exact integer
        # sums): one OpenBLAS thread does them in a third of the CPU time of its thread pool,
        # which spins on a busy machine (benchmarks/README.md); set before numpy is imported
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _register(args[0] if args else None)
    # the except clauses below name their types through calls: Python evaluates them only when an
    # exception reaches them, so click itself is imported only if a verb imported it (typer >= 0.25
    # raises its vendored copies; a click exception cannot exist without click imported)
    if not args:  # bare `asr-audit`: the help, and exit 2 as click >= 8.2 does, on every click version
        app(args=["--help"], prog_name="asr-audit", standalone_mode=False)
        return EXIT_USAGE
    try:
        code = app(args=args, prog_name="asr-audit", standalone_mode=False)
    except AuditError as exc:
        message = _with_fix(str(exc), args)
        err_console.print(Text.assemble(("error:", "bold red"), f" {message}"), highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        return _interrupted()
    except _exception_types("Exit", typer.Exit) as exc:  # raised outside typer's own handling
        code = getattr(exc, "exit_code", 0)  # (it returns their code otherwise)
    except _exception_types("Abort", typer.Abort) as exc:  # click-based typers: Ctrl-C, EOF at a prompt
        if isinstance(exc.__context__ or exc.__cause__, KeyboardInterrupt):
            return _interrupted()
        err_console.print(Text("aborted"))
        return EXIT_INTERRUPTED
    except _exception_types("UsageError") as exc:
        return _usage_error(exc)
    except _exception_types("ClickException") as exc:
        exc.show()  # type: ignore[attr-defined]
        return int(getattr(exc, "exit_code", 1) or 1)
    # non-standalone typer returns a verb's `raise typer.Exit(n)` as n, and Ctrl-C as 130
    code = code if isinstance(code, int) and not isinstance(code, bool) else 0
    if code == EXIT_INTERRUPTED:
        return _interrupted()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
