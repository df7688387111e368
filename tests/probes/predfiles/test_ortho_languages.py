"""Convention families beyond English (es, fr, de; percent for it, nl, pl, pt) and ``--language``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.errors import ConfigError
from asr_audit.options import OptionError, Surface
from asr_audit.probes.predfiles.conventions import available_families, families_for, get_family, resolve_families
from asr_audit.probes.predfiles.ortho import SwitchRateOptions, find_occurrences

# (text, family, [(matched text, role), ...]) on the reference side (context rules on)
CASES = [
    ("Gracias, Sr. Presidente.", "senor", [("Sr", "B")]),
    ("Gracias, señor Presidente.", "senor", [("señor", "A")]),
    ("El señor dijo que no.", "senor", []),  # no name follows
    ("La Sra. Pérez y la señora Ruiz.", "senora", [("Sra", "B"), ("señora", "A")]),
    ("Subió un 20 % y luego veinte por ciento.", "percent_es", [("%", "B"), ("por ciento", "A")]),
    ("Son 30 € o treinta euros, 5 millones de euros.", "euro_es", [("€", "B"), ("euros", "A"), ("euros", "A")]),
    ("La zona euro y los euros.", "euro_es", []),  # no amount next to the word
    ("Cuesta €40.", "euro_es", [("€", "B")]),  # digits after the sign
    ("M. Dupont et monsieur Martin.", "monsieur", [("M.", "B"), ("monsieur", "A")]),
    ("Le monsieur est parti.", "monsieur", []),
    ("Vingt millions d'euros et 3 €.", "euro_fr", [("euros", "A"), ("€", "B")]),
    ("Dr. Müller und Doktor Weber.", "dr_de", [("Dr", "B"), ("Doktor", "A")]),
    ("Das heißt, d. h. und d.h. usw.", "dh", [("Das heißt", "A"), ("d. h", "B"), ("d.h", "B")]),
    ("Dreiundzwanzig Prozent oder 23 %.", "percent_de", [("Prozent", "A"), ("%", "B")]),
    ("Das Prozent ist hoch.", "percent_de", []),
    ("Il 5 % o cinque per cento.", "percent_it", [("%", "B"), ("per cento", "A")]),
]


@pytest.mark.parametrize(("text", "family", "expected"), CASES)
def test_reference_occurrences(text: str, family: str, expected: list[tuple[str, str]]) -> None:
    fam = get_family(family, _lang(family))
    assert [(o.text, fam.arms[o.arm].role) for o in find_occurrences(text, fam)] == expected


def _lang(family: str) -> str:
    from asr_audit.probes.predfiles.conventions import available_languages

    return next(lang for lang in available_languages() if family in available_families(lang))


def test_languages_keep_their_own_families() -> None:
    assert available_families() == available_families("en") and "senor" not in available_families()
    assert [f.name for f in families_for("de-AT")][:2] == ["dr_de", "usw"]
    assert [f.name for f in resolve_families(["honorific"], "es")] == ["senor", "senora", "senorita", "dona"]
    with pytest.raises(ConfigError, match="unknown convention family 'mr' of language 'es'"):
        resolve_families(["mr"], "es")
    with pytest.raises(ConfigError, match="no convention family is defined for language 'ja'"):
        resolve_families(None, "ja")


def test_options_cli_and_toml_read_language_alike() -> None:
    cli = SwitchRateOptions.from_mapping({"language": "es-MX", "families": ["symbol"]}, Surface.cli())
    toml = SwitchRateOptions.from_mapping(
        {"language": "es", "families": ["symbol"]}, Surface.toml("a.toml", "probes.switch_rate")
    )
    assert cli == toml and cli.language == "es"
    with pytest.raises(OptionError, match="language"):
        SwitchRateOptions.from_mapping({"language": "ja"}, Surface.toml("a.toml", "probes.switch_rate"))
    with pytest.raises(OptionError, match="unknown convention family of language 'fr' 'mr'"):
        SwitchRateOptions.from_mapping({"language": "fr", "families": ["mr"]}, Surface.cli())


def _write(folder: Path, model: str, rows: list[tuple[str, str, str]]) -> None:
    with (folder / f"{model}.jsonl").open("w", encoding="utf-8") as fh:
        for cid, ref, hyp in rows:
            fh.write(json.dumps({"id": cid, "text": ref, "pred_text": hyp}, ensure_ascii=False) + "\n")


def test_cli_spanish_switch_rate(tmp_path: Path, run_cli) -> None:
    refs = {
        "c1": "Gracias, Sr. García.",
        "c2": "Gracias, señor Ruiz.",
        "c3": "Subió un 20 %.",
        "c4": "Subió un treinta por ciento.",
        "c5": "Pagamos 10 € hoy.",
        "c6": "Pagamos diez euros hoy.",
    }
    # "copy" writes the reference's spelling everywhere; "habit" always the abbreviated one
    habit = {
        "c1": "gracias sr garcía",
        "c2": "gracias sr ruiz",
        "c3": "subió un 20%",
        "c4": "subió un 30%",
        "c5": "pagamos 10€ hoy",
        "c6": "pagamos 10 € hoy",
    }
    _write(tmp_path, "copy", [(c, r, r) for c, r in refs.items()])
    _write(tmp_path, "habit", [(c, r, habit[c]) for c, r in refs.items()])
    out = tmp_path / "s.json"
    code, _, err = run_cli("switch-rate", "--preds", tmp_path, "--language", "es", "--min-per-arm", "1", "--json", out)
    assert code == 0, err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["params"]["language"] == "es" and data["families"][0]["language"] == "es"
    rows = {(r["model"], r["family"]): r for r in data["rows"]}
    for family in ("senor", "percent_es", "euro_es"):
        assert rows["copy", family]["switch"] == 1.0
        assert rows["habit", family]["switch"] == 0.0
    code, _, err = run_cli("switch-rate", "--preds", tmp_path, "--language", "es", "--families", "mr")
    assert code == 2 and "of language 'es'" in err


def test_spec_switch_rate_language(tmp_path: Path) -> None:
    """``[probes.switch_rate] language = "fr"`` scores the French families through the same options."""
    from probe_calls import spec_probe

    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.probes.core.probe import ProbeInputs

    _write(tmp_path, "m", [("c1", "Merci, M. Dupont.", "Merci monsieur Dupont.")])
    ctx = ProbeInputs(corpus="c", predictions=load_predictions(tmp_path), panel=(), seed=0, normalizer="whisper")
    data = spec_probe("switch_rate", ctx, {"language": "fr", "min_per_arm": 1})
    assert data is not None
    assert data["params"]["language"] == "fr" and data["reference_items"]["monsieur"] == {"monsieur": 0, "M.": 1}
    assert [i["status"] for i in data["items"]] == ["other"]
    with pytest.raises(OptionError, match="language"):
        spec_probe("switch_rate", ctx, {"language": "xx"})
