"""Steering arms on a fake hooked backend: accept-ref, flips against the clean run, controls,
and store rows cached under keys that include the intervention."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sf = pytest.importorskip("soundfile")

from gate_backend import REF, SPOKEN, Gate, ScoringGate, gate_clips  # noqa: E402 - tests/support, after the skips

from asr_audit.calib.truth import TruthItem  # noqa: E402
from asr_audit.corpus.clips import Corpus  # noqa: E402
from asr_audit.errors import ConfigError  # noqa: E402
from asr_audit.mech.directions import Direction  # noqa: E402
from asr_audit.mech.interventions import Gate as ActGate  # noqa: E402
from asr_audit.mech.interventions import Intervention  # noqa: E402
from asr_audit.mechrun.steer import Arm, control_arms, run_steer  # noqa: E402
from asr_audit.store.sqlite import Store  # noqa: E402


def _item(cid: str) -> TruthItem:
    toks = tuple(REF.split())
    return TruthItem(
        cid,
        cid,
        0,
        "spurious_insertion_in_reference",
        "opener",
        "start",
        0,
        2,
        len(toks),
        "Madam President,",
        "",
        ("madam", "president"),
        (),
    )


@pytest.fixture()
def corpus(tmp_path):
    return Corpus("fake", "test", str(tmp_path), tuple(gate_clips(tmp_path)))


def test_ablation_flips_ref_to_spoken_and_random_controls_do_not(corpus, tmp_path) -> None:
    d = Direction("gate", "decoder.out", np.array([1.0, 0.0, 0.0, 0.0]), np.array([[1.0, 0.0, 0.0, 0.0]]))
    arms = control_arms(d, "ablate", n_random=2, seed=0)
    assert [a.label for a in arms] == ["ablate-k1", "random-0", "random-1", "shuffled"]
    assert [a.key for a in arms] == [a.key for a in control_arms(d, "ablate", n_random=2, seed=0)]
    backend = Gate()
    items = [_item(c.id) for c in corpus.clips]
    store = Store(tmp_path / "s.sqlite3")
    res = run_steer(backend, corpus, store, arms, items=items, wer_texts={c.id: SPOKEN for c in corpus.clips})
    clean, ablate = res.arm("clean"), res.arm("ablate-k1")
    assert (clean.accept_ref.k, clean.accept_ref.n) == (4, 6)
    assert ablate.accept_ref.k == 0 and (ablate.ref_to_spoken, ablate.spoken_to_ref) == (4, 0)
    assert res.effect_share() == 1.0
    assert ablate.wer == 0.0 and clean.wer is not None and clean.wer > 0
    assert res.to_dict()["arms"][1]["flips"] == {"ref_to_spoken": 4, "spoken_to_ref": 0}
    n = backend.calls
    again = run_steer(backend, corpus, store, arms, items=items)
    assert backend.calls == n  # every arm's rows came from the store, each under its own key
    assert again.arm("ablate-k1").accept_ref.k == 0
    induce = Intervention.induction(["decoder.out"], np.array([1.0, 0, 0, 0]), 1.0, label="induce")
    up = run_steer(backend, corpus, store, [induce], items=items)
    assert up.arm("induce").accept_ref.k == 6 and up.arm("induce").spoken_to_ref == 2
    store.close()


class TwoSiteGate(Gate):
    """:class:`Gate` whose activation passes two sites in a row: ``decoder.layers.0.out`` then ``decoder.out``."""

    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Identity()

    def sites(self) -> list[str]:
        return ["decoder.layers.0.out", "decoder.out"]

    def site_module(self, name: str):
        return self.first if name == "decoder.layers.0.out" else self.out

    def transcribe(self, audios):
        self.calls += len(audios)
        h = self.out(self.first(torch.tensor(np.stack([a[:4] for a in audios]), dtype=torch.float64)))
        return [REF if float(x[0]) > 0.5 else SPOKEN for x in h]


def test_mean_ablation_sets_the_faithful_value_and_multi_site_arms_apply_together(corpus, tmp_path) -> None:
    vec, basis = np.array([0.8, 0.0, 0.0, 0.0]), np.array([[1.0, 0.0, 0.0, 0.0]])
    # set B's mean sits at 0.1 on the gate axis: mean ablation moves every clip there, below the gate
    d = Direction("gate", "decoder.out", vec, basis, {}, np.array([0.1, 0.0, 0.0, 0.0]))
    arms = control_arms(d, "mean-ablate", n_random=1, seed=0)
    assert [a.label for a in arms] == ["mean-ablate-k1", "random-0", "shuffled"]
    assert all(a.to_dict()["centered"] for a in arms)
    items = [_item(c.id) for c in corpus.clips]
    store = Store(tmp_path / "s.sqlite3")
    res = run_steer(Gate(), corpus, store, arms, items=items)
    assert res.arm("mean-ablate-k1").accept_ref.k == 0 and res.arm("mean-ablate-k1").ref_to_spoken == 4
    # a direction saved without set B's mean cannot be mean-ablated
    with pytest.raises(ConfigError, match="without set B's mean"):
        control_arms(Direction("old", "decoder.out", vec, basis), "mean-ablate")

    # multi-site: one direction per site, each arm hooks both sites; controls drawn per site
    d0 = Direction("gate0", "decoder.layers.0.out", vec, basis, {}, np.array([0.1, 0.0, 0.0, 0.0]))
    multi = control_arms([d0, d], "mean-ablate", n_random=1, seed=0)
    assert [a.label for a in multi] == ["mean-ablate-k1", "random-0", "shuffled"]
    assert [iv.sites for iv in multi[0].interventions] == [("decoder.layers.0.out",), ("decoder.out",)]
    assert multi[1].interventions[0].key != multi[1].interventions[1].key  # fresh random draw per site
    assert [a.key for a in multi] == [a.key for a in control_arms([d0, d], "mean-ablate", n_random=1, seed=0)]
    two = TwoSiteGate()
    out = run_steer(two, corpus, store, multi, items=items, direction=[d0, d])
    arm = out.arm("mean-ablate-k1")
    assert arm.intervention is not None
    assert arm.accept_ref.k == 0 and arm.intervention["sites"] == ["decoder.layers.0.out", "decoder.out"]
    assert len(arm.intervention["parts"]) == 2 and out.to_dict()["direction"]["directions"][1]["name"] == "gate"
    assert not two.first._forward_hooks and not two.out._forward_hooks
    # +0.3 at either site alone leaves the two quiet clips (0.1) under the gate; both together lift them
    push = [Intervention.induction([s], np.array([0.3, 0, 0, 0]), 1.0) for s in two.sites()]
    up = run_steer(two, corpus, store, [Arm("one", (push[0],)), Arm("both", tuple(push))], items=items)
    assert up.arm("one").accept_ref.k == 4 and up.arm("both").accept_ref.k == 6
    with pytest.raises(ConfigError, match="share a site"):
        control_arms([d, d], "ablate")
    with pytest.raises(ConfigError, match="drop --site"):
        control_arms([d0, d], "ablate", sites=["decoder.out"])
    store.close()


def test_clamp_removes_the_record_above_the_cap_and_never_moves_clips_below(corpus, tmp_path) -> None:
    vec, basis = np.array([0.8, 0.0, 0.0, 0.0]), np.array([[1.0, 0.0, 0.0, 0.0]])
    items = [_item(c.id) for c in corpus.clips]
    store = Store(tmp_path / "s.sqlite3")
    # set B's mean at 0.1: a cap there (clamp_at 0) moves the four reciting clips (0.9) under the gate
    d = Direction("gate", "decoder.out", vec, basis, {}, np.array([0.1, 0.0, 0.0, 0.0]))
    arms = control_arms(d, "clamp", n_random=1, seed=0)
    assert [a.label for a in arms] == ["clamp-c0-k1", "random-0", "shuffled"]
    assert {a.kind for a in arms} == {"clamp"} and len({a.limit for a in arms}) == 1
    res = run_steer(Gate(), corpus, store, arms, items=items)
    arm = res.arm("clamp-c0-k1")
    assert arm.accept_ref.k == 0 and (arm.ref_to_spoken, arm.spoken_to_ref) == (4, 0)
    # a cap above every clip (0.1 + 1.25 * 0.8) is the identity
    high = run_steer(Gate(), corpus, store, control_arms(d, "clamp", n_random=0, clamp_at=1.25)[:1], items=items)
    assert high.arms[1].accept_ref.k == 4 and (high.arms[1].ref_to_spoken, high.arms[1].spoken_to_ref) == (0, 0)
    # set B's mean above the gate (0.6): mean ablation lifts the two quiet clips (0.1) into reciting,
    # clamping never moves a clip up, so they stay faithful
    up = Direction("up", "decoder.out", vec, basis, {}, np.array([0.6, 0.0, 0.0, 0.0]))
    mean = run_steer(Gate(), corpus, store, control_arms(up, "mean-ablate", n_random=0)[:1], items=items)
    clamp = run_steer(Gate(), corpus, store, control_arms(up, "clamp", n_random=0)[:1], items=items)
    assert mean.arms[1].spoken_to_ref == 2 and clamp.arms[1].spoken_to_ref == 0
    # B's mean 0.6, cap 0.6 - 0.625 * 0.8 = 0.1, trigger 0.6 - 0.125 * 0.8 = 0.5: the reciting clips
    # (0.9) drop to 0.1, the quiet ones (0.1, below the trigger) stay
    trig = control_arms(up, "clamp", n_random=0, clamp_at=-0.625, trigger_at=-0.125)
    assert trig[0].label == "clamp-c-0.625-t-0.125-k1" and trig[0].to_dict()["trigger"] == pytest.approx(-0.1)
    low = run_steer(Gate(), corpus, store, trig[:1], items=items)
    assert (low.arms[1].ref_to_spoken, low.arms[1].spoken_to_ref) == (4, 0)
    with pytest.raises(ConfigError, match="trigger_at"):
        control_arms(d, "clamp", clamp_at=0.5, trigger_at=0.25)
    with pytest.raises(ConfigError, match="without set B's mean"):
        control_arms(Direction("old", "decoder.out", vec, basis), "clamp")
    with pytest.raises(ConfigError, match="clamp_at"):
        control_arms(d, "clamp", clamp_at=float("inf"))
    store.close()


def test_control_arms_carry_decoder_positions_to_every_arm() -> None:
    d = Direction("d", "decoder.layers.1.out", np.array([1.0, 0.0, 0.0]), np.array([[1.0, 0.0, 0.0]]), {}, np.zeros(3))
    for mode in ("ablate", "mean-ablate", "clamp", "induce"):
        arms = control_arms(d, mode, n_random=2, positions=(1, 2))
        assert len(arms) == 4 and {iv.positions for iv in arms} == {(1, 2)}
        assert {iv.key for iv in arms}.isdisjoint(iv.key for iv in control_arms(d, mode, n_random=2))
    multi = control_arms([d, Direction("e", "decoder.layers.2.out", d.vector, d.basis, {}, np.zeros(3))], "clamp",
                         n_random=1, positions=(1, 2))  # fmt: skip
    assert {iv.positions for arm in multi for iv in arm.interventions} == {(1, 2)}


def test_gated_arms_edit_only_the_clips_the_clean_model_opens_the_gate_for(corpus, tmp_path) -> None:
    items = [_item(c.id) for c in corpus.clips]
    store = Store(tmp_path / "s.sqlite3")
    ablate = Intervention.ablation(["decoder.out"], np.array([[1.0, 0.0, 0.0, 0.0]]), label="x")
    ungated = Arm("ablate", (ablate,))
    e0 = (1.0, 0.0, 0.0, 0.0)

    def gated(threshold: float) -> Arm:
        return Arm(f"gated {threshold:g}", (ablate,), ActGate("decoder.out", e0, (), threshold))

    backend = ScoringGate()
    plain = run_steer(backend, corpus, store, [ungated], items=items, wer_texts={c.id: SPOKEN for c in corpus.clips})
    calls = backend.calls
    never, always, half = gated(5.0), gated(-5.0), gated(0.5)
    res = run_steer(backend, corpus, store, [never, always, half], items=items)
    assert backend.calls == calls  # open clips reuse the ungated arm's stored rows; closed ones the clean rows
    assert backend.scored == len(corpus.clips)  # one pre-pass per gate and clip
    assert res.hypotheses[never.label] == res.hypotheses["clean"] == plain.hypotheses["clean"]
    assert res.hypotheses[always.label] == plain.hypotheses["ablate"]
    # the pre-pass reads the unedited activation: the ablation zeroes coordinate 0, yet the gate
    # (open above 0.5 there) opens for the four reciting clips, which then lose the record
    arm = res.arm(half.label)
    assert (arm.n_open, arm.n_clips) == (4, 6) and arm.accept_ref.k == 0 and arm.ref_to_spoken == 4
    assert (res.arm(never.label).n_open, res.arm(always.label).n_open) == (0, 6)
    assert res.arm(never.label).to_dict()["gate_open"] == {"k": 0, "n": 6}
    assert "gate_open" not in plain.arm("ablate").to_dict()
    assert half.gate is not None and res.to_dict()["arms"][3]["intervention"]["gate"]["key"] == half.gate.key
    assert len({a.key for a in (ungated, never, always, half)}) == 4 and half.ungated().key == ungated.key
    store.close()


def test_a_gate_from_a_saved_direction_sits_at_a_multiple_of_its_norm() -> None:
    from asr_audit.mechrun.steer import direction_gate, gated_arms

    e0 = np.eye(4)[0]
    d = Direction("voice", "decoder.out", 0.8 * e0, e0[None, :], {}, 0.1 * e0)
    g = direction_gate(d, 0.5)
    assert g.vector == pytest.approx(tuple(e0)) and g.threshold == pytest.approx(0.4) and g.label == "voice at 0.5"
    assert g.opens(0.9 * e0) and not g.opens(0.45 * e0) and direction_gate(d, 0.25).key != g.key
    arms = gated_arms(control_arms(d, "clamp", n_random=1), g)
    assert [a.label for a in arms] == ["clamp-c0-k1", "random-0", "shuffled"] and {a.gate for a in arms} == {g}
    with pytest.raises(ConfigError, match="without set B's mean"):
        direction_gate(Direction("old", "decoder.out", e0, e0[None, :]))
    with pytest.raises(ConfigError, match="gate_at"):
        direction_gate(d, float("inf"))
    with pytest.raises(ConfigError, match="not a decoder site"):
        direction_gate(Direction("enc", "encoder.out", e0, e0[None, :], {}, 0 * e0))
