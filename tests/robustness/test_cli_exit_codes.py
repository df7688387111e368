"""The CLI's exit-code contract through the real entry point: usage errors exit 2, Ctrl-C 130.

typer >= 0.25 raises its vendored ``typer._click`` exceptions, which do not subclass ``click``'s;
the entry point must turn both flavours into a usage message and exit code 2.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
USAGE_CASES = [
    pytest.param(["refdis"], "Missing option '--preds'", id="missing-required-option"),
    pytest.param(["no-such-verb"], "No such command 'no-such-verb'", id="unknown-verb"),
    pytest.param(
        ["transcribe", "--model", "m", "--corpus", "c", "--batch-size", "x"], "--batch-size", id="non-integer"
    ),
    pytest.param(["align", "--corpus", "c", "--limit", "0"], "--limit", id="min-1-violation"),
    pytest.param(["coverage", "--preds", "p", "--bogus-flag"], "--bogus-flag", id="unknown-option"),
]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _check_usage(code: int, err: str, needle: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    assert "Usage: asr-audit" in err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and needle in lines[0] and "fix:" in lines[0], err


@pytest.mark.parametrize(("argv", "needle"), USAGE_CASES)
def test_usage_error_in_process(run_cli, argv: list[str], needle: str) -> None:
    code, _, err = run_cli(*argv)
    _check_usage(code, err, needle)


@pytest.mark.parametrize(("argv", "needle"), USAGE_CASES[:3])
def test_usage_error_real_entry_point(argv: list[str], needle: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "asr_audit", *argv], capture_output=True, text=True, env=_env(), timeout=120, check=False
    )
    _check_usage(proc.returncode, proc.stderr, needle)


def test_both_click_flavours_are_caught() -> None:
    """Whichever click the installed typer raises, main() knows its UsageError."""
    import typer

    from asr_audit.cli import _exception_types

    usage = _exception_types("UsageError")
    assert usage, "no click flavour importable"
    raised = typer.BadParameter("x")  # typer's own export: vendored in new typers, click's in old ones
    assert isinstance(raised, usage)


def test_no_arguments_prints_help_and_exits_2(run_cli) -> None:
    code, out, err = run_cli()
    assert code == 2 and "refdis" in out + err and "Traceback" not in out + err


def test_help_exits_0(run_cli) -> None:
    code, out, _ = run_cli("coverage", "--help")
    assert code == 0 and "--preds" in out


def test_keyboard_interrupt_in_process_exits_130(run_cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def boom(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr("asr_audit.corpus.predfiles.load_predictions", boom)
    (tmp_path / "m.jsonl").write_text('{"id": "a", "reference": "x", "hypothesis": "x"}\n')
    code, _, err = run_cli("coverage", "--preds", tmp_path)
    assert code == 130, err
    assert "interrupted; rerun" in err and "Traceback" not in err


# The child sets its own SIGINT disposition: a Python started with SIGINT ignored (a suite under
# nohup, some CI runners) keeps it ignored and would never see the Ctrl-C this test sends.
_SLEEPY = """
import signal, sys, time
import asr_audit.cli as cli
signal.signal(signal.SIGINT, signal.default_int_handler)

@cli.app.command("sleepy")
def sleepy() -> None:
    print("ready", flush=True)
    time.sleep(60)

sys.exit(cli.main(["sleepy"]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_exits_130_with_message() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLEEPY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted; rerun" in err and "Traceback" not in err


def test_verb_exit_code_is_propagated(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from asr_audit import cli

    @cli.app.command("exit-three", hidden=True)
    def exit_three() -> None:
        raise typer.Exit(3)

    try:
        code, _, _ = run_cli("exit-three")
    finally:
        cli.app.registered_commands[:] = [c for c in cli.app.registered_commands if c.name != "exit-three"]
    assert code == 3
