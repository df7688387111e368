"""A text the normalizer cannot handle is a one-line input error naming the file and row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.errors import InputFileError

BIG = "9" * 5000  # Python converts at most 4300 digits to an int; Whisper's number normalizer fails


def _write(folder: Path, rows_by_model: dict[str, list[tuple[str, str, str]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for model, rows in rows_by_model.items():
        with (folder / f"{model}.jsonl").open("w", encoding="utf-8") as fh:
            for cid, ref, hyp in rows:
                fh.write(json.dumps({"id": cid, "text": ref, "pred_text": hyp}) + "\n")
    return folder


def _set(big_hyp_in: str | None = "b", big_ref: bool = False) -> dict[str, list[tuple[str, str, str]]]:
    ref2 = f"the number {BIG}" if big_ref else "thank you all"
    return {
        m: [
            ("c1", "we agree on this", "we agree on this"),
            ("c2", ref2, f"the number {BIG}" if m == big_hyp_in else "thank you all"),
        ]
        for m in "abc"
    }


def test_huge_number_in_a_hypothesis_is_a_one_line_error(tmp_path: Path, run_cli) -> None:
    folder = _write(tmp_path / "preds", _set("b"))
    code, _, err = run_cli("refdis", "--preds", folder, "--panel", "a,b,c", "--no-loo", "--resamples", "10")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert f"{folder / 'b.jsonl'}:2:" in lines[0]
    assert "hypothesis (clip 'c2')" in lines[0] and "5000 digits" in lines[0]


def test_huge_number_in_a_reference_names_that_row(tmp_path: Path) -> None:
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis

    preds = load_predictions(_write(tmp_path / "preds", _set(None, big_ref=True)))
    with pytest.raises(InputFileError, match=r"a\.jsonl:2: .*reference \(clip 'c2'\).*5000 digits"):
        run_refdis(preds, ["a", "b", "c"], preset_params("paper", loo=False), n_resamples=10)


def test_long_but_convertible_numbers_still_work(tmp_path: Path, run_cli) -> None:
    sets = _set(None)
    sets["b"][1] = ("c2", "thank you all", "the number " + "7" * 3000)
    code, _, err = run_cli(
        "refdis", "--preds", _write(tmp_path / "p", sets), "--panel", "a,b,c", "--no-loo", "--resamples", "10"
    )
    assert code == 0, err
