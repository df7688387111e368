"""Every docstring example in the package runs and holds."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import asr_audit

MODULES = sorted(
    ["asr_audit"]  # the package's own docstring (its API re-export)
    + [m.name for m in pkgutil.walk_packages(asr_audit.__path__, "asr_audit.") if not m.name.endswith("__main__")]
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {name}"
