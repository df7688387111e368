"""Consensus mining semantics on hand-built clips (see docs/refdis.md)."""

from __future__ import annotations

from asr_audit.probes.predfiles.inflation import apply_edits
from asr_audit.probes.predfiles.refdis import (
    CONSENSUS,
    DELETION,
    INSERTION,
    REF,
    SUBSTITUTION,
    ClipInput,
    RefdisParams,
    mine,
    preset_params,
)

PANEL = ["p1", "p2", "p3", "p4"]


def clip(cid: str, ref: str, **hyps: str | None) -> ClipInput:
    return ClipInput(cid, tuple(ref.split()), {m: None if h is None else tuple(h.split()) for m, h in hyps.items()})


def honest(text: str, copy_text: str | None = None, **extra: str | None) -> dict[str, str | None]:
    out: dict[str, str | None] = dict.fromkeys(PANEL, text)
    if copy_text is not None:
        out["copier"] = copy_text
    out.update(extra)
    return out


NO_LOO = RefdisParams(loo=False)


def test_spurious_opener_is_a_deletion_and_copier_scores_ref() -> None:
    c = clip(
        "c1",
        "madam president we agree on this point",
        **honest("we agree on this point", "madam president we agree on this point"),
    )
    (e,) = mine([c], PANEL, [*PANEL, "copier"], NO_LOO).edits
    assert (e.kind, e.position, e.ref_tokens, e.ref_indices) == (DELETION, "start", ("madam", "president"), (0, 1))
    assert e.verdicts["copier"] == REF and all(e.verdicts[m] == CONSENSUS for m in PANEL)
    assert (e.n_panel_agree, e.n_panel, e.alt_text) == (4, 4, "")


def test_omitted_opener_is_an_insertion() -> None:
    c = clip("c2", "we agree on this point", **honest("thank you we agree on this point", "we agree on this point"))
    (e,) = mine([c], PANEL, [*PANEL, "copier"], NO_LOO).edits
    assert (e.kind, e.position, e.alt_text, e.ref_indices) == (INSERTION, "start", "thank you", (0,))
    assert e.verdicts["copier"] == REF and e.verdicts["p1"] == CONSENSUS


def test_substitution_keeps_the_panel_rendering() -> None:
    c = clip("c3", "we agree on the weapons today", **honest("we agree on their arms today"))
    mining = mine([c], PANEL, PANEL, RefdisParams(loo=False, include_middle=True))
    (e,) = mining.edits
    assert (e.kind, e.ref_tokens, e.alt_text, e.position) == (SUBSTITUTION, ("the", "weapons"), "their arms", "middle")
    # anchor keeps boundary runs only
    assert mine([c], PANEL, PANEL, NO_LOO).edits == ()


def test_character_close_alternatives_are_dropped() -> None:
    c = clip("c4", "e u rules apply here today", **honest("eu rules apply here today"))
    assert mine([c], PANEL, PANEL, NO_LOO).edits == ()
    assert len(mine([c], PANEL, PANEL, RefdisParams(loo=False, min_consensus_cer=0.0)).edits) == 1


def test_majority_threshold_and_min_panel() -> None:
    # 3 of 4 drop the opener: threshold at 0.8 of 4 is 4 -> no edit; at 0.75 it is 3 -> edit
    hyps = honest("we agree on this point", p4="madam we agree on this point")
    c = clip("c5", "madam we agree on this point", **hyps)
    assert mine([c], PANEL, PANEL, NO_LOO).edits == ()
    (e,) = mine([c], PANEL, PANEL, RefdisParams(loo=False, majority=0.75)).edits
    assert e.n_panel_agree == 3 and e.verdicts["p4"] == REF
    # fewer than min_panel hypotheses present -> clip skipped
    c2 = clip("c6", "madam we agree on this point", p1="we agree on this point", p2="we agree on this point")
    assert mine([c2], PANEL, PANEL, NO_LOO).edits == ()


def test_ineligible_models_get_no_verdict() -> None:
    c = clip(
        "c7", "madam president we agree on this point", **honest("we agree on this point", bad="nothing alike at all")
    )
    (e,) = mine([c], PANEL, ["bad", "missing"], NO_LOO).edits
    assert e.verdicts == {"bad": None, "missing": None}


def test_leave_one_out_lets_a_panel_member_score_ref() -> None:
    # p4 copies the reference; the other three agree -> full panel (threshold 4) mines nothing,
    # but p4's leave-one-out panel (p1..p3, threshold 3) does, and p4 reproduced the reference.
    hyps = honest("we agree on this point", p4="madam president we agree on this point")
    c = clip("c8", "madam president we agree on this point", **hyps)
    mining = mine([c], PANEL, PANEL, RefdisParams(loo=True))
    assert mining.edits == ()
    (e,) = mining.loo_edits["p4"]
    assert e.verdicts == {"p4": REF} and e.miners == ("p1", "p2", "p3") and e.scored == ("p4",)
    assert mining.scored_edits("p4") == [e]
    assert mine([c], PANEL, PANEL, RefdisParams(loo=False)).scored_edits("p4") == []


def test_presets() -> None:
    assert preset_params("anchor").majority == 0.8 and not preset_params("anchor").include_middle
    p = preset_params("paper", min_panel=2)
    assert (p.majority, p.include_middle, p.min_panel) == (0.75, True, 2)


def test_apply_edits_corrects_reference() -> None:
    c = clip("c9", "madam president we agree", **honest("thank you we agree"))
    mining = mine([c], PANEL, PANEL, NO_LOO)
    assert apply_edits(c.ref, mining.edits) == ("thank", "you", "we", "agree")
