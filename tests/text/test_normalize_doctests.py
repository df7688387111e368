"""The examples in the normalizer modules' docstrings hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "asr_audit.text.normalize",
    "asr_audit.text.whisper_en",
    "asr_audit.text.oal",
    "asr_audit.text.replacers",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
