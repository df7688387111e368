"""WER with the Open ASR Leaderboard's ``merge_compounds=True`` is offered and named in outputs."""

from __future__ import annotations

import json
from pathlib import Path

import kaldialign
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.probes.predfiles.refdis import preset_params
from asr_audit.probes.predfiles.refdis_run import run_refdis
from asr_audit.text.align import AlignmentCache, corpus_wer, wer_counts

WORDS = st.sampled_from(["white", "paper", "whitepaper", "e", "mail", "email", "the", "cat", "thecat", "a"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(WORDS, max_size=6), st.lists(WORDS, max_size=6)), min_size=1, max_size=5))
def test_merged_counts_equal_the_leaderboard_call(pairs: list[tuple[list[str], list[str]]]) -> None:
    refs = [tuple(r) for r, _ in pairs if r]
    hyps = [tuple(h) for r, h in pairs if r]
    if not refs:
        return
    board = kaldialign.batch_error_rate(refs, hyps, merge_compounds=True)  # the leaderboard's call
    cache = AlignmentCache()
    assert sum(cache.errors(r, h, merge_compounds=True) for r, h in zip(refs, hyps)) == board["total"]
    assert sum(wer_counts(r, h, merge_compounds=True).errors for r, h in zip(refs, hyps)) == board["total"]
    assert corpus_wer(zip(refs, hyps), merge_compounds=True) == board["err_rate"]
    plain = kaldialign.batch_error_rate(refs, hyps)
    assert sum(cache.errors(r, h) for r, h in zip(refs, hyps)) == plain["total"]  # separate memo


def _write(folder: Path, model: str, rows: dict[str, tuple[str, str]]) -> None:
    with (folder / f"{model}.jsonl").open("w", encoding="utf-8") as fh:
        for cid, (ref, hyp) in rows.items():
            fh.write(json.dumps({"id": cid, "text": ref, "pred_text": hyp}) + "\n")


def _folder(tmp_path: Path) -> Path:
    ref = "we read the white paper on email today"
    for model, hyp in {"a": "we read the whitepaper on e mail today", "b": ref, "c": ref}.items():
        _write(tmp_path, model, {"c1": (ref, hyp), "c2": ("thank you all", "thank you all")})
    return tmp_path


def test_run_refdis_counts_and_names_merge_compounds(tmp_path: Path) -> None:
    from asr_audit.corpus.predfiles import load_predictions

    preds = load_predictions(_folder(tmp_path))
    params = preset_params("anchor", loo=False)  # three members: too few for leave-one-out
    plain = run_refdis(preds, ["a", "b", "c"], params, n_resamples=10)
    merged = run_refdis(preds, ["a", "b", "c"], params, n_resamples=10, merge_compounds=True)
    plain_wer = plain.score("a").inflation.wer
    assert plain_wer is not None and plain_wer > 0  # "white paper" vs "whitepaper", "email" vs "e mail"
    assert merged.score("a").inflation.wer == 0
    scoring = plain.to_dict()["wer_scoring"]
    assert isinstance(scoring, dict) and scoring["merge_compounds"] is False
    assert merged.to_dict()["wer_scoring"] == {
        "merge_compounds": True,
        "label": "kaldialign edit distance, merge_compounds=True (the Open ASR Leaderboard's WER)",
    }


def test_cli_flag_names_it_in_table_and_json(tmp_path: Path, run_cli) -> None:
    (tmp_path / "preds").mkdir()
    folder = _folder(tmp_path / "preds")
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli(
        "refdis",
        "--preds",
        folder,
        "--panel",
        "a,b,c",
        "--no-loo",
        "--resamples",
        "10",
        "--merge-compounds",
        "--json",
        out,
    )
    assert code == 0
    assert "merge_compounds=True" in " ".join(stdout.split())
    data = json.loads(out.read_text())
    assert data["wer_scoring"]["merge_compounds"] is True
    assert data["models"][0]["wer"] == 0.0


def test_spec_probe_parameter(tmp_path: Path) -> None:
    import pytest
    from probe_calls import spec_probe

    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.errors import ConfigError
    from asr_audit.probes.core.probe import ProbeInputs

    ctx = ProbeInputs(
        corpus="c", predictions=load_predictions(_folder(tmp_path)), panel=("a", "b", "c"), seed=0, normalizer="whisper"
    )
    out = spec_probe("refdis", ctx, {"merge_compounds": True, "resamples": 10, "loo": False})
    assert out is not None
    assert out["wer_scoring"]["merge_compounds"] is True and out["models"][0]["wer"] == 0.0
    with pytest.raises(
        ConfigError,
        match=r'\[probes\.refdis\] merge_compounds = "yes" is a str, expected true or '
        r"false; fix: write merge_compounds as true or false",
    ):
        spec_probe("refdis", ctx, {"merge_compounds": "yes"})


def test_cli_and_spec_build_the_same_options() -> None:
    """``--merge-compounds`` and ``probes.refdis.merge_compounds`` go through one ``from_mapping``."""
    from asr_audit.options import Surface
    from asr_audit.probes.predfiles.refdis_options import RefdisOptions

    cli = RefdisOptions.from_mapping({"merge_compounds": True, "language": "en-GB"}, Surface.cli())
    toml = RefdisOptions.from_mapping(
        {"merge_compounds": True, "language": "en-GB"}, Surface.toml("a.toml", "probes.refdis")
    )
    assert cli == toml and cli.merge_compounds and cli.language == "en"
    assert RefdisOptions.from_mapping({}, Surface.cli()).merge_compounds is False
