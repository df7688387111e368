"""refdis' warm mining judges models from the stored opcodes (``OpsJudge``), without alignments:
the same verdicts and renderings as :func:`mine_clip`'s judgement on alignments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from asr_audit.corpus.predfiles import read_prediction_file, select_prediction_files
from asr_audit.probes.predfiles.refdis import ClipInput, mine_clip, mine_edits, preset_params
from asr_audit.probes.predfiles.refdis_columns import (
    OpsJudge,
    _clip_inputs,
    _settle,
    columns_from_run,
)
from asr_audit.testing.synthetic import make_prediction_set
from asr_audit.text.align import AlignmentCache, align, ops_inserted, ops_span

PANEL = ["honest-01", "honest-02", "honest-03", "honest-04"]
REF = ("madam", "president", "we", "agree", "on", "this")


def _pairs() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Hand-made pairs for the edges (insertions and omissions at the clip's start and end, an
    empty hypothesis, an identical one, a hypothesis sharing nothing) and random ones."""
    out = [
        (REF, ()),
        (REF, REF),
        (REF, ("thank", "you", *REF)),
        (REF, (*REF, "thank", "you")),
        (REF, REF[2:]),
        (REF, REF[:-2]),
        (REF, ("so", *REF[1:], "yes")),
        (REF, ("madam", "presidents", "we", "agree", "on", "this", "this")),
        (REF, ("completely", "different")),
        (("a",), ("b",)),
        (("a",), ()),
    ]
    rng = np.random.default_rng(0)
    words = ["a", "b", "c", "d", "e"]
    for _ in range(300):
        ref = tuple(rng.choice(words, rng.integers(1, 9)).tolist())
        hyp = tuple(rng.choice(words, rng.integers(0, 9)).tolist())
        out.append((ref, hyp))
    return out


def test_ops_span_and_inserted_equal_the_alignment_on_every_span() -> None:
    for ref, hyp in _pairs():
        a = align(ref, hyp)
        for start in range(len(ref) + 1):
            for stop in range(start + 1, len(ref) + 1):
                assert ops_span(hyp, a.opcodes, start, stop) == (a.missed_any(start, stop), a.hyp_span(start, stop))
        for anchor in range(len(ref) + 1):
            assert ops_inserted(hyp, a.opcodes, anchor) == a.insertions.get(anchor, ())


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> list[ClipInput]:
    """Clips of a synthetic set (copiers, honest models, a panel) plus hand-made edge clips."""
    folder = tmp_path_factory.mktemp("preds")
    make_prediction_set(120, rng=np.random.default_rng(5), folder=folder, missing_rate=0.05)
    rows: dict[str, dict[str, Any]] = {}
    for path, name in select_prediction_files(folder)[0]:
        pf = read_prediction_file(path, name)
        for cid, row in pf.rows.items():
            rows.setdefault(cid, {"ref": tuple(row.reference.split()), "hyps": {}})
            rows[cid]["hyps"][name.model] = None if row.hypothesis is None else tuple(row.hypothesis.split())
    clips = [ClipInput(cid, r["ref"], r["hyps"]) for cid, r in sorted(rows.items())]
    models = sorted(clips[0].hyps)
    start = ("thank", "you", *REF)
    end = (*REF, "thank", "you")
    # the panel inserts at the start / end / omits the first or last words; others: the reference,
    # an empty hypothesis, none, a partial echo
    for clip_id, said in {"ins-start": start, "ins-end": end, "om-start": REF[2:], "om-end": REF[:-2]}.items():
        others = [REF, (), None, said, ("thank", *REF), REF[:-1]]
        hyps = {m: said if m in PANEL else others[k % len(others)] for k, m in enumerate(models)}
        clips.append(ClipInput(clip_id, REF, hyps))
    return clips


@pytest.mark.parametrize(
    "case",
    [
        {"preset": "anchor", "loo": False},
        {"preset": "anchor"},
        {"preset": "paper", "majority": 0.5},
        {"preset": "paper", "min_ref_match": 0.9, "loo": False, "majority": 0.6},
    ],
)
def test_ops_judge_equals_the_alignment_judgement(clips: list[ClipInput], case: dict[str, Any]) -> None:
    params = preset_params(**case)
    models = sorted(clips[0].hyps)
    plain = mine_edits(clips, PANEL, models, params, AlignmentCache())
    judges: list[OpsJudge] = []

    def judge_with(ms: list[str]) -> OpsJudge:
        judges.append(OpsJudge(ms, params))
        return judges[-1]

    cache = AlignmentCache()
    got = mine_edits(clips, PANEL, models, params, cache, judge_with=judge_with)
    for j in judges:
        j.settle(lambda m, clip: align(clip.ref, clip.hyps[m]).opcodes)
        assert not j.noted
    dump = lambda found: ([e.to_dict() for e in found[0]], {h: [e.to_dict() for e in v] for h, v in found[1].items()})  # noqa: E731
    assert dump(got) == dump(plain)
    edited = {e.clip_id for e in plain[0]}
    if "min_ref_match" not in case:  # at 0.9 the omissions leave the panel ineligible
        assert {"ins-start", "ins-end", "om-start", "om-end"} <= edited  # the edge clips were mined and judged
    assert any(v is None for e in plain[0] for v in e.verdicts.values())  # ineligible models too
    assert len({v for e in plain[0] for v in e.verdicts.values()} - {None}) >= 2


def test_a_judged_clip_with_no_hypothesis_or_an_empty_one() -> None:
    params = preset_params("anchor", loo=False)
    hyps = dict.fromkeys(PANEL, ("thank", "you", *REF)) | {"a": (), "b": None, "c": ("thank", "you", *REF), "d": REF}
    clip = ClipInput("x", REF, hyps)
    models = [*PANEL, "a", "b", "c", "d"]
    plain = mine_clip(clip, PANEL, models, params, AlignmentCache())
    judge = OpsJudge(models, params)
    got = mine_clip(clip, PANEL, models, params, AlignmentCache(), judge=judge)
    judge.settle(lambda m, c: align(c.ref, c.hyps[m]).opcodes)
    assert [e.to_dict() for e in got] == [e.to_dict() for e in plain]
    assert plain[0].verdicts["a"] is None and plain[0].verdicts["b"] is None  # the empty one matches nothing
    assert plain[0].verdicts["c"] == "consensus" and plain[0].verdicts["d"] == "ref"


def test_settle_reads_stored_opcodes_and_aligns_the_pairs_without(clips: list[ClipInput]) -> None:
    """``_settle`` (the warm path's chunk step): the stored opcodes where the columns hold them
    (the panel's here), an alignment where they do not (the other models')."""
    params = preset_params("anchor")
    models = sorted(clips[0].hyps)
    seen = AlignmentCache()
    for c in clips:  # the columns store the panel's opcodes only
        for m in PANEL:
            if (h := c.hyps[m]) is not None and c.ref:
                seen.align(c.ref, h)
    cols = columns_from_run(models, clips, models, seen)
    assert not cols.ops[models[0]].has.any() and cols.ops[PANEL[0]].has.any()
    chunk = np.arange(cols.n)
    cache = AlignmentCache()
    mined = _clip_inputs(cols, chunk, models, cache, seeded=PANEL)
    judges: list[OpsJudge] = []

    def judge_with(ms: list[str]) -> OpsJudge:
        judges.append(OpsJudge(ms, params))
        return judges[-1]

    got = mine_edits(mined, PANEL, models, params, cache, judge_with=judge_with)
    _settle(cols, chunk, mined, judges, cache)
    plain = mine_edits(clips, PANEL, models, params, AlignmentCache())
    assert [e.to_dict() for e in got[0]] == [e.to_dict() for e in plain[0]]
    assert {h: [e.to_dict() for e in v] for h, v in got[1].items()} == {
        h: [e.to_dict() for e in v] for h, v in plain[1].items()
    }
    assert got[0] and all(e.verdicts for e in got[0])
    # as _mine_chunk settles: the panel's pairs read from the cache _clip_inputs seeded
    cache = AlignmentCache()
    mined = _clip_inputs(cols, chunk, models, cache, seeded=PANEL)
    judges.clear()
    again = mine_edits(mined, PANEL, models, params, cache, judge_with=judge_with)
    _settle(cols, chunk, mined, judges, cache, PANEL)
    assert [e.to_dict() for e in again[0]] == [e.to_dict() for e in plain[0]]


@pytest.mark.parametrize("case", [{"preset": "anchor", "loo": False}, {"preset": "paper", "majority": 0.5}])
def test_panel_mining_from_seeded_opcodes_builds_no_alignment(clips: list[ClipInput], case: dict[str, Any]) -> None:
    """The warm path's mining reads the panel's (and judged models') seeded opcodes as they are:
    the same edits as mining on alignments, and no :class:`Alignment` is built."""
    params = preset_params(**case)
    models = sorted(clips[0].hyps)
    plain = mine_edits(clips, PANEL, models, params, AlignmentCache())
    cache = AlignmentCache()
    cache.seed({(c.ref, h): align(c.ref, h).opcodes for c in clips for h in c.hyps.values() if h is not None})
    judges: list[OpsJudge] = []

    def judge_with(ms: list[str]) -> OpsJudge:
        judges.append(OpsJudge(ms, params))
        return judges[-1]

    got = mine_edits(clips, PANEL, models, params, cache, judge_with=judge_with)
    for j in judges:
        j.settle(lambda m, clip: cache.pair_opcodes(clip.ref, clip.hyps[m]))
    assert len(cache) == 0  # no Alignment built
    assert [e.to_dict() for e in got[0]] == [e.to_dict() for e in plain[0]]
    assert {h: [e.to_dict() for e in v] for h, v in got[1].items()} == {
        h: [e.to_dict() for e in v] for h, v in plain[1].items()
    }
    assert got[0]
