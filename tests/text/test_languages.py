"""Language-aware scoring: CER for CJK, the es / fr / de normalizers, the normalizer per language."""

from __future__ import annotations

import pytest

from asr_audit.errors import ConfigError
from asr_audit.text.align import corpus_wer
from asr_audit.text.languages import language_pack, scoring_normalizer
from asr_audit.text.normalize import get_normalizer


def test_cer_for_korean_counts_characters_not_words() -> None:
    chars = get_normalizer("basic-chars")
    ref, hyp = "서울은 맑습니다", "서울는 맑습니다"  # one particle differs
    assert corpus_wer([(get_normalizer("basic")(ref).split(), get_normalizer("basic")(hyp).split())]) == 0.5
    assert corpus_wer([(chars(ref).split(), chars(hyp).split())]) == pytest.approx(1 / 7)


def test_cer_keeps_combining_marks_with_their_base() -> None:
    assert get_normalizer("basic-chars")("किताबें") == "कि ता बें"


@pytest.mark.parametrize(
    ("language", "written", "spoken"),
    [
        ("es", "El Sr. García votó: 25 %, etc.", "el señor garcía votó veinticinco por ciento etcétera"),
        ("es", "Son €30 para la Sra. Ruiz", "son treinta euros para la señora ruiz"),
        ("fr", "M. Martin et Mlle Roux : 12 %", "monsieur martin et mademoiselle roux douze pour cent"),
        ("fr", "Il coûte 1 €", "il coûte 1 euro"),
        ("de", "Hr. Schulz sagte, d.h. 40 % usw.", "herr schulz sagte das heißt vierzig prozent und so weiter"),
        ("de", "z. B. 7 € bzw. mehr", "zum beispiel sieben euro beziehungsweise mehr"),
    ],
)
def test_written_and_spoken_forms_normalize_alike(language: str, written: str, spoken: str) -> None:
    normalize = get_normalizer(f"basic-{language}")
    assert normalize(written) == normalize(spoken)


def test_a_lone_abbreviation_letter_is_no_title() -> None:
    # French "M." only before a name; German "etc" inside a word is a word
    assert get_normalizer("basic-fr")("la lettre M.") == "la lettre m"
    assert get_normalizer("basic-es")("el sr.") == "el sr"


def test_scoring_normalizer_rule() -> None:
    assert scoring_normalizer("oal", "en-US") == "oal"
    assert scoring_normalizer("whisper", "de") == "basic-de" and scoring_normalizer("basic", "de") == "basic"
    assert scoring_normalizer("oal", "pt-BR") == "basic"  # no pack: the language-agnostic one
    assert scoring_normalizer("basic-de", "de-AT") == "basic-de"
    assert {scoring_normalizer("whisper", lang) for lang in ("zh", "ja", "ko", "yue", "th")} == {"basic-chars"}


def test_unknown_pack_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no language normalizer for 'pl'"):
        language_pack("pl")


def test_transcribe_scores_japanese_and_korean_by_character(tmp_path, run_cli) -> None:
    """``transcribe --language ja``: the WER column becomes CER over basic-chars tokens."""
    import json

    refs = {"a": "東京は晴れです", "b": "서울은 맑습니다"}
    hyps = {"a": "東京は晴れでした", "b": "서울는 맑습니다"}  # 2 of 7 characters wrong, then 1 of 7
    (tmp_path / "m.jsonl").write_text(
        "".join(json.dumps({"audio_filepath": f"{c}.wav", "id": c, "text": t}) + "\n" for c, t in refs.items())
    )
    (tmp_path / "h.jsonl").write_text(
        "".join(json.dumps({"id": c, "text": refs[c], "pred_text": t}) + "\n" for c, t in hyps.items())
    )
    args = ["transcribe", "-m", f"preds:{tmp_path / 'h.jsonl'}", "-c", tmp_path / "m.jsonl", "-o", tmp_path / "o"]
    code, out, err = run_cli(*args, "--store", tmp_path / "s.sqlite", "--language", "ja")
    assert code == 0, err
    assert "CER after the basic-chars" in out and "21.43%" in out  # 3 / 14 characters
    code, out, err = run_cli(*args, "--store", tmp_path / "s.sqlite", "--language", "en")
    assert code == 0, err
    assert "WER after the whisper" in out and "CER" not in out


def test_refdis_options_pick_cer_for_korean_on_both_surfaces() -> None:
    from asr_audit.options import Surface
    from asr_audit.probes.predfiles.refdis_options import RefdisOptions

    for surface in (Surface.cli(), Surface.toml("a.toml", "probes.refdis")):
        paper = RefdisOptions.from_mapping({"preset": "paper", "language": "ko-KR"}, surface)
        anchor = RefdisOptions.from_mapping({"language": "ko"}, surface)
        assert paper.normalizer_for("whisper") == "basic-chars" and not paper.text2num
        assert anchor.normalizer_for("whisper") == "whisper-basic"  # the paper's code spaces Hangul itself
    assert (
        RefdisOptions.from_mapping({"preset": "paper", "language": "de"}, Surface.cli()).normalizer_for("basic-de")
        == "basic-de"
    )
