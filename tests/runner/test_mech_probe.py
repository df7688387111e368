"""``[probes.mech]``: the steering table of a saved direction on a corpus's clips, its typed spec
errors, and the report's mech section rendering it (a fake hooked backend keeps it fast)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sf = pytest.importorskip("soundfile")

from gate_backend import REF, SPOKEN, Gate, ScoringGate, gate_clips  # noqa: E402 - tests/support, after the skips

from asr_audit.corpus.clips import Clip, Corpus  # noqa: E402
from asr_audit.corpus.predfiles import PredictionSet  # noqa: E402
from asr_audit.errors import ConfigError  # noqa: E402
from asr_audit.mech.directions import Direction, save_direction  # noqa: E402
from asr_audit.mechrun.probe import MECH, MechOptions  # noqa: E402
from asr_audit.options import OptionError, Surface  # noqa: E402
from asr_audit.probes.core.models import LocalModel, Transcribed  # noqa: E402
from asr_audit.probes.core.probe import ProbeInputs  # noqa: E402
from asr_audit.store.sqlite import Store  # noqa: E402


def _setup(tmp_path: Path) -> tuple[Corpus, Path, Path]:
    clips = gate_clips(tmp_path, voices=("rms", "slt"))
    truth = []
    for i in range(6):
        truth.append(
            {
                "clip_id": f"c{i}", "sentence_id": f"c{i}", "item": 0, "kind": "spurious_insertion_in_reference",
                "detail": "opener", "position": "start", "ref_start": 0, "ref_stop": 2, "n_ref": 5,
                "ref_text": "Madam President,", "spoken_text": "", "ref_norm": ["madam", "president"], "spoken_norm": [],
            }
        )  # fmt: skip
    (tmp_path / "truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))
    manifest = [
        {
            "id": c.id,
            "audio_filepath": c.audio_path,
            "sentence_id": c.id,
            "speaker": c.speaker,
            "text": REF,
            "spoken": SPOKEN,
        }
        for c in clips
    ]
    (tmp_path / "calib-test.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    dirs = tmp_path / "dirs"
    e0 = np.eye(4)[0]
    save_direction(Direction("gate", "decoder.out", 0.8 * e0, e0[None, :], {}, 0.1 * e0), dirs)
    return Corpus("fake", "test", str(tmp_path), tuple(clips)), tmp_path, dirs


class _Pool:
    """The one fake model ``organism``."""

    names = ("organism",)

    def __init__(self, backend: Gate) -> None:
        self.backend = backend

    def get(self, name: str) -> Gate:
        return self.backend

    def model(self, name: str, store: Any) -> LocalModel:
        return LocalModel(name, self.backend)

    def transcribe(self, jobs: Mapping[Any, Iterable[Clip]], store: Any) -> dict[Any, Transcribed]:
        return {}


SURFACE = Surface.toml("audit.toml", "probes.mech")


def _ctx(corpus: Corpus, store: Store, backend: Gate | None = None) -> ProbeInputs:
    return ProbeInputs(
        corpus="fake",
        predictions=PredictionSet((), {}),
        clips=corpus,
        pool=_Pool(backend or Gate()),
        models=("organism",),
        store=store,
    )


class _Probe:
    """The registered ``mech`` probe as the spec runner calls it."""

    def run(self, inputs: ProbeInputs, params: dict) -> dict | None:
        return MECH(inputs, params, SURFACE)


def get_probe(name: str) -> _Probe:
    assert name == "mech"
    return _Probe()


def test_mech_probe_reports_the_steering_table(tmp_path: Path) -> None:
    corpus, truth, dirs = _setup(tmp_path)
    store = Store(tmp_path / "s.sqlite3")
    probe = get_probe("mech")
    params = {"model": "organism", "direction": "gate", "directions": str(dirs), "mode": "mean-ablate"}
    res = probe.run(_ctx(corpus, store), {**params, "truth": str(truth), "n_random": 1})
    assert res is not None
    (run,) = res["steer"].values()
    arms = {a["label"]: a for a in run["arms"]}
    assert list(arms) == ["clean", "mean-ablate-k1", "random-0", "shuffled"]
    assert arms["clean"]["accept_ref"]["k"] == 4 and arms["mean-ablate-k1"]["accept_ref"]["k"] == 0
    assert arms["mean-ablate-k1"]["flips"] == {"ref_to_spoken": 4, "spoken_to_ref": 0}
    assert run["model"]["name"] == "organism" and run["effect_share"] == 1.0
    only = probe.run(_ctx(corpus, store), {**params, "truth": str(truth), "n_random": 0, "speakers": ["slt"]})
    assert only is not None
    (run,) = only["steer"].values()
    assert run["arms"][0]["accept_ref"]["n"] == 3  # c1, c3, c5
    # clamp at set B's mean + 0.25 |d| = 0.3: the reciting clips (0.9) fall under the gate, the others stay
    clamp = probe.run(
        _ctx(corpus, store), {**params, "truth": str(truth), "n_random": 0, "mode": "clamp", "clamp_at": 0.25}
    )
    assert clamp is not None
    ((key, run),) = clamp["steer"].items()
    arm = run["arms"][1]
    assert key == "organism clamp" and arm["label"] == "clamp-c0.25-k1" and arm["intervention"]["limit"] == 0.2
    assert arm["flips"] == {"ref_to_spoken": 4, "spoken_to_ref": 0}
    with pytest.raises(ConfigError, match="not a model of this spec"):
        probe.run(_ctx(corpus, store), {**params, "model": "other"})
    store.close()

    from asr_audit.report.html import build_report

    out = build_report({"title": "t", "probes": [{"probe": "mech", "corpus": "fake", "result": res}]}, tmp_path / "r")
    html = Path(out).read_text()
    assert "Mechanism — fake" in html and "mean-ablate-k1" in html


def test_mech_options_are_checked_when_the_spec_loads() -> None:
    surface = Surface.toml("audit.toml", "probes.mech")
    ok = MechOptions.from_mapping({"model": "m", "direction": ["a", "b"], "alpha": 2}, surface)
    assert ok.direction == ("a", "b") and ok.alpha == 2.0 and ok.mode == "ablate"
    with pytest.raises(OptionError, match=r"\[probes\.mech\] direction is missing"):
        MechOptions.from_mapping({"model": "m"}, surface)
    with pytest.raises(OptionError, match="valid: ablate, mean-ablate, induce"):
        MechOptions.from_mapping({"model": "m", "direction": "a", "mode": "zero"}, surface)
    with pytest.raises(OptionError, match="at least 1"):
        MechOptions.from_mapping({"model": "m", "direction": "a", "k": 0}, surface)
    clamp = MechOptions.from_mapping({"model": "m", "direction": "a", "mode": "clamp", "clamp_at": 0.5}, surface)
    assert (clamp.mode, clamp.clamp_at) == ("clamp", 0.5)
    with pytest.raises(OptionError, match="clamp_at"):
        MechOptions.from_mapping({"model": "m", "direction": "a", "clamp_at": float("inf")}, surface)
    with pytest.raises(OptionError, match="trigger_at .* must be at or above clamp_at"):
        MechOptions.from_mapping({"model": "m", "direction": "a", "clamp_at": 0.5, "trigger_at": 0.25}, surface)
    with pytest.raises(OptionError, match="is not an option of mech"):
        MechOptions.from_mapping({"model": "m", "direction": "a", "sites": "x"}, surface)
    at = MechOptions.from_mapping({"model": "m", "direction": "a", "site": "decoder.out,encoder.out"}, surface)
    assert at.site == ("decoder.out", "encoder.out")
    with pytest.raises(OptionError, match=r"\[probes\.mech\] site = .*'x', which is not a hook-site name"):
        MechOptions.from_mapping({"model": "m", "direction": "a", "site": "x"}, surface)
    with pytest.raises(OptionError, match="needs a single direction"):
        MechOptions.from_mapping({"model": "m", "direction": ["a", "b"], "site": "decoder.out"}, surface)
    with pytest.raises(OptionError, match=r"alpha = inf is not a finite number"):
        MechOptions.from_mapping({"model": "m", "direction": "a", "alpha": float("inf")}, surface)


def test_mech_positions_are_checked_when_the_spec_loads() -> None:
    surface = Surface.toml("audit.toml", "probes.mech")
    ok = MechOptions.from_mapping({"model": "m", "direction": "a", "mode": "clamp", "positions": "3:4"}, surface)
    assert ok.positions == (3, 4)
    assert MechOptions.from_mapping({"model": "m", "direction": "a"}, surface).positions is None
    for bad in ("4:3", "3", "a:b", "2:2", "-1:2"):
        with pytest.raises(OptionError, match=r"\[probes\.mech\] positions = .* is not P0:P1"):
            MechOptions.from_mapping({"model": "m", "direction": "a", "positions": bad}, surface)


def test_mech_positions_need_a_backend_that_can_read_them(tmp_path: Path) -> None:
    corpus, truth, dirs = _setup(tmp_path)
    store = Store(tmp_path / "s.sqlite3")
    params = {"model": "organism", "direction": "gate", "directions": str(dirs), "mode": "clamp", "positions": "0:9"}
    with pytest.raises(
        ConfigError,
        match=r"audit\.toml: \[probes\.mech\] positions = \"0:9\" needs a decoder position .* organism has none",
    ):
        get_probe("mech").run(_ctx(corpus, store), {**params, "truth": str(truth)})
    store.close()


def test_mech_gate_edits_only_the_clips_the_saved_direction_opens_for(tmp_path: Path) -> None:
    corpus, truth, dirs = _setup(tmp_path)
    e0 = np.eye(4)[0]
    save_direction(Direction("enc", "encoder.out", e0, e0[None, :], {}, 0 * e0), dirs)
    store = Store(tmp_path / "s.sqlite3")
    probe = get_probe("mech")
    params = {"model": "organism", "direction": "gate", "directions": str(dirs), "mode": "ablate", "n_random": 0}
    # the gate (set B's mean 0.1 + 0.5 * 0.8 = 0.5 on coordinate 0) opens for the four reciting clips
    res = probe.run(_ctx(corpus, store, ScoringGate()), {**params, "truth": str(truth), "gate": "gate"})
    assert res is not None
    (run,) = res["steer"].values()
    arm = run["arms"][1]
    assert arm["gate_open"] == {"k": 4, "n": 6} and arm["flips"] == {"ref_to_spoken": 4, "spoken_to_ref": 0}
    assert arm["intervention"]["gate"]["label"] == "gate at 0.5"
    shut = probe.run(_ctx(corpus, store, ScoringGate()), {**params, "truth": str(truth), "gate": "gate", "gate_at": 2})
    assert shut is not None
    (run,) = shut["steer"].values()
    assert run["arms"][1]["gate_open"]["k"] == 0 and run["arms"][1]["flips"]["ref_to_spoken"] == 0
    with pytest.raises(ConfigError, match=r"\[probes\.mech\] gate = \"nope\" names no saved direction"):
        probe.run(_ctx(corpus, store, ScoringGate()), {**params, "gate": "nope"})
    with pytest.raises(ConfigError, match=r"\[probes\.mech\] gate = \"enc\" cannot gate: .*not a decoder site"):
        probe.run(_ctx(corpus, store, ScoringGate()), {**params, "gate": "enc"})
    with pytest.raises(
        ConfigError, match=r"\[probes\.mech\] gate = \"gate\" cannot gate organism: .*cannot teacher-force"
    ):
        probe.run(_ctx(corpus, store), {**params, "gate": "gate"})  # the plain fake has no score
    with pytest.raises(OptionError, match=r"\[probes\.mech\] gate_at = .* must be finite"):
        MechOptions.from_mapping(
            {"model": "m", "direction": "a", "gate_at": float("nan")}, Surface.toml("audit.toml", "probes.mech")
        )
    store.close()


def test_a_model_without_hook_sites_is_a_configuration_error(tmp_path: Path) -> None:
    """`run` exits 2 on it (a ConfigError), as docs/mechanism.md says (issue 31, defect 12)."""
    corpus, truth, dirs = _setup(tmp_path)
    store = Store(tmp_path / "s.sqlite3")
    no_sites = Gate()
    no_sites.capabilities = frozenset({"transcribe"})  # the fake, without its sites
    params = {"model": "organism", "direction": "gate", "directions": str(dirs), "truth": str(truth)}
    with pytest.raises(
        ConfigError, match=r"\[probes\.mech\] model = \"organism\" cannot be steered: .*cannot expose hook sites"
    ):
        get_probe("mech").run(_ctx(corpus, store, no_sites), params)
    store.close()
