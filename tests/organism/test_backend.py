"""The organism backends: registered without training, a clear error without weights."""

from __future__ import annotations

import os

import pytest

from asr_audit.cli import main
from asr_audit.errors import BackendError
from asr_audit.models.base import available_backends, load_backend


def test_registered_as_bundled_names():
    kinds = {k.name: k for k in available_backends()}
    for name in ("organism-benchmark", "organism-control"):
        assert kinds[name].bundled and "score" in kinds[name].capabilities


@pytest.mark.parametrize("name", ["organism-benchmark", "organism-control"])
def test_missing_weights_error_says_how_to_train(name):
    folder = os.environ["ASR_AUDIT_ORGANISM_DIR"]
    with pytest.raises(BackendError, match="train it first: asr-audit organism train") as exc:
        load_backend(name)
    assert folder in str(exc.value) and name in str(exc.value)
    assert not os.path.exists(folder)  # importing and failing to load never trains or writes


def test_cli_unknown_kind_is_one_line_error(capsys):
    assert main(["organism", "train", "--which", "benchmark,nope", "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "Traceback" not in err
