"""An audit decodes each (model, audio) once: the rerun of a small spec (flite clips, the bundled
Whisper tiny.en, a battery with derived audio) decodes nothing, builds no derived clip and writes
byte-identical results; the counts are printed and kept in run.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# (what the voice says, what the record writes: one word differs, an item for the refdis measure)
SENTENCES = (
    ("We paid forty euros for the tickets.", "We paid fifty euros for the tickets."),
    ("The meeting starts at nine.", "The meeting starts at ten."),
    ("Close the window, please.", "Close the door, please."),
)
SPEC = """
title = "decode once"
seed = 3
output = "out"
store = "store.sqlite"
[[corpus]]
name = "flite"
spec = "{manifest}"
[corpus.probes.battery]
spoken = "{manifest}"
[[model]]
name = "tiny"
spec = "whisper-tiny.en"
[panel]
models = ["tiny"]
[probes.battery]
measure = "refdis"
conditions = ["noise:10db", "voice:flite-rms"]
resamples = 50
study = false
"""


def _corpus(root: Path) -> Path:
    import soundfile as sf

    from asr_audit.audio.voices import synthesize

    rows = []
    for i, (spoken, record) in enumerate(SENTENCES):
        samples, sr = synthesize("flite-slt", spoken)
        sf.write(root / f"s{i}.wav", samples, sr)
        rows.append({"audio_filepath": f"s{i}.wav", "id": f"s{i}", "text": record, "spoken": spoken})
    manifest = root / "flite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def test_a_rerun_decodes_nothing_and_builds_no_derived_clip(tmp_path: Path, run_cli) -> None:
    if not shutil.which("flite"):
        pytest.skip("flite is not installed")
    spec = tmp_path / "audit.toml"
    spec.write_text(SPEC.format(manifest=_corpus(tmp_path)))
    code, out, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    first = json.loads((tmp_path / "out" / "run.json").read_text())["decodes"]
    # the originals, then each condition's derived clip of each sentence: built and decoded once
    assert first["by_kind"]["transcript"]["computed"] == 3 * len(SENTENCES)
    assert first["derived_built"] == 2 * len(SENTENCES) and first["reused"] == 0
    assert f"decodes: {first['computed']} computed" in out
    results = (tmp_path / "out" / "results.json").read_bytes()
    assert b"derived_built" not in results  # run-dependent numbers stay out of results.json

    code, out, err = run_cli("run", spec, "--no-progress")
    assert code == 0, err
    again = json.loads((tmp_path / "out" / "run.json").read_text())["decodes"]
    assert (again["computed"], again["derived_built"]) == (0, 0)
    assert again["derived_known"] == 2 * len(SENTENCES) and again["reused"] == first["computed"]
    assert "decodes: 0 computed" in out and "derived clips: 0 built" in out
    assert (tmp_path / "out" / "results.json").read_bytes() == results
