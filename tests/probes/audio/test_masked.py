"""Masked-number recovery on real clips: an honest Whisper vs a reference-copying test double."""

from __future__ import annotations

import json

import numpy as np
import pytest

import asr_audit.cli.audio_probes  # noqa: F401 - registers masked / lift / continue on the app
from asr_audit.audio.io import audio_hash, load_audio
from asr_audit.errors import InputFileError
from asr_audit.probes.audio.masked import MaskParams, judge, plan_masks, read_recipes, target_present, write_recipes
from asr_audit.probes.core.models import LocalPool


def test_honest_whisper_hears_numbers_but_does_not_recover_them(masked_run) -> None:
    tiny = next(m for m in masked_run.models if m.model == "whisper-tiny.en")
    assert tiny.n_items == 5  # one number per TTS clip
    assert tiny.n >= 4, [i.to_dict() for i in masked_run.items if i.model == "whisper-tiny.en"]  # most unmasked right
    assert tiny.k <= 1 and tiny.accept_ref <= 0.25
    assert tiny.n + tiny.n_gated_out + tiny.n_failed == tiny.n_items
    assert 0.0 <= tiny.ci_low <= tiny.accept_ref <= tiny.ci_high <= 1.0


def test_reference_copier_recovers_every_masked_number(masked_run) -> None:
    fake = next(m for m in masked_run.models if m.model.startswith("test-double"))
    assert (fake.k, fake.n, fake.accept_ref) == (5, 5, 1.0)
    items = [i for i in masked_run.items if i.model == fake.model]
    assert all(i.masked_hyp and i.hidden_ref.split()[0] in i.masked_hyp for i in items)


def test_each_masked_clip_is_decoded_once(number_corpus, store, aligner, masked_run, copier) -> None:
    from asr_audit.probes.audio.masked import run_masked

    before = copier.calls
    again = run_masked(LocalPool.of([copier]), number_corpus, store, MaskParams(), aligner=aligner)
    assert copier.calls == before  # everything came from the store
    assert again.models[0].k == 5


def test_mask_span_is_zeroed_and_keeps_neighbouring_words(number_corpus, masked_run, store, aligner) -> None:
    from asr_audit.align.run import align_clip

    by_id = {c.id: c for c in number_corpus}
    for r in masked_run.recipes:
        x = load_audio(by_id[r.clip_id])
        y = r.apply(x)
        s0, s1 = r.provenance.measured[0]["span_samples"]
        assert (
            len(y) == len(x)
            and not y[s0:s1].any()
            and np.array_equal(y[:s0], x[:s0])
            and np.array_equal(y[s1:], x[s1:])
        )
        words = align_clip(aligner, by_id[r.clip_id], store).words
        assert r.t0 >= min(words[r.start - 1].end, words[r.start].start) - 1e-9
        assert r.t1 <= max(words[r.end].start, words[r.end - 1].end) + 1e-9
        # the mask covers the number itself: every aligned word of the hidden span is silenced
        assert r.t0 <= words[r.start].start + 1e-9 and r.t1 >= words[r.end - 1].end - 1e-9
        assert [w.word for w in words[r.start : r.end]] and r.hidden_ref.split()[0] in by_id[r.clip_id].reference
        n0, n1 = round(words[r.start].start * 16000), round(words[r.end - 1].end * 16000)
        assert s0 <= n0 and n1 <= s1 and not y[n0:n1].any()


def test_recipe_silences_the_whole_target_with_its_pad() -> None:
    """A recipe's span covers the target's aligned time, widened by the pad (not into the neighbours)."""
    from asr_audit.probes.audio.masked import make_recipe
    from asr_audit.probes.audio.targets import Target

    x = np.ones(3 * 16000, dtype=np.float32)
    t = Target("c", "number", 2, 4, "45 dollars", 1.0, 1.5, prev_end=0.98, next_start=1.6)
    r, y = make_recipe("c", x, t, "silence", pad=0.05)
    assert r.t0 <= 1.0 and r.t1 >= 1.5  # the number itself
    assert r.t0 >= 0.98 - 1e-9 and r.t1 <= 1.6 + 1e-9  # not the neighbouring words
    assert not y[16000:24000].any() and y[: int(0.97 * 16000)].all() and y[int(1.61 * 16000) :].all()
    assert r.t1 == pytest.approx(1.55)


@pytest.mark.parametrize("method", ["silence", "noise", "cut"])
def test_recipes_export_and_reapply_byte_for_byte(method, number_corpus, store, aligner, tmp_path) -> None:
    plan = plan_masks(number_corpus, store, MaskParams(method=method, seed=3), aligner=aligner)
    assert len(plan.recipes) == 5
    path = write_recipes(tmp_path / "recipes.jsonl", plan.recipes)
    back = read_recipes(path)
    assert back == list(plan.recipes)
    again = plan_masks(number_corpus, store, MaskParams(), recipes=back)
    for r in back:
        assert audio_hash(again.masked[r.item_id]) == audio_hash(plan.masked[r.item_id]) == r.provenance.output_hash
    if method == "cut":
        r = back[0]
        assert len(plan.masked[r.item_id]) < len(load_audio(next(c for c in number_corpus if c.id == r.clip_id)))


def test_recipes_refuse_other_audio_and_bad_files(masked_run, tmp_path) -> None:
    r = masked_run.recipes[0]
    with pytest.raises(Exception, match="differs from the recorded one"):
        r.apply(np.zeros(16000, dtype=np.float32))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(r.to_dict()) + "\n{not json\n")
    with pytest.raises(InputFileError, match=r"bad\.jsonl:2: invalid JSON"):
        read_recipes(bad)


def test_judging_rules() -> None:
    ref = "We paid 45 dollars for the chair"
    assert target_present(ref, 2, 4, "we paid forty-five dollars for the chair")
    assert not target_present(ref, 2, 4, "we paid for the chair 45")  # not at the aligned position
    r = type(
        "R",
        (),
        {
            "clip_id": "c",
            "item_id": "c__m",
            "hidden_ref": "45 dollars",
            "method": "silence",
            "t0": 1.0,
            "t1": 1.5,
            "start": 2,
            "end": 4,
        },
    )()
    gated = judge("m", r, ref, "we paid 54 dollars for the chair", "we paid 45 dollars for the chair", 0.3)
    assert (gated.eligible, gated.recovered, gated.reason) == (False, False, "target_missed")
    noisy = judge("m", r, ref, "they played 45 dollars on a hair", "x", 0.3)
    assert noisy.reason == "wer_above_gate"
    ok = judge("m", r, ref, ref, "we paid $45 for the chair", 0.3)
    assert (ok.eligible, ok.recovered) == (True, True)
    failed = judge("m", r, ref, None, None, 0.3, "audio is empty")
    assert failed.reason.startswith("failed")


def test_masked_cli_json_and_recipes(run_cli, store_path, masked_run, tmp_path) -> None:
    from audio_probe_paths import MANIFEST

    out, recipes = tmp_path / "masked.json", tmp_path / "recipes.jsonl"
    code, stdout, err = run_cli(
        "masked",
        "--model",
        "whisper-tiny.en",
        "--corpus",
        MANIFEST,
        "--store",
        store_path,
        "--recipes-out",
        recipes,
        "--json",
        out,
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    m = data["models"][0]
    assert {"accept_ref", "n", "ci_low", "ci_high"} <= set(m) and m["n_items"] == 5
    assert {i["clip_id"] for i in data["items"]} >= {"slt-bridge.flac", "slt-chair.flac"}
    assert data["rejected_candidates"] == {}
    code, _, err = run_cli(
        "masked",
        "--model",
        "whisper-tiny.en",
        "--corpus",
        MANIFEST,
        "--store",
        store_path,
        "--recipes-in",
        recipes,
        "--json",
        tmp_path / "again.json",
    )
    assert code == 0, err
    assert json.loads((tmp_path / "again.json").read_text())["models"] == data["models"]
    code, _, err = run_cli("masked", "--model", "whisper-tiny.en", "--corpus", MANIFEST, "--method", "blur")
    assert code == 2 and "valid: silence, noise, cut" in err and "Traceback" not in err


def _noisy(corpus):
    """The clips under the battery's ``noise:10db`` (same ids), as the battery realizes them."""
    import dataclasses

    from asr_audit.probes.battery.conditions import ConditionContext, parse_condition, realize

    ctx = ConditionContext(clips=corpus.clips, seed=0)
    cond = parse_condition("noise:10db")
    return (
        dataclasses.replace(
            corpus, clips=tuple(dataclasses.replace(realize(cond, c, ctx).clip, id=c.id) for c in corpus.clips)
        ),
        ctx,
        cond,
    )


def test_noisy_audio_is_masked_at_the_clean_audio_times(number_corpus, store, aligner) -> None:
    """Defect 9: aligned on the clean TTS audio, the noisy clips get the same targets at the same times,
    and the mask zeroes exactly that span of the noisy audio."""
    noisy, _, _ = _noisy(number_corpus)
    clean = plan_masks(number_corpus, store, MaskParams(), aligner=aligner)
    plan = plan_masks(noisy, store, MaskParams(), aligner=aligner, timing=number_corpus)
    key = lambda r: (r.clip_id, r.start, r.end, r.t0, r.t1)  # noqa: E731
    assert len(clean.recipes) == 5 and sorted(map(key, plan.recipes)) == sorted(map(key, clean.recipes))
    by_id = {c.id: c for c in noisy}
    for r in plan.recipes:
        x = load_audio(by_id[r.clip_id])
        y = plan.masked[r.item_id]
        s0, s1 = r.provenance.measured[0]["span_samples"]
        assert r.provenance.source_hash == audio_hash(x)  # the recipe replays on the noisy audio
        assert not y[s0:s1].any() and np.array_equal(y[:s0], x[:s0]) and np.array_equal(y[s1:], x[s1:])
    # a clip whose "timing" audio has another length is refused, not masked at the wrong times
    import dataclasses

    from asr_audit.corpus.clips import ArraySource

    c0 = number_corpus.clips[0]
    longer = dataclasses.replace(
        c0, audio_path=None, source=ArraySource(np.r_[load_audio(c0), np.zeros(1600, np.float32)], 16000, "padded")
    )
    bad = plan_masks(
        dataclasses.replace(noisy, clips=noisy.clips[:1]),
        store,
        MaskParams(),
        aligner=aligner,
        timing=dataclasses.replace(number_corpus, clips=(longer,)),
    )
    assert not bad.recipes and "moved time" in bad.failures[0][1]


def _masked_battery(corpus, pool, store, cond):
    """The battery's masked measure under ``cond`` (and the original audio) with the pool's ``reader``."""
    from asr_audit.probes.battery.battery import BatteryOptions, run_battery
    from asr_audit.probes.battery.conditions import parse_conditions

    options = BatteryOptions(measure="masked", conditions=parse_conditions([cond.name]), models=("reader",))
    return run_battery(pool, corpus, store, options)


def test_battery_masked_noise_condition_judges_items(number_corpus, store) -> None:
    """Defect 9 through the battery: under noise:10db the masked measure judged n = 0 items because
    PocketSphinx aligned the noisy audio; a model that reads the noisy clips is now judged on all five."""
    pytest.importorskip("pocketsphinx")
    from probe_fakes import ReferenceCopier

    noisy, _, cond = _noisy(number_corpus)
    reader = ReferenceCopier([(load_audio(c), c.reference) for c in noisy], spec="test-double:noisy-reader")
    res = _masked_battery(number_corpus, LocalPool.of({"reader": reader}), store, cond)
    failures = [f for f in res.failures if f["condition"] == cond.name]
    assert len(res.items[cond.name]["reader"]) == 5 and set(res.items[cond.name]["reader"].values()) == {1}, failures
    assert not failures


def test_battery_masked_measure_through_a_pool_elsewhere_matches_local(number_corpus, store, tmp_path) -> None:
    """Where the pool runs its models elsewhere, the degraded clips and the masked ones travel as
    recipes (a mask over a noise recipe); the judged items are the local ones, and no model is loaded
    on the driver."""
    pytest.importorskip("pocketsphinx")
    from probe_fakes import ReferenceCopier
    from test_runner_report import _TravellingPool

    from asr_audit.probes.battery.recipe import is_recipe

    noisy, _, cond = _noisy(number_corpus)
    reader = ReferenceCopier([(load_audio(c), c.reference) for c in noisy], spec="test-double:noisy-reader")
    local = _masked_battery(number_corpus, LocalPool.of({"reader": reader}), store, cond)
    sent: list = []
    got = _masked_battery(number_corpus, _TravellingPool({"reader": reader}, sent, tmp_path), store, cond)
    assert got == local and len(local.items[cond.name]["reader"]) == 5
    # the original audio, the original condition's masked clips, then the noise condition's in one call
    assert len(sent) == 3 and len(sent[-1]) == 10 and all(is_recipe(c) for c in sent[-1])
    masks = [c for c in sent[-1] if "__mask-" in c.id]
    assert len(masks) == 5 and all(is_recipe(c.source.clip) for c in masks)  # the mask's source: the noise recipe
