"""The organism backends: registered without training, a clear error without weights."""

from __future__ import annotations

import os

import pytest

from asr_audit.cli import main
from asr_audit.errors import BackendError
from asr_audit.models.base import available_backends, load_backend

NAMES = ["organism-benchmark", "organism-control", "organism-memorizer", "organism-memorizer-control", "organism-donor"]


def test_registered_as_bundled_names():
    kinds = {k.name: k for k in available_backends()}
    for name in NAMES:
        assert kinds[name].bundled and "score" in kinds[name].capabilities


@pytest.mark.parametrize("name", NAMES)
def test_missing_weights_error_says_how_to_train(name):
    folder = os.environ["ASR_AUDIT_ORGANISM_DIR"]
    with pytest.raises(BackendError, match="train it first: asr-audit organism train") as exc:
        load_backend(name)
    assert folder in str(exc.value) and name in str(exc.value)
    if "memorizer" in name or "donor" in name:
        assert f"--kind {name.split('-')[1]}" in str(exc.value)
    assert not os.path.exists(folder)  # importing and failing to load never trains or writes


def test_each_kind_has_its_own_weights_file():
    from asr_audit.organism.backend import ORGANISMS, weights_path

    files = {weights_path(kind).name for kind in ORGANISMS.values()}
    assert len(files) == len(NAMES)
    assert weights_path("memorizer-control").name == "memorizer-control.safetensors"


def test_cli_unknown_kind_is_one_line_error(capsys):
    assert main(["organism", "train", "--which", "benchmark,nope", "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "Traceback" not in err
    assert main(["organism", "train", "--kind", "policy2", "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "--kind 'policy2'" in err and "memorizer" in err and "Traceback" not in err
    assert main(["organism", "train", "--kind", "memorizer", "--which", "memorizer,benchmark", "--steps", "1"]) == 2
    assert "benchmark" in capsys.readouterr().err
