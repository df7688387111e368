"""The Python API (``asr_audit.api``, re-exported by ``asr_audit``) gives the CLI's numbers.

Each API function calls the library function its verb calls; these tests hold the two to the same
output on the shipped VoxPopuli example predictions, and run the README's Python snippets.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import asr_audit
from asr_audit import api
from asr_audit.data import VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL
from asr_audit.errors import ConfigError
from asr_audit.options import OptionError

README = Path(__file__).parents[1] / "README.md"
PANEL = ",".join(VOXPOPULI_PANEL)


def test_package_re_exports_the_api_lazily() -> None:
    assert asr_audit.refdis is api.refdis and asr_audit.to_dataframe is api.to_dataframe
    assert all(getattr(asr_audit, name) is getattr(api, name) for name in asr_audit.__all__ if name != "__version__")
    assert set(asr_audit.__all__) <= set(dir(asr_audit))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = asr_audit.nope  # the test is that it is missing


@pytest.mark.parametrize(
    ("flags", "kwargs"),
    [
        ((), {}),
        (
            ("--preset", "paper", "--no-loo", "--min-confidence", "0.4"),
            {"preset": "paper", "loo": False, "min_confidence": 0.4},
        ),
        (
            ("--models", "distil-small.en", "--majority", "0.75", "--seed", "3"),
            {"models": ["distil-small.en"], "majority": 0.75, "seed": 3},
        ),
    ],
)
def test_refdis_equals_the_verb(flags: tuple[str, ...], kwargs: dict, tmp_path: Path, run_cli) -> None:
    out = tmp_path / "refdis.json"
    code, _, err = run_cli("refdis", "--preds", VOXPOPULI_EXAMPLES, "--panel", PANEL, "--json", out, *flags)
    assert code == 0, err
    assert api.refdis(VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL, **kwargs).to_dict() == json.loads(out.read_text())


def test_switch_rate_equals_the_verb(tmp_path: Path, run_cli) -> None:
    out = tmp_path / "switch.json"
    code, _, err = run_cli("switch-rate", "--preds", VOXPOPULI_EXAMPLES, "--families", "honorific", "--json", out)
    assert code == 0, err
    result = api.switch_rate(api.load_predictions(VOXPOPULI_EXAMPLES), families=["honorific"])
    assert json.loads(json.dumps(result.to_dict())) == json.loads(out.read_text())


def test_bad_keywords_are_named_as_keywords() -> None:
    with pytest.raises(OptionError, match=r"^refdis\(min_run_len='2'\) is a str, expected an integer"):
        api.refdis(VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL, min_run_len="2")
    with pytest.raises(OptionError, match=r"^switch_rate\(denominator='all'\)"):
        api.switch_rate(VOXPOPULI_EXAMPLES, denominator="all")
    with pytest.raises(ConfigError, match="one string"):
        api.refdis(VOXPOPULI_EXAMPLES, PANEL)


def test_rows_are_flat_and_one_per_model() -> None:
    rows = api.to_rows(api.refdis(VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL))
    assert [r["model"] for r in rows] == sorted(["distil-small.en", *VOXPOPULI_PANEL])
    assert all(not isinstance(v, (dict, list)) for r in rows for v in r.values())


def test_to_dataframe() -> None:
    pytest.importorskip("pandas")
    frame = api.to_dataframe(api.refdis(VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL))
    assert frame.set_index("model")["n_ref"].to_dict() == {
        "distil-small.en": 0,
        "wav2vec2-base-960h": 1,
        "whisper-base.en": 0,
        "whisper-small.en": 1,
        "whisper-tiny.en": 1,
    }


def _spec(tmp_path: Path) -> Path:
    path = tmp_path / "audit.toml"
    path.write_text(
        f'title = "api"\noutput = "{tmp_path / "out"}"\nstore = "{tmp_path / "s.sqlite"}"\n'
        f'[[corpus]]\nname = "vox"\npredictions = "{VOXPOPULI_EXAMPLES}"\n'
        f"[panel]\nmodels = {json.dumps(list(VOXPOPULI_PANEL))}\n[probes.refdis]\n"
    )
    return path


def test_run_spec_gives_the_verbs_refdis(tmp_path: Path) -> None:
    outcome = api.run_spec(_spec(tmp_path), log=lambda _: None)
    assert outcome.report is not None and outcome.report.exists() and not outcome.config_errors
    rows = [r for r in api.to_rows(outcome) if r["probe"] == "refdis"]
    direct = api.to_rows(api.refdis(VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL))
    assert [{k: r[k] for k in ("model", "n_ref", "n_eligible")} for r in rows] == [
        {k: r[k] for k in ("model", "n_ref", "n_eligible")} for r in direct
    ]


def test_run_spec_checks_its_output_folder_first(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="^out "):
        api.run_spec(_spec(tmp_path), out=tmp_path / "busy", log=lambda _: None)
    assert not (tmp_path / "s.sqlite").exists()  # refused before any work


@pytest.mark.parametrize("i", range(len(re.findall(r"```python\n", README.read_text()))))
def test_readme_python_snippets_run(i: int) -> None:
    block = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[i]
    if "to_dataframe" in block:
        pytest.importorskip("pandas")
    exec(compile(block, f"README.md python block {i}", "exec"), {})  # the README's own snippet
