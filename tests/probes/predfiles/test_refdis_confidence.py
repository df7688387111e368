"""Per-edit confidence of the consensus miner (issue 13, section 3): the function, the evidence the
miner records, the ``min_confidence`` operating point (options record, CLI flag, spec field) and
the JSON field; the anchor preset keeps every edit unless the user asks otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asr_audit.errors import ConfigError
from asr_audit.options import Surface
from asr_audit.probes.predfiles.refdis import (
    INSERTION,
    SUBSTITUTION,
    ClipInput,
    mine,
    mine_clip,
    preset_params,
    with_repeats,
)
from asr_audit.probes.predfiles.refdis_confidence import (
    DEFAULT_MIN_CONFIDENCE,
    EditEvidence,
    distance_score,
    edit_confidence,
)
from asr_audit.probes.predfiles.refdis_options import RefdisOptions
from asr_audit.text.align import AlignmentCache

VOXPOPULI = Path(__file__).parents[2] / "fixtures" / "voxpopuli"
VOX_PANEL = "wav2vec2-base-960h,whisper-tiny.en,whisper-base.en,whisper-small.en"
PANEL = ("a", "b", "c")


def _clip(ref: str, *hyps: str, clip_id: str = "c1") -> ClipInput:
    return ClipInput(clip_id, tuple(ref.split()), {m: tuple(h.split()) for m, h in zip(PANEL, hyps)})


# --------------------------------------------------------------------------- the function


def test_a_unanimous_far_correction_is_certain_and_each_failed_trace_lowers_it() -> None:
    sure = EditEvidence(votes=1.0, agreement=1.0, consensus_cer=1.0)
    assert edit_confidence(sure) == 1.0
    # each trace of a shared mishearing, alone, lowers the confidence
    for weaker in (
        EditEvidence(votes=2 / 3, agreement=1.0, consensus_cer=1.0),
        EditEvidence(votes=1.0, agreement=1 / 3, consensus_cer=1.0),
        EditEvidence(votes=1.0, agreement=1.0, consensus_cer=0.35),
        EditEvidence(votes=1.0, agreement=1.0, consensus_cer=1.0, repeat=0.5),
    ):
        assert edit_confidence(weaker) < edit_confidence(sure)
    # a reference read once carries no repeat evidence: the same as a repeat on every reading
    assert edit_confidence(EditEvidence(1.0, 1.0, 0.9, repeat=None)) == edit_confidence(
        EditEvidence(1.0, 1.0, 0.9, 1.0)
    )
    # monotone in the distance, saturating at FAR_CER; an insertion has no span and counts as far
    assert distance_score(0.3) < distance_score(0.5) < distance_score(0.9) == distance_score(None) == 1.0
    assert 0 < DEFAULT_MIN_CONFIDENCE < 1


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_confidence_stays_in_the_unit_interval(bad: float) -> None:
    assert 0.0 <= edit_confidence(EditEvidence(votes=1.0, agreement=1.0, consensus_cer=bad)) <= 1.0


# --------------------------------------------------------------------------- the evidence the miner records


def test_a_shared_mishearing_gets_less_confidence_than_a_spurious_phrase() -> None:
    """Every member misses "cut", each writing another word (a near-miss); nobody says "madam president"."""
    clip = _clip(
        "madam president we must cut costs now",
        "we must cup costs now",
        "we must cap costs now",
        "we must cot costs now",
    )
    edits = mine_clip(clip, PANEL, PANEL, preset_params("paper", loo=False), AlignmentCache())
    by_ref = {" ".join(e.ref_tokens): e for e in edits}
    spurious, misheard = by_ref["madam president"], by_ref["cut"]
    assert spurious.evidence == EditEvidence(votes=1.0, agreement=1.0, consensus_cer=1.0)
    assert spurious.confidence == 1.0
    assert misheard.kind == SUBSTITUTION
    assert misheard.evidence is not None
    assert (misheard.evidence.votes, round(misheard.evidence.agreement, 3)) == (1.0, 0.333)
    assert misheard.confidence is not None and misheard.confidence < DEFAULT_MIN_CONFIDENCE


def test_an_insertion_counts_the_members_that_emit_its_chunk() -> None:
    """Lists that differ beyond the chunk still agree on it; a member without it lowers the confidence."""
    panel = ("a", "b", "c", "d")
    hyps = ("thank you we must act", "and thank you we must act", "so thank you we must act", "we must act")
    clip = ClipInput("c1", ("we", "must", "act"), {m: tuple(h.split()) for m, h in zip(panel, hyps)})
    (edit,) = mine_clip(clip, panel, panel, preset_params("paper", loo=False), AlignmentCache())
    assert edit.kind == INSERTION and edit.alt_text == "thank you"
    assert edit.evidence == EditEvidence(votes=0.75, agreement=0.75, consensus_cer=None)
    assert edit.confidence == 0.562


def test_repeat_is_the_share_of_readings_of_a_reference_with_an_edit_at_the_same_place() -> None:
    ref = "madam president we must act now"
    clips = [
        _clip(ref, *["we must act now"] * 3, clip_id="s1-v1"),  # the opener deleted
        _clip(ref, *[ref] * 3, clip_id="s1-v2"),  # this reading's panel wrote the reference
        _clip(ref, *["ladies we must act now"] * 3, clip_id="s1-v3"),  # another rendering, same place
        _clip("we agree", *["we agree"] * 3, clip_id="s2-v1"),
    ]
    edits = mine(clips, PANEL, PANEL, preset_params("paper", loo=False)).edits
    assert [(e.clip_id, e.kind) for e in edits] == [("s1-v1", "deletion"), ("s1-v3", SUBSTITUTION)]
    assert all(e.evidence is not None and e.evidence.repeat == pytest.approx(2 / 3) for e in edits)
    assert [e.confidence for e in edits] == [0.833, 0.833]  # halfway between 1 and the repeat share
    # a reference read once: no repeat evidence
    (alone,) = with_repeats([edits[0]], {"s1-v1": clips[0].ref})
    assert alone is edits[0]
    # the operating point drops them; without one (every preset's default) they stay
    assert mine(clips, PANEL, PANEL, preset_params("paper", loo=False, min_confidence=0.9)).edits == ()
    assert len(mine(clips, PANEL, PANEL, preset_params("anchor", loo=False)).edits) == 2


# --------------------------------------------------------------------------- options, CLI, JSON


def test_min_confidence_is_read_from_flags_and_spec_fields_alike() -> None:
    cli = RefdisOptions.from_mapping({"preset": "paper", "min_confidence": 0.4}, Surface.cli())
    toml = RefdisOptions.from_mapping(
        {"preset": "paper", "min_confidence": 0.4}, Surface.toml("audit.toml", "probes.refdis")
    )
    assert cli == toml and cli.mining.min_confidence == 0.4
    for preset in ("anchor", "paper"):  # no preset filters by default
        assert RefdisOptions.from_mapping({"preset": preset}, Surface.cli()).mining.min_confidence is None
    with pytest.raises(ConfigError, match=r"--min-confidence 1\.5 must be in \[0, 1\]"):
        RefdisOptions.from_mapping({"min_confidence": 1.5}, Surface.cli())
    with pytest.raises(ConfigError, match=r"audit\.toml: \[probes\.refdis\] min_confidence = -0\.2"):
        RefdisOptions.from_mapping({"min_confidence": -0.2}, Surface.toml("audit.toml", "probes.refdis"))


def test_the_runner_reads_min_confidence_for_refdis_and_the_miner_calibration() -> None:
    from asr_audit.calib.probe import MinerCalibrationOptions

    opts = MinerCalibrationOptions.from_mapping({"truth": "calib", "min_confidence": 0.3}, Surface.cli())
    assert opts.refdis.mining.min_confidence == 0.3


def _refdis(run_cli, out: Path, *args: str) -> dict:
    code, _, err = run_cli("refdis", "--preds", VOXPOPULI, "--panel", VOX_PANEL, "--no-loo", "--json", out, *args)
    assert code == 0, err
    return json.loads(out.read_text())


def test_every_mined_edit_carries_its_confidence_and_the_flag_selects_the_operating_point(
    run_cli, tmp_path: Path
) -> None:
    everything = _refdis(run_cli, tmp_path / "all.json", "--preset", "paper")
    confs = [e["confidence"] for e in everything["edits"]]
    assert confs and all(0.0 <= c <= 1.0 for c in confs)
    assert all(set(e["evidence"]) == {"votes", "agreement", "consensus_cer", "repeat"} for e in everything["edits"])
    cut = sorted(confs)[len(confs) // 2]  # a threshold that drops some edits and keeps others
    kept = _refdis(run_cli, tmp_path / "kept.json", "--preset", "paper", "--min-confidence", str(cut))
    assert kept["params"]["min_confidence"] == cut
    assert [e for e in everything["edits"] if e["confidence"] >= cut] == kept["edits"]
    assert 0 < len(kept["edits"]) < len(everything["edits"])


def test_anchor_keeps_low_confidence_edits_unless_asked(run_cli, tmp_path: Path) -> None:
    anchor = _refdis(run_cli, tmp_path / "anchor.json", "--preset", "anchor")
    assert anchor["params"]["min_confidence"] is None
    confs = [e["confidence"] for e in anchor["edits"]]
    assert min(confs) < 1.0  # edits a strict operating point would drop, kept
    asked = _refdis(run_cli, tmp_path / "asked.json", "--preset", "anchor", "--min-confidence", "0.99")
    assert len(asked["edits"]) == sum(c >= 0.99 for c in confs) < len(confs)
