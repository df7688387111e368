"""``asr-audit switch-rate`` end to end on the VoxPopuli example predictions (tests/fixtures/voxpopuli)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path


def test_voxpopuli_end_to_end(run_cli, vox_dir: Path, tmp_path: Path) -> None:
    outs = []
    for run in ("a", "b"):
        j, c = tmp_path / f"{run}.json", tmp_path / f"{run}.csv"
        code, out, err = run_cli("switch-rate", "--preds", vox_dir, "--min-per-arm", "1", "--json", j, "--csv", c)
        assert code == 0, err
        outs.append((j.read_bytes(), c.read_bytes(), out))
    assert outs[0][0] == outs[1][0] and outs[0][1] == outs[1][1]  # byte-identical on rerun
    assert "orthographic switch rate" in outs[0][2] and "chance 0.5" in outs[0][2]

    data = json.loads(outs[0][0])
    assert data["chance"] == 0.5 and data["params"]["min_per_arm"] == 1
    assert data["models"] == sorted(data["models"]) and len(data["models"]) == 5
    assert data["n_clips"] == 150
    # VoxPopuli writes only the closed / abbreviated arms: 7 "Mr", 2 "today", one each of the rest
    assert data["reference_items"]["mr"] == {"Mister": 0, "Mr": 7}
    assert data["reference_items"]["to_day"] == {"to day": 0, "today": 2}
    rows = {(r["model"], r["family"]): r for r in data["rows"] + data["pooled"]}
    # so the switch rate is undefined everywhere: no reference uses arm A
    assert all(r["switch"] is None for r in rows.values())
    mr = rows[("whisper-tiny.en", "mr")]
    assert [(a["label"], a["k"], a["n"]) for a in mr["arms"]] == [("Mister", 0, 0), ("Mr", 4, 4)]
    assert mr["n_neither"] == 3 and "arm 'Mister' has 0 eligible items" in mr["reason"]
    # wav2vec2 (trained on LibriSpeech) spells out MISTER and the archaic TO DAY / TO MORROW / TO NIGHT
    w2v = rows[("wav2vec2-base-960h", "mr")]
    assert [(a["k"], a["n"]) for a in w2v["arms"]] == [(0, 0), (0, 3)]
    spacing = rows[("wav2vec2-base-960h", "spacing")]
    assert [(a["role"], a["k"], a["n"]) for a in spacing["arms"]] == [("A", 0, 0), ("B", 1, 5)]
    w2v_items = [i for i in data["items"] if i["model"] == "wav2vec2-base-960h" and i["status"] == "other"]
    assert sorted(i["hyp_text"] for i in w2v_items) == [
        "MISTER",
        "MISTER",
        "MISTER",
        "TO DAY",
        "TO DAY",
        "TO MORROW",
        "TO NIGHT",
    ]

    table = list(csv.DictReader(io.StringIO(outs[0][1].decode())))
    assert {r["chance"] for r in table} == {"0.5"}
    assert len(table) == 5 * (19 + 3)  # every family plus the pooled groups with >= 2 families
    assert table[0]["model"] == "distil-small.en" and table[0]["family"] == "mr"


def test_family_selection(run_cli, vox_dir: Path, tmp_path: Path) -> None:
    j = tmp_path / "h.json"
    code, out, err = run_cli(
        "switch-rate", "--preds", vox_dir, "--families", "spacing,mr", "--models", "whisper-tiny.en", "--json", j
    )
    assert code == 0, err
    data = json.loads(j.read_text())
    assert data["params"]["families"][0] == "mr" and "to_day" in data["params"]["families"]
    assert "mrs" not in data["params"]["families"]
    assert data["models"] == ["whisper-tiny.en"]
    assert {r["family"] for r in data["pooled"]} == {"spacing"}


def test_bad_family_is_one_line_exit_2(run_cli, vox_dir: Path) -> None:
    code, out, err = run_cli("switch-rate", "--preds", vox_dir, "--families", "honorific,bogus")
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1
    assert "unknown convention family 'bogus'" in lines[0] and "honorific" in lines[0]
    assert "Traceback" not in err + out


def test_bad_model_and_min_per_arm_exit_2(run_cli, vox_dir: Path) -> None:
    code, _, err = run_cli("switch-rate", "--preds", vox_dir, "--models", "nope")
    assert code == 2 and "unknown model(s) 'nope'" in err
    code, _, err = run_cli("switch-rate", "--preds", vox_dir, "--min-per-arm", "0")
    assert code == 2 and "--min-per-arm 0" in err


def test_table_marks_above_and_below_chance(tmp_path: Path) -> None:
    from rich.console import Console

    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.ortho import switch_rate
    from asr_audit.report.switch_rate import switch_rate_table

    refs = {f"c{i:02d}": f"Thank you, {'Mister' if i % 2 else 'Mr'} President, item {i}." for i in range(16)}
    for name, hyp in (("copy", lambda t: t), ("habit", lambda t: t.replace("Mister", "Mr"))):
        lines = [json.dumps({"id": c, "text": t, "pred_text": hyp(t)}) for c, t in refs.items()]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    console = Console(record=True, width=200)
    console.print(switch_rate_table(switch_rate(load_predictions(tmp_path), ["honorific"]).to_dict()))
    text = console.export_text()
    copy_line = next(ln for ln in text.splitlines() if "copy" in ln and " mr " in ln)
    habit_line = next(ln for ln in text.splitlines() if "habit" in ln and " mr " in ln)
    assert "Mister: 8/8" in copy_line and "1.000" in copy_line and "above" in copy_line
    assert "Mister: 0/8" in habit_line and "0.000" in habit_line and "below" in habit_line
    assert "No reference items: mrs, dr, st" in " ".join(text.split())
