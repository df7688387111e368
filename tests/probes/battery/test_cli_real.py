"""End to end on a bundled model: the ``battery`` verb over a small TTS corpus with planted opening
courtesies, every cell produced, and the report section renders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _corpus(tmp: Path, n: int) -> tuple[Path, Path]:
    import soundfile as sf

    from asr_audit.probes.battery.courtesy import DEMO_SENTENCES, courtesy_clips

    clips, spoken = courtesy_clips(DEMO_SENTENCES[:n], "flite-kal16")
    man, sp = tmp / "manifest.jsonl", tmp / "spoken.jsonl"
    with open(man, "w") as m, open(sp, "w") as s:
        for c in clips:
            sf.write(tmp / f"{c.id}.wav", c.source.samples, 16000)
            m.write(json.dumps({"id": c.id, "audio_filepath": f"{c.id}.wav", "text": c.reference}) + "\n")
            s.write(json.dumps({"id": c.id, "spoken": spoken[c.id]}) + "\n")
    return man, sp


def test_bad_condition_is_one_line(run_cli, tmp_path) -> None:
    code, _, err = run_cli(
        "battery", "--model", "whisper-tiny.en", "--corpus", str(tmp_path / "x.jsonl"), "--conditions", "noise:loud"
    )
    assert code == 2 and "grammar:" in err and "Traceback" not in err


@pytest.mark.slow
def test_battery_cli_on_bundled_model(run_cli, tmp_path) -> None:
    from asr_audit.audio.voices import available_voices

    if "flite-kal16" not in available_voices():
        pytest.skip("flite not installed")
    man, sp = _corpus(tmp_path, 2)
    out = tmp_path / "battery.json"
    code, stdout, err = run_cli(
        "battery",
        "--model",
        "whisper-tiny.en",
        "--corpus",
        str(man),
        "--probe",
        "courtesy",
        "--conditions",
        "noise:10db,truncate:1w0.25s,donor:conv8s",
        "--spoken",
        str(sp),
        "--store",
        str(tmp_path / "s.sqlite"),
        "--resamples",
        "100",
        "--json",
        str(out),
    )
    assert code == 0, err
    res = json.loads(out.read_text())
    assert len(res["cells"]) == 4
    assert all(c["n"] == 2 and c["accept_ref"] is not None for c in res["cells"])
    assert {r["condition"] for r in res["study"]} == {"full", "truncated", "attn-isolated", "translate"}

    from asr_audit.report.section import ReportContext
    from asr_audit.report.sections_battery import battery_section

    section = battery_section(
        ReportContext(tmp_path / "rep", {}), {"probe": "courtesy", "corpus": "tts", "result": res}
    )
    assert "donor:conv8s" in section.html and section.figures and "courtesy-tts-cells.csv" in section.tables
