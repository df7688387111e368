"""The ``wer`` probe (no verb of its own) through the spec and through the probe object: the same numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from parity import as_json, spec_result

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.data import VOXPOPULI_EXAMPLES
from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.probes.predfiles.wer import WER


def test_the_spec_and_the_probe_agree(tmp_path: Path) -> None:
    spec = spec_result(tmp_path, VOXPOPULI_EXAMPLES, (), "wer", {"language": "en"})
    inputs = ProbeInputs(corpus="c", predictions=load_predictions(VOXPOPULI_EXAMPLES))
    assert spec == as_json(WER(inputs, {"language": "en"}, Surface.python("wer")))
    assert [m["model"] for m in spec["models"]] == load_predictions(VOXPOPULI_EXAMPLES).models


def test_a_blank_language_is_named_as_written() -> None:
    inputs = ProbeInputs(corpus="c", predictions=load_predictions(VOXPOPULI_EXAMPLES))
    with pytest.raises(ConfigError, match=r'^a.toml: \[probes.wer\] language = " " must be a language code'):
        WER(inputs, {"language": " "}, Surface.toml("a.toml", "probes.wer"))
