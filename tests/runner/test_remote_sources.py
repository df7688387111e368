"""What the lift and continuation probes' rows name, and what the Ray executor sends a worker for them
(no Ray here): each masked clip as the recipe of its original and its mask, each continuation cut as
a truncation recipe, an unmasked clip as its path; built where they are read, they give the
driver's samples bit for bit (the worker checks the hash; a mismatch would ship the samples instead)."""

from __future__ import annotations

import pytest
import ray_backends as rb

from asr_audit.audio.io import audio_hash, load_audio
from asr_audit.corpus.spec import load_corpus
from asr_audit.probes.audio.continuation import cut_clips
from asr_audit.probes.audio.lift import span_clips
from asr_audit.probes.battery.recipe import built, is_recipe
from asr_audit.probes.core.models import row_audio
from asr_audit.runner.ray_exec import _travel
from asr_audit.store.sqlite import open_store


def test_masked_spans_and_continuation_cuts_travel_as_recipes_that_rebuild_the_driver_s_audio(tmp_path) -> None:
    pytest.importorskip("pocketsphinx")
    from asr_audit.align import get_aligner
    from asr_audit.probes.audio.continuation import plan_cuts
    from asr_audit.probes.audio.masked import MaskParams, plan_masks
    from asr_audit.probes.audio.targets import TargetRule

    corpus = load_corpus(str(rb.build_world(tmp_path)))
    aligner = get_aligner("sphinx")
    with open_store(tmp_path / "s.sqlite") as store:
        plan = plan_masks(
            corpus, store, MaskParams(rule=TargetRule(kind="word"), method="noise", seed=3), aligner=aligner
        )
        cuts, _ = plan_cuts(corpus, store, 2, aligner=aligner)
    first = corpus.clips[0]
    audio = {**plan.masked, first.id: load_audio(first)}
    held = span_clips(corpus, audio, plan.recipes)
    sources = {k: _travel(c) for k, c in held.items()}
    assert plan.recipes and cuts
    for r in plan.recipes:
        assert audio_hash(row_audio(held[r.item_id])) == audio_hash(plan.masked[r.item_id])  # held here
        assert is_recipe(sources[r.item_id])
        assert audio_hash(row_audio(built(sources[r.item_id]))) == audio_hash(plan.masked[r.item_id])
    assert sources[first.id].audio_path == first.audio_path  # an unmasked clip travels as its path
    for cid, clip in cut_clips(corpus, cuts).items():
        want = next(p.samples for p in cuts if p.clip_id == cid)
        assert is_recipe(_travel(clip)) and audio_hash(row_audio(built(_travel(clip)))) == audio_hash(want)
