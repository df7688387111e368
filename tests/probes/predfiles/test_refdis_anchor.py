"""The refdis probe under ``--preset anchor`` feeds the miner the public code's tokens (parentheses,
CJK; ``tests/text/test_anchor_normalizer.py`` checks the text steps), and picks the paper's
normalizer per ``--language``."""

from __future__ import annotations

import json
from pathlib import Path

from asr_audit.probes.predfiles.refdis import preset_params
from asr_audit.probes.predfiles.refdis_run import run_refdis


def test_cli_anchor_uses_the_papers_normalizer_per_language(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    for model in "abc":
        _write(folder, model, [("c1", "Vingt et un élèves sont là", "vingt et un élèves sont là")])
    seen = {}
    for language, preset in [("fr", "anchor"), ("fr", "paper"), ("en-GB", "anchor"), ("en_us", "paper")]:
        out = tmp_path / f"{language}-{preset}.json"
        code, _, err = run_cli(
            "refdis",
            "--preds",
            folder,
            "--panel",
            "a,b,c",
            "--no-loo",
            "--resamples",
            "5",
            "--language",
            language,
            "--preset",
            preset,
            "--json",
            out,
        )
        assert code == 0, err
        norm = json.loads(out.read_text())["normalizer"]
        seen[language, preset] = (norm["name"], norm["text2num"], norm.get("language"))
    assert seen == {
        ("fr", "anchor"): ("whisper-basic", True, "fr"),
        ("fr", "paper"): ("basic-fr", False, "fr"),  # numbers read by basic-fr itself (issue 16)
        ("en-GB", "anchor"): ("whisper", True, None),
        ("en_us", "paper"): ("whisper", True, None),
    }


def _write(folder: Path, model: str, rows: list[tuple[str, str, str]]) -> None:
    with (folder / f"{model}.jsonl").open("w", encoding="utf-8") as fh:
        for cid, ref, hyp in rows:
            fh.write(json.dumps({"id": cid, "text": ref, "pred_text": hyp}, ensure_ascii=False) + "\n")


def test_refdis_anchor_preset_uses_the_public_code_tokens(tmp_path: Path) -> None:
    """Under anchor, a fullwidth aside is no reference error and a CJK word is characters.

    c2: the reference's "東京タワー" is 5 character tokens, so the panel's missing "タワー" is
    an interior run (not mined at the boundary); as one token it is a start substitution.
    """
    from asr_audit.corpus.predfiles import load_predictions

    refs = {"c1": "（拍手） Thank you very much indeed", "c2": "東京タワー is very tall today"}
    hyps = {"c1": "Thank you very much indeed", "c2": "東京 is very tall today"}
    for model in ("a", "b", "c", "d"):
        _write(tmp_path, model, [(cid, refs[cid], hyps[cid]) for cid in refs])
    preds = load_predictions(tmp_path)
    anchor = run_refdis(preds, ["a", "b", "c"], preset_params("anchor", loo=False), n_resamples=10)
    assert anchor.edits == ()
    assert anchor.normalizer["anchor_steps"]
    # the same algorithm without the public code's text steps mines both as edits
    plain = run_refdis(
        preds, ["a", "b", "c"], preset_params("paper", loo=False, majority=0.8, include_middle=False), n_resamples=10
    )
    assert sorted(e.clip_id for e in plain.edits) == ["c1", "c2"]


def test_spec_language_goes_through_the_same_options(tmp_path: Path) -> None:
    """``probes.refdis.language`` picks the normalizer and text2num as ``--language`` does."""
    from probe_calls import spec_probe

    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.core.probe import ProbeInputs

    for model in "abc":
        _write(tmp_path, model, [("c1", "Vingt et un élèves sont là", "vingt et un élèves sont là")])
    ctx = ProbeInputs(
        corpus="c", predictions=load_predictions(tmp_path), panel=("a", "b", "c"), seed=0, normalizer="whisper"
    )
    seen = {}
    for language, preset in [("fr", "anchor"), ("fr", "paper"), ("en-GB", "anchor")]:
        norm = spec_probe("refdis", ctx, {"language": language, "preset": preset, "resamples": 5, "loo": False})[
            "normalizer"
        ]
        seen[language, preset] = (norm["name"], norm["text2num"], norm.get("language"))
    assert seen == {
        ("fr", "anchor"): ("whisper-basic", True, "fr"),
        ("fr", "paper"): ("basic-fr", False, "fr"),  # numbers read by basic-fr itself (issue 16)
        ("en-GB", "anchor"): ("whisper", True, None),
    }
