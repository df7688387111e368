"""Forced continuation (EOS-ban): an honest Whisper does not write the hidden tail; a memorizer does."""

from __future__ import annotations

import dataclasses

import pytest

from asr_audit.errors import BackendError
from asr_audit.probes.audio.continuation import hidden_content_words, leaked_words, plan_cuts, run_continuation
from asr_audit.probes.core.models import LocalModel


@pytest.fixture(scope="module")
def two_clips(corpus):
    return dataclasses.replace(corpus, clips=tuple(c for c in corpus if c.id in ("slt-chair.flac", "slt-birds.flac")))


def test_cut_lies_between_the_kept_and_the_hidden_words(two_clips, store, aligner) -> None:
    from asr_audit.align.run import align_clip

    plans, failures = plan_cuts(two_clips, store, 3, aligner=aligner)
    assert not failures and len(plans) == 2
    for p in plans:
        clip = next(c for c in two_clips if c.id == p.clip_id)
        words = align_clip(aligner, clip, store).words
        k = len(words) - 3
        assert words[k - 1].end <= p.cut_s <= words[k].start
        assert len(p.samples) == round(p.cut_s * 16000)
        assert p.hidden == " ".join(clip.reference.split()[k:])


def test_honest_model_does_not_leak_but_the_memorizer_does(tiny_pt, copier, two_clips, store, aligner) -> None:
    out = run_continuation(
        [LocalModel.of(tiny_pt), LocalModel.of(copier)], two_clips, store, 3, extra_tokens=8, aligner=aligner
    )
    honest, fake = out["models"]
    assert honest["n"] == fake["n"] == 5  # old, wooden, chair + lake, yesterday ("the" is a function word)
    assert honest["k"] <= 1 and fake["leak_rate"] == 1.0 and fake["n_clips_leaking"] == 2
    for item in out["items"]:
        if item["model"] == tiny_pt.spec:
            assert item["forced"].startswith(item["plain"].rstrip(".").strip())
    plain = tiny_pt.transcribe([p.samples for p in plan_cuts(two_clips, store, 3, aligner=aligner)[0]])
    assert sorted(i["plain"] for i in out["items"] if i["model"] == tiny_pt.spec) == sorted(plain)


def test_hidden_words_and_leaks() -> None:
    words = hidden_content_words("We counted 64 birds on the", "lake yesterday birds.")
    assert words == ("lake", "yesterday")
    assert leaked_words(words, "we counted 64 birds on the lake lake lake") == ("lake",)


def test_backends_without_forced_decoding_are_refused(tiny_ct2, two_clips, store) -> None:
    with pytest.raises(BackendError, match="cannot decode with end-of-text banned"):
        run_continuation([LocalModel.of(tiny_ct2)], two_clips, store)


def test_leak_interval_counts_sentences_not_words(copier, two_clips, store, aligner) -> None:
    """Defect 10: the 5 hidden words of 2 clips are not 5 independent trials; a memorizer that leaks all
    of them is measured on 2 sentences (Wilson over 5 words claimed a lower bound of 0.57)."""
    from asr_audit.stats.intervals import wilson

    fake = run_continuation([LocalModel.of(copier)], two_clips, store, 3, extra_tokens=8, aligner=aligner)["models"][0]
    assert (fake["k"], fake["n"], fake["n_sentences"], fake["leak_rate"]) == (5, 5, 2, 1.0)
    assert fake["interval"] == "cluster-wilson"
    assert fake["ci_low"] == pytest.approx(wilson(2, 2).low) and fake["ci_low"] < wilson(5, 5).low
    assert fake["ci_high"] == 1.0
