"""Courtesy eligibility: from the spoken text or the panel, the same opener whatever the hash seed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import asr_audit
from asr_audit.probes.battery.courtesy import eligible_clips

SCRIPT = """
from types import SimpleNamespace
from asr_audit.probes.battery.courtesy import eligible_clips
openers = ["thank you very much", "thank you chair", "thank you commissioner", "thank you mister president",
           "thank you madam president", "thank you"]
clips = [SimpleNamespace(id=f"c{i}", reference="we agree on this") for i in range(30)]
# three panel members, each opening every clip with a different courtesy: a three-way tie
hyps = {f"p{k}": {c.id: openers[(i + k) % 6] + " we agree on this" for i, c in enumerate(clips)} for k in range(3)}
print([" ".join(e.opener) for e in eligible_clips(clips, {}, hyps)])
"""


def _run(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(Path(asr_audit.__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True).stdout


def test_opener_choice_does_not_depend_on_the_hash_seed() -> None:
    outputs = {_run(seed) for seed in ("0", "1", "2", "3", "4", "5")}
    assert len(outputs) == 1, outputs


def test_ties_go_to_the_longest_then_the_alphabetically_first_opener() -> None:
    from types import SimpleNamespace

    clips = [SimpleNamespace(id="x", reference="we agree")]
    hyps = {
        "a": {"x": "thank you chair we agree"},
        "b": {"x": "thank you commissioner we agree"},
        "c": {"x": "thank you very much we agree"},
        "d": {"x": "thank you very much we agree"},
    }
    (e,) = eligible_clips(clips, {}, hyps)
    assert e.opener == ("thank", "you", "very", "much")  # most written
    del hyps["d"]
    (e,) = eligible_clips(clips, {}, hyps)
    assert e.opener == ("thank", "you", "very", "much")  # tie: the longest
    (e,) = eligible_clips(clips, {}, {k: hyps[k] for k in ("a", "b")})
    assert e.opener == ("thank", "you", "chair")  # tie of equal length: alphabetical


def test_spoken_text_decides_over_the_panel() -> None:
    from types import SimpleNamespace

    clips = [SimpleNamespace(id="x", reference="we agree"), SimpleNamespace(id="y", reference="we agree")]
    hyps = {"a": {"x": "we agree", "y": "thank you we agree"}}
    out = eligible_clips(clips, {"x": "Thank you, Chair. We agree.", "y": "We agree."}, hyps)
    assert [(e.clip_id, e.opener) for e in out] == [("x", ("thank", "you", "chair"))]
