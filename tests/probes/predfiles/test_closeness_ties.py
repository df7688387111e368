"""The closeness verdict's bias toward "ref" (issue 25, item 4): ties go toward agreement and an edit
is judged on its own span, so a model that writes what the panel majority wrote is never "ref"."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.probes.predfiles.refdis import REF, ClipInput, mine, mine_clip, preset_params
from asr_audit.probes.predfiles.refdis_columns import OpsJudge
from asr_audit.text.align import AlignmentCache

REF_TEXT = "the government just published a new public service announcement ad"
TESTED = "the government is published a new public service announcement"
PANEL_TEXTS = (
    "the arena just published a new pope service nouncement",
    "the government has published a new public service announcement",
    "the government just but please a new public service announcement at",
)
PANEL = ["p1", "p2", "p3"]


def _clip() -> ClipInput:
    hyps = {p: tuple(t.split()) for p, t in zip(PANEL, PANEL_TEXTS)}
    return ClipInput("gov", tuple(REF_TEXT.split()), {**hyps, "tested": tuple(TESTED.split())})


def _ad_edit(params):
    edits = mine_clip(_clip(), PANEL, ["tested"], params, AlignmentCache())
    (edit,) = [e for e in edits if e.ref_tokens == ("ad",)]
    return edit


def test_the_issues_clip_is_not_ref() -> None:
    """The tested model omits "ad" as every panel member does; the three renderings tie, and the
    first member's garble ("announcement ad" -> "nouncement") used to win and make it "ref"."""
    edit = _ad_edit(preset_params("paper", loo=False, min_panel=3))
    assert edit.verdicts["tested"] != REF
    assert edit.alt_text == ""  # the tie goes to a rendering of the run alone (p2 dropped "ad")
    assert edit.correction is None


def test_the_public_codes_rule_keeps_the_first_seen_rendering() -> None:
    """``--preset anchor --no-loo`` keeps the public code's edit for edit: the first seen of the
    tied renderings, whose correction reaches past the run."""
    edit = _ad_edit(preset_params("anchor", loo=False, min_panel=3))
    assert edit.alt_text == "nouncement"
    assert edit.correction is not None and edit.correction[:2] == (8, 10)


def test_the_columnar_judge_agrees() -> None:
    params = preset_params("paper", loo=False, min_panel=3)
    judge = OpsJudge(["tested"], params)
    cache = AlignmentCache()
    edits = mine_clip(_clip(), PANEL, ["tested"], params, cache, judge=judge)
    judge.settle(lambda m, c: cache.pair_opcodes(c.ref, c.hyps[m]))
    assert [e.verdicts["tested"] for e in edits] == [e.verdicts["tested"] for e in [_ad_edit(params)]]


VOCAB = ["madam", "president", "thank", "you", "we", "agree", "the", "commission", "announcement", "ad", "at", "a"]


@st.composite
def majority_worlds(draw) -> tuple[ClipInput, list[str], int]:
    """A clip whose panel majority (at least the mining threshold, more than half) wrote one
    hypothesis and the rest (listed first: the first member's garble is what used to win a tie)
    their own garbles of it or of the reference; the tested model wrote what the majority wrote."""
    ref = draw(st.lists(st.sampled_from(VOCAB), min_size=2, max_size=9))
    majority = list(ref)
    for _ in range(draw(st.integers(1, 3))):  # the majority's own departures from the reference
        op = draw(st.sampled_from(["drop", "change", "insert"]))
        i = draw(st.integers(0, max(0, len(majority) - 1)))
        if op == "drop" and len(majority) > 1:
            majority.pop(i)
        elif op == "change" and majority:
            majority[i] = draw(st.sampled_from(VOCAB))
        else:
            majority.insert(i, draw(st.sampled_from(VOCAB)))
    n_panel = draw(st.integers(4, 6))
    threshold = max(2, -(-3 * n_panel // 4))  # the paper preset's majority 0.75
    n_major = draw(st.integers(max(threshold, n_panel // 2 + 1), n_panel - 1))
    panel = [f"p{k}" for k in range(n_panel)]
    hyps: dict[str, tuple[str, ...] | None] = {}
    for p in panel[: n_panel - n_major]:  # the minority: garbles, often next to the majority's edits
        base = list(draw(st.sampled_from([majority, majority, ref])))
        for _ in range(draw(st.integers(1, 2))):
            i = draw(st.integers(0, max(0, len(base) - 1)))
            if len(base) > 1 and draw(st.booleans()):
                base.pop(i)
            elif base:
                base[i] = draw(st.sampled_from(VOCAB))
        hyps[p] = tuple(base)
    for p in panel[n_panel - n_major :]:
        hyps[p] = tuple(majority)
    hyps["tested"] = tuple(majority)
    return ClipInput("c", tuple(ref), hyps), panel, n_major


@given(majority_worlds(), st.sampled_from(["paper", "anchor"]))
@settings(max_examples=400, deadline=None)
def test_writing_what_the_panel_majority_wrote_is_never_ref(world, preset: str) -> None:
    clip, panel, _ = world
    params = preset_params(preset, loo=True, min_panel=3, min_ref_match=0.0)
    mining = mine([clip], panel, ["tested"], params)
    for e in mining.edits:
        assert e.verdicts["tested"] != REF, (e.kind, e.ref_indices, e.alt_text, e.correction, clip)
