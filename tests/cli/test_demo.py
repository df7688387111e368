"""The demo's spec is an ordinary experiment spec: it must pass the spec's load-time checks
(leave-one-out quorum, probe options) with and without audio, before any inference runs."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("audio", [True, False])
def test_demo_spec_passes_load_time_checks(tmp_path: Path, audio: bool) -> None:
    from asr_audit.cli.demo import demo_spec
    from asr_audit.runner.spec import parse_spec

    calib = tmp_path / "generated-benchmark"
    spec = parse_spec(demo_spec(tmp_path / "out", audio=audio, calib_dir=calib if audio else None), "<demo spec>")
    names = [c.name for c in spec.corpora]
    assert names[-1] == "voxpopuli-examples"
    assert ("generated-parliament" in names) == audio
