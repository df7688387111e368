"""refdis' warm path (the set read back as columns) gives the plain path's result byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.refdis import mine_clip, preset_params
from asr_audit.probes.predfiles.refdis_columns import _panel_arrays, candidate_clips, columns_from_run
from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
from asr_audit.probes.predfiles.refdis_run import (
    load_warm_set,
    refdis_text_cache,
    run_normalizer,
    run_refdis,
    run_refdis_warm,
)
from asr_audit.testing.synthetic import make_prediction_set
from asr_audit.text.align import AlignmentCache
from asr_audit.text.normalize import clear_normalize_cache

PANEL = ["honest-01", "honest-02", "honest-03", "honest-04"]
VOXPOPULI = Path(__file__).parents[2] / "fixtures" / "voxpopuli"


@pytest.fixture(scope="module")
def preds_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("preds")
    make_prediction_set(150, rng=np.random.default_rng(3), folder=folder, missing_rate=0.03)
    # an empty reference and an empty hypothesis: both edge cases of the columns
    path = next(folder.glob("MODEL_honest-02_*"))
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["pred_text"] = ""
    lines[0] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    for p in folder.glob("*.jsonl"):
        rows = p.read_text().splitlines()
        last = json.loads(rows[-1])
        last["text"] = ""
        p.write_text("\n".join([*rows[:-1], json.dumps(last)]) + "\n")
    return folder


CASES: list[dict[str, Any]] = [
    {"preset": "anchor", "loo": False},
    {"preset": "anchor"},
    {"preset": "paper"},
    {"preset": "anchor", "majority": 0.5, "include_middle": True, "loo": False},
    {"preset": "paper", "min_confidence": 0.4, "min_ref_match": 0.8},
    {"preset": "anchor", "min_panel": 2, "loo": False, "panel": PANEL[:3]},
    {"preset": "paper", "merge": True, "min_run_len": 2},
    {"preset": "anchor", "models": ["copier-01", "honest-05", "honest-01"]},
]


def _plain_and_warm(
    folder: Path, root: Path, case: dict[str, Any], panel: list[str], workers: int = 1
) -> tuple[str, str]:
    case = dict(case)
    panel = case.pop("panel", panel)
    merge, models, preset = case.pop("merge", False), case.pop("models", None), case.pop("preset")
    params = preset_params(preset, **case)
    clear_normalize_cache()  # every run starts as a new process would
    kw: dict[str, Any] = {"n_resamples": 100, "merge_compounds": merge, "models": models}
    plain = run_refdis(load_predictions(folder), panel, params, **kw).to_dict()
    warm = load_warm_set(folder, None, refdis_text_cache("whisper", preset, root=root), panel=panel, models=models)
    if warm is None:  # the first run of these settings stores the set
        run_refdis(
            load_predictions(folder), panel, params, text_cache=refdis_text_cache("whisper", preset, root=root), **kw
        )
        warm = load_warm_set(folder, None, refdis_text_cache("whisper", preset, root=root), panel=panel, models=models)
    assert warm is not None
    kw.pop("models")
    got = run_refdis_warm(warm, panel, params, models=models, workers=workers, **kw).to_dict()
    return json.dumps(plain, sort_keys=True), json.dumps(got, sort_keys=True)


def test_warm_columns_equal_the_plain_path_for_many_parameters(preds_dir: Path, tmp_path: Path) -> None:
    for case in CASES:
        plain, warm = _plain_and_warm(preds_dir, tmp_path, case, PANEL)
        assert warm == plain, case


def test_warm_mining_in_forked_processes_equals_the_plain_path(
    preds_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm run mining its chunks in two forked processes: leave-one-out, an operating point
    (edits fixed after mining), merged compounds and a model subset give the plain path's bytes."""
    from asr_audit.probes.predfiles import refdis_columns

    monkeypatch.setattr(refdis_columns, "MINE_PARALLEL_CLIPS", 1)  # fork even for this small set
    forked: list[bool] = []
    real = refdis_columns._can_fork

    def can_fork(n: int, clips: int) -> bool:
        forked.append(real(n, clips))
        return forked[-1]

    monkeypatch.setattr(refdis_columns, "_can_fork", can_fork)
    for case in (CASES[1], CASES[4], CASES[6], CASES[7]):
        plain, warm = _plain_and_warm(preds_dir, tmp_path, case, PANEL, workers=2)
        assert warm == plain, case
    assert forked and all(forked)  # every warm run mined in the forked processes


def test_warm_columns_equal_the_plain_path_on_voxpopuli(tmp_path: Path) -> None:
    panel = ["whisper-small.en", "whisper-base.en", "distil-small.en", "wav2vec2-base-960h"]
    for case in ({"preset": "anchor", "loo": False}, {"preset": "paper"}):
        plain, warm = _plain_and_warm(VOXPOPULI, tmp_path, case, panel)
        assert warm == plain, case


@pytest.mark.parametrize("params", [{"loo": False}, {"majority": 0.5, "include_middle": True}, {"min_panel": 4}])
def test_the_prefilter_drops_only_clips_without_edits(preds_dir: Path, params: dict[str, Any]) -> None:
    p = preset_params("anchor", **params)
    pset = load_predictions(preds_dir)
    cache = AlignmentCache()
    clips = prepare_clips(pset, pset.models, run_normalizer("whisper", "anchor"), True, cache=cache)
    for c in clips:  # the panel's alignments, as a cold run leaves them
        for m in PANEL:
            if (h := c.hyps.get(m)) is not None:
                cache.align(c.ref, h)
    cols = columns_from_run(pset.models, clips, pset.models, cache)
    ref_off = np.concatenate([[0], np.cumsum(cols.ref_len)])
    keep = candidate_clips(cols, [_panel_arrays(cols, m, p, ref_off) for m in PANEL], p, ref_off)
    mined = np.array([bool(mine_clip(c, PANEL, pset.models, p, cache)) for c in clips])
    assert not (mined & ~keep).any()  # conservative: every clip with an edit is kept
    assert keep.sum() < len(clips)  # and it does filter


def test_a_cli_warm_run_writes_the_same_bytes(preds_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asr_audit.cli import main

    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    args = ["refdis", "--preds", str(preds_dir), "--panel", ",".join(PANEL), "--resamples", "100"]
    outs = []
    for i, extra in enumerate(
        [["--no-text-cache"], [], [], ["--majority", "0.75"], ["--majority", "0.75", "--no-text-cache"]]
    ):
        out = tmp_path / f"run{i}.json"
        assert main([*args, *extra, "--json", str(out)]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]  # uncached, cold, warm
    assert outs[3] == outs[4]  # warm with other parameters, uncached
    assert [p for p in (tmp_path / "cache").rglob("*.npz") if p.parent.name == "sets"]  # the whole set's entry


def test_a_damaged_set_entry_is_a_miss(preds_dir: Path, tmp_path: Path) -> None:
    cache = refdis_text_cache("whisper", "anchor", root=tmp_path)
    run_refdis(load_predictions(preds_dir), PANEL, preset_params("anchor"), n_resamples=50, text_cache=cache)
    (entry,) = (p for p in tmp_path.rglob("*.npz") if p.parent.name == "sets")
    entry.write_bytes(entry.read_bytes()[:1000])
    assert (
        load_warm_set(preds_dir, None, refdis_text_cache("whisper", "anchor", root=tmp_path), panel=PANEL, models=None)
        is None
    )


def test_a_changed_file_misses_the_set(preds_dir: Path, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "p"
    shutil.copytree(preds_dir, folder)
    cache = refdis_text_cache("whisper", "anchor", root=tmp_path / "c")
    run_refdis(load_predictions(folder), PANEL, preset_params("anchor"), n_resamples=50, text_cache=cache)
    path = next(folder.glob("MODEL_honest-05_*"))
    path.write_text(path.read_text().replace("the", "a", 1))
    assert (
        load_warm_set(
            folder, None, refdis_text_cache("whisper", "anchor", root=tmp_path / "c"), panel=PANEL, models=None
        )
        is None
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_the_streamed_read_equals_the_plain_path(
    preds_dir: Path, tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from asr_audit.probes.predfiles import refdis_columns
    from asr_audit.probes.predfiles.refdis_columns import Workers
    from asr_audit.probes.predfiles.refdis_run import run_refdis_streamed

    monkeypatch.setattr(Workers, "CHUNK", 64)  # several tasks per step, so the forked workers run them
    monkeypatch.setattr(refdis_columns, "CHUNK_CLIPS", 16)  # clips mined in several chunks
    monkeypatch.setattr(refdis_columns, "MINE_PARALLEL_CLIPS", 1)  # with 2 workers, mined in forked processes
    monkeypatch.setattr(refdis_columns, "ERROR_BLOCK", 16)  # edit distances in several blocks of distinct pairs

    cases: tuple[dict[str, Any], ...] = (
        {"preset": "anchor"},
        {"preset": "paper", "loo": False, "models": ["honest-05", "copier-02"]},
    )
    for given in cases:
        case = dict(given)
        models, preset = case.pop("models", None), case.pop("preset")
        params = preset_params(preset, **case)
        clear_normalize_cache()
        plain = run_refdis(load_predictions(preds_dir), PANEL, params, n_resamples=100, models=models).to_dict()
        cache = refdis_text_cache("whisper", preset, root=tmp_path)
        got = run_refdis_streamed(
            preds_dir, None, PANEL, params, text_cache=cache, models=models, n_resamples=100, workers=workers
        ).to_dict()
        assert json.dumps(got, sort_keys=True) == json.dumps(plain, sort_keys=True), case


def test_pairs_computed_once_are_laid_out_as_computed_for_each() -> None:
    """Opcodes and edit distances of the distinct pairs, copied back to every pair, equal those
    computed pair by pair (models agreeing on a clip share one computation)."""
    from asr_audit.probes.predfiles.refdis_columns import _distinct_pairs, _expand_rows, _w_errors, _w_opcodes

    pairs = [("a b c", "a c"), ("a b c", "a b c"), ("a b c", "a c"), ("x", "y z"), ("", "q"), ("x", "y z")]
    distinct, inv = _distinct_pairs(pairs)
    assert distinct == [("a b c", "a c"), ("a b c", "a b c"), ("x", "y z"), ("", "q")]
    assert inv is not None and inv.tolist() == [0, 1, 0, 2, 3, 2]
    lengths, rows = _expand_rows(*_w_opcodes(distinct), inv)
    want_lengths, want_rows = _w_opcodes(pairs)
    assert lengths.tolist() == want_lengths.tolist() and rows.tolist() == want_rows.tolist()
    assert np.asarray(_w_errors(distinct))[inv].tolist() == _w_errors(pairs) == [1, 0, 1, 2, 1, 2]
    assert _distinct_pairs(distinct) == (distinct, None)  # all distinct: nothing to copy


def test_the_streamed_read_normalizes_each_distinct_text_once(preds_dir: Path) -> None:
    """A hypothesis two models (or a model and a reference) share verbatim is normalized once;
    the columns hold one string object for it."""
    from asr_audit.probes.predfiles.refdis_columns import Workers, stream_columns
    from asr_audit.text.text2num import with_text2num

    calls: list[str] = []
    norm = with_text2num(run_normalizer("whisper", "anchor"))

    def counting(text: str) -> str:
        calls.append(text)
        return norm(text)

    with Workers(1, counting) as pool:
        cols = stream_columns(preds_dir, None, pool)
    assert len(calls) == len(set(calls))  # no text twice
    raw = load_predictions(preds_dir)
    texts = {r.reference.strip() for f in raw.files for r in f.rows.values()}
    texts |= {r.hypothesis for f in raw.files for r in f.rows.values() if r.hypothesis is not None}
    assert set(calls) == texts
    hyp = {(f.model, c): r.hypothesis for f in raw.files for c, r in f.rows.items()}
    models = [f.model for f in raw.files]
    same = [
        (a, b, i)
        for a in models
        for b in models
        if a < b
        for i, c in enumerate(cols.clip_ids)
        if hyp.get((a, c)) is not None and hyp.get((a, c)) == hyp.get((b, c))
    ]
    assert len(same) > 10 and all(cols.hyps[a][i] is cols.hyps[b][i] for a, b, i in same)


def test_a_reference_conflict_leaves_the_streamed_read_to_the_plain_path(preds_dir: Path, tmp_path: Path) -> None:
    import shutil

    from asr_audit.probes.predfiles.refdis_columns import StreamMiss
    from asr_audit.probes.predfiles.refdis_run import run_refdis_streamed

    folder = tmp_path / "p"
    shutil.copytree(preds_dir, folder)
    path = next(folder.glob("MODEL_honest-05_*"))
    rows = path.read_text().splitlines()
    row = json.loads(rows[3])
    row["text"] = "another reference"
    path.write_text("\n".join([*rows[:3], json.dumps(row), *rows[4:]]) + "\n")
    cache = refdis_text_cache("whisper", "anchor", root=tmp_path / "c")
    with pytest.raises(StreamMiss):
        run_refdis_streamed(folder, None, PANEL, preset_params("anchor"), text_cache=cache)


def test_pair_ops_of_returns_exactly_the_wanted_clips_opcodes() -> None:
    from asr_audit.probes.predfiles.refdis_columns import TAGS, PairOps

    rng = np.random.default_rng(5)
    ops = PairOps(40)
    rows_of: dict[int, list[list[int]]] = {}
    for part in (range(0, 40, 3), range(1, 40, 3)):  # two parts; clips 2, 5, ... have no opcodes
        new = {c: rng.integers(0, 4, size=(int(rng.integers(1, 4)), 5)).tolist() for c in part}
        for r in new.values():
            for row in r:
                row[0] %= 4
        ops.add(new)
        rows_of.update(new)
    for wanted in ([], [0], [2], [1, 2, 3, 39], list(range(40)), [5, 6, 7, 20, 38]):
        got = ops.of(np.asarray(wanted, dtype=np.int64))
        expect = {c: tuple((TAGS[r[0]], *r[1:]) for r in rows_of[c]) for c in wanted if c in rows_of}
        assert got == expect


def test_edit_distances_equal_edit_distance_with_shared_tuples() -> None:
    """The corrected-WER rows' distances (one ``edit_distances`` call per model, pairs sharing tuples)."""
    from asr_audit.text.align import edit_distance, edit_distances

    a, b, c, empty = ("we", "agree", "now"), ("we", "agreed"), ("now", "we", "agree", "now"), ()
    pairs = [(a, b), (a, c), (a, b), (b, a), (empty, c), (c, empty), (a, a), (a, tuple(a))]
    assert edit_distances(pairs) == [edit_distance(r, h) for r, h in pairs]
