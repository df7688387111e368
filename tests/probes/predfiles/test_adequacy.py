"""Panel adequacy: WER outside the mined edits, replacement agreement, and the warnings."""

from __future__ import annotations

from typing import Any

from asr_audit.probes.predfiles.adequacy import agreeing, outside_counts
from asr_audit.probes.predfiles.refdis import ClipInput, Mining, RefdisParams, mine, preset_params
from asr_audit.probes.predfiles.refdis_run import score_mining
from asr_audit.text.align import AlignmentCache, align


def _counts(ref: str, hyp: str, inside: set[int], anchors: tuple[int, ...] = ()) -> tuple[int, int]:
    r, h = tuple(ref.split()), tuple(hyp.split())
    return outside_counts(len(r), align(r, h).opcodes, inside, set(anchors))


def test_outside_counts_leave_the_edits_out() -> None:
    # the edit covers "madam president"; the model's own error is "agree" -> "agreed"
    assert _counts("madam president we agree", "we agreed", {0, 1}) == (1, 2)
    # an insertion at an edit's anchor belongs to the edit; one elsewhere is an error
    assert _counts("we agree", "thank you we agree", set(), (0,)) == (0, 2)
    assert _counts("we agree today", "we really agree today", set(), (0,)) == (1, 3)
    # a replacement that meets the edit counts only the reference words outside it
    assert _counts("public service announcement ad", "public service nouncement", {3}) == (1, 3)
    # no hypothesis: every word outside the edits is missed
    assert outside_counts(4, None, {3}, set()) == (3, 3)


def _run(clips: list[ClipInput], panel: list[str], models: list[str], params: RefdisParams) -> tuple[Mining, dict]:
    """Mine and score ``clips`` as a run does (its result's ``to_dict``)."""
    cache = AlignmentCache()
    mining = mine(clips, panel, models, params, cache)
    fixed: dict[str, Any] = {
        "normalizer": {"name": "basic"},
        "mode": "panel",
        "source": "-",
        "seed": 0,
        "n_resamples": 10,
    }
    result = score_mining(
        clips, mining, models=models, panel=panel, params=params, cache=cache, merge_compounds=False, **fixed
    )
    return mining, result.to_dict()


def _clip(i: int, panel_text: str, listener: str, ref: str = "madam president we agree on the rules") -> ClipInput:
    panel = {f"p{k}": tuple(panel_text.split()) for k in range(4)}
    return ClipInput(f"c{i}", tuple(ref.split()), {**panel, "listener": tuple(listener.split())})


def test_a_listener_better_than_the_panel_is_warned_about() -> None:
    """The panel mishears the opener on every clip and garbles a word of its own; the listener
    writes the reference: it is more accurate than the panel outside the edits."""
    ref = "madam president we agree on the rules"
    clips = [_clip(i, "adam resident we agree on the mules", ref) for i in range(12)]
    panel = [f"p{k}" for k in range(4)]
    params = preset_params("paper", loo=False)
    mining, result = _run(clips, panel, ["listener", *panel], params)
    by = {m["model"]: m for m in result["models"]}
    assert by["listener"]["wer_outside"] == 0.0 and by["listener"]["hears_better_than_panel"]
    assert by["p0"]["wer_outside"] > 0  # "mules": outside every edit (not mined: interior, p-only)
    assert any(w.startswith("listener is more accurate") for w in result["panel_adequacy"]["warnings"])
    assert all(agreeing(e) for e in mining.edits)  # the whole panel wrote the same


def test_disagreeing_panels_are_warned_about() -> None:
    """Every member writes a different word for the opener: no replacement agreement."""
    words = ["adam", "madman", "atom", "add"]
    clips = [
        ClipInput(
            f"c{i}",
            ("madam", "we", "agree"),
            {**{f"p{k}": (w, "we", "agree") for k, w in enumerate(words)}, "m": ("madam", "we", "agree")},
        )
        for i in range(12)
    ]
    panel = [f"p{k}" for k in range(4)]
    params = preset_params("paper", loo=False, min_consensus_cer=0.0)
    mining, result = _run(clips, panel, ["m"], params)
    assert mining.edits and not any(agreeing(e) for e in mining.edits)
    assert result["panel_adequacy"]["agreement"]["k"] == 0
    assert any("two panel members agreeing" in w for w in result["panel_adequacy"]["warnings"])
    assert result["models"][0]["edit_agreement"] == 0.0
