"""CLI help that teaches: every registered verb's ``--help`` ends with an ``Examples:`` block and
shows flag types as plain words (no typer-internal ``<bool>`` / ``<str>`` markers); ``--version``
names the engines that decide the numbers.

The walk covers every verb registered by the modules in ``asr_audit.cli.VERB_MODULES``, sub-verbs
(``calib build``) and groups (``calib``) included, so a verb added later is held to the same rule.
"""

from __future__ import annotations

import re

import pytest

# typer >= 0.26 renders a parameter's type as <bool>, <str>, <int>, <float>, <path>, <list[str]>, ...
TYPE_MARKER = re.compile(r"<(?:bool|str|int|float|path|file|dir|directory|text|list\[[^>]*\]|[a-z]+ range)>")


def _verbs() -> list[tuple[str, ...]]:
    import typer

    from asr_audit.cli import _register, app

    _register()
    paths: list[tuple[str, ...]] = [()]

    def walk(command, prefix: tuple[str, ...]) -> None:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if getattr(sub, "hidden", False):
                continue
            paths.append((*prefix, name))
            walk(sub, (*prefix, name))

    walk(typer.main.get_command(app), ())
    return paths


VERBS = _verbs()


def test_the_walk_sees_every_verb_module() -> None:
    """Each module of VERB_MODULES registered at least one verb the walk reaches."""
    names = {" ".join(p) for p in VERBS}
    for expected in ("refdis", "run", "demo", "calib build", "organism train", "battery"):
        assert expected in names, sorted(names)


@pytest.mark.parametrize("verb", VERBS, ids=lambda p: " ".join(p) or "asr-audit")
def test_help_ends_with_examples_and_has_no_type_markers(verb: tuple[str, ...], run_cli) -> None:
    code, out, err = run_cli(*verb, "--help")
    assert code == 0, err
    name = " ".join(("asr-audit", *verb))
    marker = TYPE_MARKER.search(out)
    assert marker is None, f"{name} --help shows {marker.group(0)!r}"
    assert "Examples:" in out, f"{name} --help has no Examples: block (use asr_audit.cli.examples as epilog=)"
    tail = out[out.index("Examples:") :]
    worked = [line.strip() for line in tail.splitlines() if line.strip().startswith("asr-audit ")]
    assert 1 <= len(worked) <= 3, f"{name} --help: Examples: needs one to three worked command lines, got {worked}"
    # the block is the end of the help: nothing but examples follows it
    assert "Options" not in tail and "Commands" not in tail and "Usage:" not in tail


def test_flags_show_no_type_and_values_show_a_word(run_cli) -> None:
    code, out, _ = run_cli("demo", "--help")
    assert code == 0
    line = next(line for line in out.splitlines() if "--no-audio" in line)
    assert "bool" not in line.lower() and "BOOLEAN" not in line
    assert re.search(r"--out\s+PATH", out) and re.search(r"--seed\s+INTEGER", out)


def test_version_names_the_engines(run_cli) -> None:
    import asr_audit

    code, out, err = run_cli("--version")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith(f"asr-audit {asr_audit.__version__}")
    for engine in ("normalizer", "whisper-normalizer", "ctranslate2", "torch", "kaldialign"):
        assert re.search(rf"^\s+{re.escape(engine)}\s+\S", out, re.M), (engine, out)
    # one name for the normalizer everywhere (issue 29): --version says what a run's header says
    from asr_audit.text.normalize import DEFAULT_NORMALIZER, get_normalizer

    label = get_normalizer(DEFAULT_NORMALIZER).describe()["label"]
    assert re.search(rf"^\s+normalizer\s+{re.escape(label)}$", out, re.M), out
    assert label.startswith("whisper (OpenAI Whisper EnglishTextNormalizer")


def test_type_words() -> None:
    from asr_audit.cli import _type_word

    assert [_type_word(m) for m in ("<bool>", "<str>", "<float>", "<int range>", None)] == [
        "",
        "TEXT",
        "FLOAT",
        "INT RANGE",
        "",
    ]


def _command(verb: tuple[str, ...]):
    import typer

    from asr_audit.cli import app

    command = typer.main.get_command(app)
    for name in verb:
        assert isinstance(command, typer.core.TyperGroup), verb
        command = command.commands[name]
    return command


@pytest.mark.parametrize("verb", VERBS, ids=lambda p: " ".join(p) or "asr-audit")
def test_help_at_80_columns_shows_every_flag_name_whole(
    verb: tuple[str, ...], run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns no flag name is cut (``--min-consensus-c…`` was, issue 29): each of the
    verb's flag names, negative ones included, stands whole on a line of its help."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    code, out, err = run_cli(*verb, "--help")
    assert code == 0, err
    assert max(map(len, out.splitlines())) <= 80
    words = set(re.findall(r"(?<![\w-])--?[\w][\w-]*", out))
    for param in _command(verb).params:
        for flag in [*param.opts, *param.secondary_opts]:
            if flag.startswith("-"):
                assert flag in words, f"asr-audit {' '.join(verb)} --help at 80 columns cuts {flag}"
