"""The white-box layer on a real tiny model (the bundled whisper-tiny.en rebuilt in PyTorch):
hooks always removed, ablation zeroes the projection, induction with alpha = 0 is the identity,
patching with the same run is the identity, capture streams the forward pass's activations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
sf = pytest.importorskip("soundfile")

from asr_audit.audio.io import audio_hash  # noqa: E402
from asr_audit.data import LIBRIVOX  # noqa: E402
from asr_audit.errors import ConfigError  # noqa: E402
from asr_audit.mech.directions import Direction, unit  # noqa: E402
from asr_audit.mech.interventions import Gate, Intervention, intervene, recording, replacing  # noqa: E402
from asr_audit.mechrun.capture import capture, load_capture, n_frames  # noqa: E402
from asr_audit.mechrun.patch import PatchCondition, logprob, patched_logprob  # noqa: E402
from asr_audit.mechrun.steer import SteeredBackend, control_arms, gate_scores, prompt_activations  # noqa: E402

ENC = "encoder.layers.1.out"
DEC = "decoder.layers.1.out"


@pytest.fixture(scope="module")
def tiny(tiny_pt):
    return tiny_pt  # tests/conftest.py: one load per session


@pytest.fixture(scope="module")
def clip():
    samples, sr = sf.read(LIBRIVOX / "0880.flac", dtype="float32")
    assert sr == 16_000
    return samples[: 16_000 * 2]


def _n_hooks(backend) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in backend.torch_model.modules())


def test_hooks_are_always_removed(tiny, clip) -> None:
    iv = Intervention.ablation([ENC, DEC], np.ones(384))
    with intervene(tiny, iv), recording(tiny, [ENC], lambda s, t: None):
        assert _n_hooks(tiny) == 3
    with pytest.raises(RuntimeError, match="boom"), intervene(tiny, iv), replacing(tiny, ENC, torch.zeros(1)):
        raise RuntimeError("boom")
    bad = Intervention.induction([ENC], np.ones(7), 1.0)  # wrong width: the hook raises mid-forward
    with pytest.raises(ConfigError, match="site width 384"), intervene(tiny, bad):
        tiny.transcribe([clip])
    assert _n_hooks(tiny) == 0


def test_ablation_makes_the_projection_zero(tiny, clip) -> None:
    basis = np.random.default_rng(2).standard_normal((2, 384))  # rank 2: the whole subspace goes
    iv = Intervention.ablation([ENC], basis)
    got: dict = {}
    with torch.inference_mode(), intervene(tiny, iv), recording(tiny, [ENC], got.__setitem__):
        tiny._encoder_states([clip])
    with torch.inference_mode(), recording(tiny, [ENC], lambda s, t: got.__setitem__("clean", t)):
        tiny._encoder_states([clip])
    q = np.asarray(iv.basis)
    after = got[ENC].double().numpy() @ q.T
    before = got["clean"].double().numpy() @ q.T
    assert np.abs(after).max() < 1e-3 * np.abs(before).max()


def test_induction_with_alpha_zero_is_the_identity(tiny, clip) -> None:
    text = "he had then leisure"
    clean = tiny.score([clip], [""], [text])[0].logprobs
    zero = Intervention.induction([DEC], np.random.default_rng(0).standard_normal(384), 0.0)
    with intervene(tiny, zero):
        same = tiny.score([clip], [""], [text])[0].logprobs
    assert same == clean
    strong = Intervention.induction([DEC], np.random.default_rng(0).standard_normal(384), 50.0)
    with intervene(tiny, strong):
        moved = tiny.score([clip], [""], [text])[0].logprobs
    assert moved != clean


def test_patching_with_the_same_run_is_the_identity(tiny, clip) -> None:
    text = "he had then leisure"
    clean = logprob(tiny, clip, text)
    for site in ("encoder.out", DEC):
        assert patched_logprob(tiny, clip, text, PatchCondition("self", site), "c") == pytest.approx(clean, abs=1e-4)
    other = clip[::-1].copy()
    donor = PatchCondition("other audio", DEC, donor_audio=lambda cid, a: other)
    assert abs(patched_logprob(tiny, clip, text, donor, "c") - clean) > 1e-3


def test_capture_streams_the_forward_activations(tiny, clip, tmp_path) -> None:
    short = clip[:16_000]
    cap = capture(tiny, [("a", clip), ("b", short)], ["encoder.out"], tmp_path / "cap", batch_size=1)
    assert [c.rows for c in cap.clips] == [n_frames(len(clip), 1500), 50]
    assert cap.clips[0].audio_hash == audio_hash(clip)
    with torch.inference_mode():
        direct = tiny._encoder_states([short])[0, :50].numpy()
    rows = np.asarray(cap.array("encoder.out")[cap.clips[1].offset :])
    assert np.allclose(rows, direct, atol=1e-4)
    assert np.allclose(load_capture(tmp_path / "cap").pooled("encoder.out")[1], direct.mean(0), atol=1e-4)
    manifest = json.loads((tmp_path / "cap" / "manifest.json").read_text())
    assert manifest["model"]["key"] == tiny.identity().key and manifest["widths"] == {"encoder.out": 384}
    with pytest.raises(ConfigError, match="teacher-forced text"):
        capture(tiny, [("a", clip)], [DEC], tmp_path / "dec")


def test_steered_identity_carries_the_intervention(tiny) -> None:
    v = np.ones(384)
    a = SteeredBackend(tiny, [Intervention.induction([DEC], v, 1.0)]).identity().key
    assert a == SteeredBackend(tiny, [Intervention.induction([DEC], v, 1.0, label="x")]).identity().key
    assert a != SteeredBackend(tiny, [Intervention.induction([DEC], v, 2.0)]).identity().key
    assert a != tiny.identity().key


def test_multi_site_mean_ablation_sets_each_sites_projection_to_set_b(tiny, clip) -> None:
    rng = np.random.default_rng(4)
    dirs = [
        Direction(
            f"d{i}",
            site,
            rng.standard_normal(384),
            unit(rng.standard_normal(384))[None, :],
            {},
            rng.standard_normal(384),
        )
        for i, site in enumerate((ENC, DEC))
    ]
    arm = control_arms(dirs, "mean-ablate", n_random=1, seed=0)[0]
    got: dict = {}
    sink = lambda s, t: got.setdefault(s, []).append(t)  # noqa: E731
    # the recording hooks go on after the intervention's, so they see the edited outputs
    with torch.inference_mode(), intervene(tiny, arm.interventions), recording(tiny, [ENC, DEC], sink):
        tiny.score([clip], [""], ["he had then leisure"])
    for d in dirs:
        h = torch.cat(got[d.site], 1).double().numpy()[0]
        assert np.allclose(h @ d.basis[0], d.mean_b @ d.basis[0], atol=1e-3)
    assert _n_hooks(tiny) == 0


def test_clamp_on_the_real_decoder_caps_the_projection_and_keeps_the_rest(tiny, clip) -> None:
    rng = np.random.default_rng(5)
    u, center = unit(rng.standard_normal(384)), rng.standard_normal(384) * 0.1

    def run(ivs):
        got: dict = {}
        sink = lambda s, t: got.setdefault(s, []).append(t)  # noqa: E731
        with torch.inference_mode(), intervene(tiny, ivs), recording(tiny, [DEC], sink):
            tiny.score([clip], [""], ["he had then leisure"])
        return torch.cat(got[DEC], 1).double().numpy()[0]

    clean = run([])
    if ((clean[0] - center) @ u) > np.median((clean - center) @ u):
        u = -u  # orient so that the first position lies below the cap
    p = (clean - center) @ u
    limit = float(np.median(p))  # half the positions above the cap, half below
    h = run([Intervention.clamping([DEC], u[None, :], limit, center=center)])
    assert ((h - center) @ u).max() <= limit + 1e-4
    # the positions up to the first one above the cap are bit-identical (later ones see the edit through attention)
    first = int(np.argmax(p > limit))
    assert first > 0 and np.array_equal(h[:first], clean[:first])
    assert np.array_equal(run([Intervention.clamping([DEC], u[None, :], np.inf, center=center)]), clean)
    assert _n_hooks(tiny) == 0


def test_decoder_positions_edit_the_same_positions_teacher_forced_and_in_cached_decoding(tiny, clip) -> None:
    u = unit(np.random.default_rng(6).standard_normal(384))
    first = len(tiny.prompt) - 1  # the position whose output predicts the first text token
    site = "decoder.layers.3.out"  # the last layer: no later layer of this site feeds an edited position back

    def run(ivs, greedy: bool):
        got: list = []
        with torch.inference_mode(), intervene(tiny, ivs), recording(tiny, [site], lambda s, t: got.append(t)):
            if greedy:
                tiny.transcribe([clip])
            else:
                tiny.score([clip], [""], ["he had then leisure"])
        return [t.double().numpy()[0] for t in got]

    def at(p0: int, p1: int) -> Intervention:
        return Intervention.ablation([site], u[None, :], positions=(p0, p1))

    # teacher-forced: only positions [first, first + 2) are projected out, the rest bit-identical
    (clean,), (h,) = run([], False), run([at(first, first + 2)], False)
    assert np.abs(h[first : first + 2] @ u).max() < 1e-4 < np.abs(clean[first : first + 2] @ u).min()
    assert np.array_equal(h[:first], clean[:first]) and np.array_equal(h[first + 2 :], clean[first + 2 :])
    # a range covering every position is the unrestricted intervention, bit for bit
    (everywhere,) = run([Intervention.ablation([site], u[None, :])], False)
    assert np.array_equal(run([at(0, 10_000)], False)[0], everywhere)
    # cached greedy decoding: the prompt call, then one token a call; position first + 1 is the second call's
    g_clean, g = run([], True), run([at(first + 1, first + 2)], True)
    assert g_clean[0].shape[0] == len(tiny.prompt) and np.array_equal(g[0], g_clean[0])
    assert abs(float(g[1][0] @ u)) < 1e-4 < abs(float(g_clean[1][0] @ u))
    assert _n_hooks(tiny) == 0
    with pytest.raises(ConfigError, match="decoder sites only"):
        Intervention.ablation([ENC], u[None, :], positions=(0, 1))
    with pytest.raises(ConfigError, match="p0 < p1"):
        at(3, 3)
    assert Intervention.ablation([site], u[None, :]).key != at(0, 10_000).key


def test_the_gate_pre_pass_reads_the_prompt_end_of_an_unedited_pass(tiny, clip) -> None:
    site, first = "decoder.layers.2.out", len(tiny.prompt) - 1
    got: list = []
    with torch.inference_mode(), recording(tiny, [site], lambda s, t: got.append(t)):
        tiny.transcribe([clip])  # cached greedy decoding: its first call is the prompt
    h = prompt_activations(tiny, [clip, clip[:8000]], [site])[site]
    assert h.shape == (2, 384) and not np.allclose(h[0], h[1])
    assert np.allclose(h[0], got[0].double().numpy()[0, first], atol=1e-5)
    # an intervention active on the backend is not what the pre-pass of run_steer sees: it reads the
    # inner backend of a steered one
    u = unit(h[0])
    steered = SteeredBackend(tiny, [Intervention.ablation([site], u[None, :])])
    gate = Gate(site, tuple(u), (), 0.0)
    assert gate_scores(steered, [clip], gate)[0] == pytest.approx(float(h[0] @ u)) and _n_hooks(tiny) == 0


def test_edit_locus_scores_the_renderings_it_is_given(tiny, clip) -> None:
    from asr_audit.calib.truth import TruthItem
    from asr_audit.mechrun.patch import edit_locus, p_ref

    # the record says "then" where the speaker said nothing (spurious insertion at token 2)
    item = TruthItem("c", "s", 0, "spurious_insertion_in_reference", "adverb", "middle", 2, 3, 4, "then", "",
                     ("then",), ())  # fmt: skip
    cond = [PatchCondition("self", DEC)]
    record, faithful = "He had then leisure.", "He had leisure."
    written = edit_locus(tiny, [item], {"c": clip}, {"c": record}, cond, lambda it: (record, faithful))
    normalized = edit_locus(tiny, [item], {"c": clip}, {"c": record}, cond)
    want = p_ref(logprob(tiny, clip, record), logprob(tiny, clip, faithful))
    assert written.edits[0].p_full == pytest.approx(want, rel=1e-4)
    lower = p_ref(logprob(tiny, clip, "he had then leisure"), logprob(tiny, clip, "he had leisure"))
    assert normalized.edits[0].p_full == pytest.approx(lower, rel=1e-4)
    assert abs(math.log(lower) - math.log(want)) > 0.1  # the written renderings are another measurement
