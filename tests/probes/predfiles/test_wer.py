"""The plain WER probe: per-model corpus WER under the corpus language's normalizer, and its report
section, which says refdis is undefined when the corpus's panel holds fewer than two models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.wer import wer_by_model


def _preds(folder: Path, models: dict[str, list[str | None]], refs: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for model, hyps in models.items():
        rows = [
            {"audio_filepath": f"c{k}", "text": ref, **({} if hyp is None else {"pred_text": hyp})}
            for k, (ref, hyp) in enumerate(zip(refs, hyps))
        ]
        (folder / f"{model}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return folder


REFS = ["El Sr. García votó con 12 % de apoyo.", "Gracias, señor Presidente."]


def test_wer_by_model_uses_the_language_normalizer_and_counts_missing_clips_as_deletions(tmp_path: Path) -> None:
    folder = _preds(
        tmp_path / "p",
        {
            "a": ["el señor García votó con doce por ciento de apoyo", "Gracias señor presidente"],
            "b": ["el señor García votó con doce por ciento de apoyo", None],
        },
        REFS,
    )
    rows = {r["model"]: r for r in wer_by_model(load_predictions(folder), "basic-es")}
    assert rows["a"]["wer"] == 0.0  # Sr. = señor, 12 % = doce por ciento under basic-es
    assert rows["b"]["n_missing"] == 1 and rows["b"]["wer"] == pytest.approx(3 / 13)  # 3 of 13 words deleted
    english = {r["model"]: r for r in wer_by_model(load_predictions(folder), "whisper")}
    assert english["a"]["wer"] > 0  # the English normalizer reads neither the title nor the number


@pytest.mark.parametrize("panel", [["a"], ["a", "b"]])
def test_wer_probe_and_section_say_refdis_is_undefined_below_two_panel_models(tmp_path: Path, panel: list[str]) -> None:
    from asr_audit.runner.run import run_experiment
    from asr_audit.runner.spec import parse_spec

    folder = _preds(tmp_path / "p", {"a": ["el señor García", "gracias"], "b": ["el señor García", "gracias"]}, REFS)
    spec = parse_spec(
        {
            "title": "t",
            "output": str(tmp_path / "out"),
            "store": str(tmp_path / "s.sqlite"),
            "corpus": [{"name": "es", "predictions": str(folder), "panel": panel}],
            "probes": {"wer": {"language": "es"}},
        },
        "<test>",
    )
    outcome = run_experiment(spec, log=lambda _m: None)
    (entry,) = [e for e in outcome.results["probes"] if e["probe"] == "wer"]
    assert entry["result"]["normalizer"] == "basic-es" and entry["result"]["panel"] == panel
    html = (tmp_path / "out" / "report.html").read_text()
    assert "WER — es" in html
    assert ("are <strong>undefined</strong> for this corpus" in html) == (len(panel) < 2)
    assert (tmp_path / "out" / "tables" / "wer-es.csv").read_text().splitlines()[0] == "model,n_clips,n_missing,wer"
