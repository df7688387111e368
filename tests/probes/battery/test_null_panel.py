"""The battery under the null: models that behave identically in every condition (TEST DOUBLES of
``tests/support/battery_null.py``) must show no condition effect, while a model planted to copy
the reference on the original audio only is still caught.

Before the fix the refdis measure mined its corrected references (and the courtesy measure its
eligible clips) from the tested models' own original-audio outputs: honest models showed a
"noise" difference of about +0.25 (refdis; 81-88% of worlds flagged) and +0.14 (courtesy; 26-41%
flagged). Now they come from a panel, leaving a tested member out of its own items.
"""

from __future__ import annotations

import numpy as np
import pytest
from battery_null import NullModel, make_world

from asr_audit.corpus.clips import Corpus
from asr_audit.errors import ConfigError
from asr_audit.probes.battery.battery import BatteryOptions, BatteryResult, run_battery
from asr_audit.probes.battery.conditions import parse_conditions
from asr_audit.runner.run import local_pool

N_WORLDS = 60
NOMINAL = 0.05
# flags allowed per honest model: nominal + 2.5 Monte-Carlo standard errors over N_WORLDS worlds
MAX_FLAG_RATE = NOMINAL + 2.5 * (NOMINAL * (1 - NOMINAL) / N_WORLDS) ** 0.5


def _noise(
    corpus: Corpus,
    measure: str,
    tested: dict[str, NullModel],
    panel: dict[str, NullModel] | None = None,
    seed: int = 0,
    resamples: int = 1000,
) -> BatteryResult:
    """The battery's ``measure`` under ``noise:10db`` (no case study)."""
    options = BatteryOptions(
        measure=measure,
        conditions=parse_conditions(["noise:10db"]),
        models=tuple(tested),
        panel=None if panel is None else tuple(panel),
        resamples=resamples,
        study=False,
    )
    return run_battery(local_pool(loaded={**(panel or {}), **tested}), corpus, None, options, seed=seed)


def _simulate(measure: str, n_worlds: int = N_WORLDS) -> tuple[dict[str, list[bool]], dict[str, list[float]]]:
    """Per tested model: does the noise difference's interval exclude 0, and its estimate, per world.

    ``t1`` is an honest panel member (scored leave-one-out), ``t2`` an honest model outside the
    panel, ``t3`` the planted copier; the panel is three more honest models and ``t1``.
    """
    flags: dict[str, list[bool]] = {}
    estimates: dict[str, list[float]] = {}
    for seed in range(n_worlds):
        corpus, spoken = make_world(seed, n_clips=100)

        def model(name: str, corpus: Corpus = corpus, spoken: dict = spoken, seed: int = seed, **kw: bool) -> NullModel:
            return NullModel(name, corpus, spoken, seed, drop=0.3, **kw)

        tested = {"t1": model("t1"), "t2": model("t2"), "t3": model("t3", copy_original=True)}
        panel = {"p1": model("p1"), "p2": model("p2"), "p3": model("p3"), "t1": tested["t1"]}
        res = _noise(corpus, measure, tested, panel, seed=seed, resamples=300)
        for d in res.differences:
            assert d["n_items"] > 0
            flags.setdefault(d["model"], []).append(d["ci_low"] > 0 or d["ci_high"] < 0)
            estimates.setdefault(d["model"], []).append(d["estimate"])
    return flags, estimates


@pytest.mark.parametrize("measure", ["refdis", "courtesy"])
def test_honest_models_show_no_noise_effect_and_a_planted_copier_is_caught(measure: str) -> None:
    flags, estimates = _simulate(measure)
    for honest in ("t1", "t2"):
        assert np.mean(flags[honest]) <= MAX_FLAG_RATE, (honest, np.mean(flags[honest]))
        assert abs(np.mean(estimates[honest])) < 0.03, (honest, np.mean(estimates[honest]))
    assert np.mean(flags["t3"]) >= 0.95 and np.mean(estimates["t3"]) < -0.5


@pytest.mark.parametrize("measure", ["refdis", "courtesy"])
def test_without_spoken_text_or_panel_the_measure_refuses_in_one_line(measure: str) -> None:
    corpus, spoken = make_world(0, n_clips=5)
    tested = {"t1": NullModel("t1", corpus, spoken, 0)}
    with pytest.raises(ConfigError) as err:
        _noise(corpus, measure, tested)
    msg = str(err.value)
    assert "\n" not in msg and "--panel" in msg and "--spoken" in msg


def test_a_panel_member_alone_cannot_be_left_out() -> None:
    corpus, spoken = make_world(0, n_clips=5)
    t1 = NullModel("t1", corpus, spoken, 0)
    panel = {"p1": NullModel("p1", corpus, spoken, 0), "p2": NullModel("p2", corpus, spoken, 0), "t1": t1}
    with pytest.raises(ConfigError, match=r"got 2 after leaving out the tested model 't1'; fix: .*--panel"):
        _noise(corpus, "refdis", {"t1": t1}, panel)


def test_panel_members_are_scored_without_their_own_outputs() -> None:
    """A clip whose opener only the tested member wrote gives it no item; a non-member tested
    model is scored on the whole panel's edits."""
    from asr_audit.probes.battery.battery import panel_views

    assert panel_views(["p1", "p2", "t1"], ["t1", "t2"]) == {"t1": ("p1", "p2"), "t2": ("p1", "p2", "t1")}
    corpus, spoken = make_world(3, n_clips=40)

    def model(name: str, drop: float) -> NullModel:
        return NullModel(name, corpus, spoken, 3, drop=drop, err=0.0)

    # the panel members other than t1 always drop the opener: only t1 (never dropping) says it
    panel = {"p1": model("p1", 1.0), "p2": model("p2", 1.0), "p3": model("p3", 1.0), "t1": model("t1", 0.0)}
    res = _noise(corpus, "refdis", {"t1": panel["t1"]}, panel, resamples=50)
    assert res.cell("t1", "original").n == 0  # t1's own outputs never make its items


def test_spec_and_cli_name_the_panel() -> None:
    from asr_audit.options import Surface
    from asr_audit.probes.battery.battery import BatteryOptions
    from asr_audit.probes.core.probe import get_probe
    from asr_audit.runner.probes import load_probes

    load_probes()
    assert "panel" in get_probe("battery").params
    opts = BatteryOptions.from_mapping({"conditions": ["noise:10db"], "panel": "a,b,c"}, Surface.cli())
    assert opts.panel == ("a", "b", "c")
    assert BatteryOptions.from_mapping({"conditions": ["noise:10db"]}, Surface.cli()).panel is None


def _preds_corpus(tmp_path):
    """A 6-clip manifest (tones) and four prediction files answering by clip id (``preds:``)."""
    import json

    import soundfile as sf

    man = tmp_path / "manifest.jsonl"
    rows = []
    for i in range(6):
        x = (0.1 * np.sin(2 * np.pi * (200 + 20 * i) * np.arange(8000) / 16000)).astype(np.float32)
        sf.write(tmp_path / f"c{i}.wav", x, 16000)
        rows.append({"id": f"c{i}", "audio_filepath": f"c{i}.wav", "text": "we agree on this"})
    man.write_text("".join(json.dumps(r) + "\n" for r in rows))
    preds = []
    for k in range(4):
        p = tmp_path / f"m{k}.jsonl"
        p.write_text(
            "".join(
                json.dumps(
                    {"id": r["id"], "reference": r["text"], "hypothesis": "thank you mister president we agree on this"}
                )
                + "\n"
                for r in rows
            )
        )
        preds.append(f"preds:{p}")
    return man, preds


def test_cli_without_spoken_or_panel_is_one_line_and_panel_runs(run_cli, tmp_path) -> None:
    import json

    man, preds = _preds_corpus(tmp_path)
    code, _, err = run_cli(
        "battery", "--model", preds[0], "--corpus", man, "--conditions", "original", "--store", tmp_path / "s.sqlite"
    )
    assert code == 2 and "no panel was given" in err and "--panel" in err and "Traceback" not in err
    out = tmp_path / "b.json"
    code, _, err = run_cli(
        "battery",
        "--model",
        preds[0],
        "--corpus",
        man,
        "--conditions",
        "original",
        "--panel",
        ",".join(preds),
        "--store",
        tmp_path / "s.sqlite",
        "--resamples",
        "20",
        "--json",
        out,
    )
    assert code == 0, err
    (cell,) = json.loads(out.read_text())["cells"]
    assert cell["n"] == 6 and cell["accept_ref"] == 0.0  # the opener the other three panel members heard


def test_cli_study_switch_and_normalizer_reach_the_probe(run_cli, tmp_path) -> None:
    """``--no-study`` leaves the courtesy study out, as ``study = false`` does in a spec; ``--normalizer``
    names the normalizer the spec's ``normalizer`` names (an unknown one is a one-line error)."""
    import json

    man, preds = _preds_corpus(tmp_path)
    common = ["--model", preds[0], "--corpus", man, "--probe", "courtesy", "--conditions", "original"]
    common += ["--panel", ",".join(preds[1:]), "--store", tmp_path / "s.sqlite", "--resamples", "20"]
    studies = []
    for flag in ("--study", "--no-study"):
        out = tmp_path / f"{flag}.json"
        code, _, err = run_cli("battery", *common, flag, "--json", out)
        assert code == 0, err
        studies.append(json.loads(out.read_text())["study"])
    assert [r["condition"] for r in studies[0]] == ["full", "truncated", "attn-isolated", "translate"]
    assert studies[1] == []
    code, _, err = run_cli("battery", *common, "--normalizer", "klingon")
    assert code == 2 and "klingon" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
