"""The CLI robustness matrix: every input of :mod:`cases` keeps the exit-code contract.

0 = ok, 2 = error (exactly one ``error:`` line naming the input, with a ``fix:``), 130 =
interrupted; never a traceback. Cases run in-process through :func:`asr_audit.cli.main`, so an
uncaught exception fails the case with its traceback.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import CASES, ERROR, Case
from cases_verbs import DEADLINE, VERB_CASES
from hostile_http import skip_retry_waits

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in [*CASES, *VERB_CASES]]
    assert len(ids) == len(set(ids))


def _marks(c: Case, deadline: float | None) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.xfail(reason=c.xfail, strict=True)] if c.xfail else []
    return [*marks, pytest.mark.timeout(deadline)] if deadline else marks  # a hang fails the case, not the suite


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.id, marks=_marks(c, None)) for c in CASES]
    + [pytest.param(c, id=c.id, marks=_marks(c, DEADLINE)) for c in VERB_CASES],
)
def test_cli_contract(case: Case, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_AUDIT_STORE", str(tmp_path / "default-store.sqlite"))
    monkeypatch.chdir(tmp_path)
    skip_retry_waits(monkeypatch)  # the fresh-* cases' failing downloads: 3 s of back-off each
    work = tmp_path / "case"
    work.mkdir()
    argv = case.build(work)
    code, out, err = run_cli(*argv)
    out, err = ANSI.sub("", out), ANSI.sub("", err)
    assert "Traceback" not in out + err
    assert code == case.code, f"exit {code}, expected {case.code}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    if case.code == ERROR:
        assert len(errors) == 1, err
        assert case.needle.format(tmp=work).lower() in errors[0].lower(), errors[0]  # click versions differ in case
        assert "fix:" in errors[0], errors[0]
    else:
        assert not errors, err
        if case.needle:  # a successful run that must show something (coverage, a warning)
            assert case.needle.format(tmp=work) in out + err, out[-3000:] + err[-2000:]
