"""Hypothesis invariants of mining and scoring."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.probes.predfiles.refdis import REF, ClipInput, RefdisParams, mine

VOCAB = ["madam", "president", "thank", "you", "we", "agree", "the", "commission", "eu", "rules", "5", "today"]
PANEL = ["p1", "p2", "p3", "p4"]


@st.composite
def clips(draw) -> list[ClipInput]:
    out = []
    for ci in range(draw(st.integers(1, 6))):
        ref = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=10))
        spoken = list(ref)
        if draw(st.booleans()):
            spoken = spoken[draw(st.integers(0, min(2, len(spoken)))) :]  # spurious opener in the reference
        if draw(st.booleans()):
            spoken = ["thank", "you", *spoken]  # omitted opener
        if draw(st.booleans()) and spoken:
            spoken[-1] = draw(st.sampled_from(VOCAB))
        hyps: dict[str, tuple[str, ...] | None] = {}
        for m in PANEL:
            h = list(spoken)
            if draw(st.integers(0, 4)) == 0 and h:
                h.pop(draw(st.integers(0, len(h) - 1)))
            hyps[m] = tuple(h)
        hyps["copier"] = tuple(ref)
        hyps["mimic"] = hyps["p2"]
        out.append(ClipInput(f"c{ci}", tuple(ref), hyps))
    return out


PARAMS = st.builds(
    RefdisParams,
    majority=st.sampled_from([0.5, 0.75, 0.8, 1.0]),
    include_middle=st.booleans(),
    min_consensus_cer=st.sampled_from([0.0, 0.3]),
    loo=st.booleans(),
)
MODELS = [*PANEL, "copier", "mimic"]


@given(clips(), PARAMS)
@settings(max_examples=150, deadline=None)
def test_reference_copier_scores_ref_wherever_eligible(cs: list[ClipInput], params: RefdisParams) -> None:
    mining = mine(cs, PANEL, MODELS, params)
    for e in mining.edits:
        assert e.verdicts["copier"] == REF  # it copies the reference, so it is always eligible


@given(clips(), PARAMS)
@settings(max_examples=150, deadline=None)
def test_copying_a_panel_member_agrees_with_it(cs: list[ClipInput], params: RefdisParams) -> None:
    for e in mine(cs, PANEL, MODELS, params).edits:
        assert e.verdicts["mimic"] == e.verdicts["p2"]


@given(clips(), PARAMS, st.randoms(use_true_random=False))
@settings(max_examples=100, deadline=None)
def test_model_order_changes_nothing(cs: list[ClipInput], params: RefdisParams, rnd: random.Random) -> None:
    shuffled = list(MODELS)
    rnd.shuffle(shuffled)
    a, b = mine(cs, PANEL, MODELS, params), mine(cs, PANEL, shuffled, params)
    assert [(e.clip_id, e.kind, e.ref_indices, e.alt_text, dict(e.verdicts)) for e in a.edits] == [
        (e.clip_id, e.kind, e.ref_indices, e.alt_text, dict(e.verdicts)) for e in b.edits
    ]
    assert {m: [dict(e.verdicts) for e in v] for m, v in a.loo_edits.items()} == {
        m: [dict(e.verdicts) for e in v] for m, v in b.loo_edits.items()
    }
