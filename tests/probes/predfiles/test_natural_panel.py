"""The natural panel (issue 29): three panel models and a model under test outside the panel,
under the default leave-one-out. The outside model is scored by the whole panel (the paper's
public rule for a model under test); panel members, which leave-one-out cannot judge with two
voters, get no accept-ref and the reason."""

from __future__ import annotations

import pytest

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.refdis import RefdisParams, loo_members, loo_unscored, mine
from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
from asr_audit.probes.predfiles.refdis_run import run_normalizer, run_refdis

PANEL = ["whisper-base.en", "whisper-small.en", "distil-small.en"]
OUTSIDE = "whisper-tiny.en"


@pytest.fixture()
def vox(vox_dir):
    return load_predictions(vox_dir)


def test_an_outside_model_is_scored_by_the_whole_three_member_panel(vox) -> None:
    params = RefdisParams()  # anchor, leave-one-out
    result = run_refdis(vox, PANEL, params, models=[*PANEL, OUTSIDE], n_resamples=20)
    scores = {s.model: s for s in result.scores}
    assert scores[OUTSIDE].accept_ref.n > 0 and scores[OUTSIDE].reason is None
    # it is judged on every edit the three mined together (no edit is mined leave-one-out)
    assert result.mining.loo_edits == {}
    assert [e for e in result.mining.edits if OUTSIDE in e.scored] == list(result.mining.edits)
    for member in PANEL:
        assert scores[member].accept_ref.n == 0 and scores[member].in_panel
        assert scores[member].reason == loo_unscored(PANEL, params)
        assert scores[member].to_dict()["accept_ref"] is None


def test_the_same_mining_as_the_whole_panel_without_leave_one_out(vox) -> None:
    """The outside model's edits are those the whole panel mines, whatever the members' fate."""
    clips = prepare_clips(vox, [*PANEL, OUTSIDE], run_normalizer("whisper", "anchor"), True)
    loo = mine(clips, PANEL, [*PANEL, OUTSIDE], RefdisParams())
    full = mine(clips, PANEL, [*PANEL, OUTSIDE], RefdisParams(loo=False))
    assert [(e.clip_id, e.ref_indices, e.alt_text) for e in loo.edits] == [
        (e.clip_id, e.ref_indices, e.alt_text) for e in full.edits
    ]


def test_four_members_are_still_scored_leave_one_out() -> None:
    panel = [*PANEL, OUTSIDE]
    assert loo_unscored(panel, RefdisParams()) is None
    assert loo_members(panel, panel, RefdisParams()) == panel
    assert loo_members(PANEL, PANEL, RefdisParams()) == []


def test_a_run_that_scores_only_panel_members_is_still_refused(vox) -> None:
    with pytest.raises(ConfigError, match=r"name at least 4 panel members, name a model outside the panel"):
        run_refdis(vox, PANEL, RefdisParams(), models=PANEL, n_resamples=20)


def test_the_gate_judges_candidate_and_baseline_on_the_same_edits(vox) -> None:
    """Both outside a three-member panel: the gate runs; one of them inside it (no leave-one-out
    edits for it) would compare it on other edits than the other: refused."""
    from asr_audit.probes.predfiles.gate import run_gate

    result = run_gate(vox, OUTSIDE, "wav2vec2-base-960h", RefdisParams(), panel=PANEL)
    assert result.n_edits > 0
    with pytest.raises(ConfigError, match=r"'whisper-base.en' is a member of a panel of 3, too few to score it"):
        run_gate(vox, "whisper-base.en", OUTSIDE, RefdisParams(), panel=PANEL)
