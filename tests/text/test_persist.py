"""The persistent text cache: warm runs give the cold run's result, and a bad entry is only a miss."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, overload

import numpy as np
import pytest

from asr_audit.corpus.predfiles import load_predictions
from asr_audit.probes.predfiles.refdis import RefdisParams
from asr_audit.probes.predfiles.refdis_run import refdis_text_cache, run_refdis
from asr_audit.testing.synthetic import make_prediction_set
from asr_audit.text.align import AlignmentCache, align
from asr_audit.text.normalize import clear_normalize_cache
from asr_audit.text.persist import TextCache, fingerprint

PANEL = ["honest-01", "honest-02", "honest-03", "honest-04"]


@pytest.fixture(scope="module")
def preds_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("preds")
    make_prediction_set(120, rng=np.random.default_rng(7), folder=folder)
    return folder


@overload
def _run(folder: Path, root: None, **params: Any) -> tuple[dict, None]: ...
@overload
def _run(folder: Path, root: Path, **params: Any) -> tuple[dict, TextCache]: ...
def _run(folder: Path, root: Path | None, **params: Any) -> tuple[dict, TextCache | None]:
    clear_normalize_cache()  # every run starts as a new process would
    persist = None if root is None else refdis_text_cache("whisper", "anchor", root=root)
    p = RefdisParams(**params)
    result = run_refdis(load_predictions(folder), PANEL, p, n_resamples=50, text_cache=persist)
    return result.to_dict(), persist


def test_warm_run_equals_cold_run_and_reads_everything_back(preds_dir: Path, tmp_path: Path) -> None:
    plain, _ = _run(preds_dir, None)
    cold, c1 = _run(preds_dir, tmp_path)
    warm, c2 = _run(preds_dir, tmp_path)
    assert json.dumps(cold, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert json.dumps(warm, sort_keys=True) == json.dumps(plain, sort_keys=True)
    s1, s2 = c1.stats(), c2.stats()
    assert (s1.files, s1.warm, s1.written) == (10, 0, 10)
    assert (s2.files, s2.warm, s2.written) == (10, 10, 0)  # nothing new computed: nothing written
    assert s2.texts > 0 and s2.pairs > 0


def test_other_parameters_reuse_the_cache_and_match_an_uncached_run(preds_dir: Path, tmp_path: Path) -> None:
    _run(preds_dir, tmp_path)
    plain, _ = _run(preds_dir, None, majority=0.75)
    warm, persist = _run(preds_dir, tmp_path, majority=0.75)
    assert json.dumps(warm, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert persist.stats().warm == 10


def test_damaged_entries_are_misses_and_get_rewritten(preds_dir: Path, tmp_path: Path) -> None:
    plain, _ = _run(preds_dir, tmp_path)
    entries = sorted(p for p in tmp_path.rglob("*.npz") if p.parent.name != "sets")
    assert len(entries) == 10
    entries[0].write_bytes(entries[0].read_bytes()[:100])  # truncated
    entries[1].write_bytes(b"not a pickle")
    again, persist = _run(preds_dir, tmp_path)
    assert json.dumps(again, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert (persist.stats().warm, persist.stats().written) == (8, 2)


class _Planted:
    """A pickle that, when loaded, creates the file ``marker`` (what an attacker's entry would run)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (open, (str(self.marker), "w"))  # unpickling calls open(marker, "w")


def test_a_planted_pickle_entry_runs_nothing(preds_dir: Path, tmp_path: Path) -> None:
    import pickle

    plain, _ = _run(preds_dir, tmp_path / "cache")
    entries = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert entries
    marker = tmp_path / "pwned"
    for entry in entries:  # every entry the cache would read, replaced by an attacker's pickle
        entry.write_bytes(pickle.dumps(_Planted(marker)))
    again, persist = _run(preds_dir, tmp_path / "cache")
    assert not marker.exists()
    assert json.dumps(again, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert persist.stats().warm == 0  # every planted entry is a miss, then rewritten


def test_cache_entries_are_plain_data_not_pickles(preds_dir: Path, tmp_path: Path) -> None:
    _run(preds_dir, tmp_path)
    entries = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert entries and all(p.suffix == ".npz" for p in entries)
    for p in entries:
        with np.load(p, allow_pickle=False) as z:  # no object array anywhere
            assert all(z[k].dtype != object for k in z.files)


def test_a_changed_file_is_a_new_key(preds_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "preds"
    shutil.copytree(preds_dir, folder)
    _run(folder, tmp_path / "cache")
    target = next(folder.glob("MODEL_honest-05_*"))
    lines = target.read_text().splitlines()
    row = json.loads(lines[0])
    row["pred_text"] = "an entirely different hypothesis"
    target.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    changed, persist = _run(folder, tmp_path / "cache")
    plain, _ = _run(folder, None)
    assert json.dumps(changed, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert persist.stats().warm == 9


def test_fingerprint_names_normalizer_text2num_and_language() -> None:
    base = {"name": "whisper", "package_version": "1"}
    keys = {
        fingerprint(base, text2num=True, language="en"),
        fingerprint({**base, "package_version": "2"}, text2num=True, language="en"),
        fingerprint(base, text2num=False, language="en"),
        fingerprint(base, text2num=True, language="fr"),
    }
    assert len(keys) == 4
    assert refdis_text_cache("whisper", "anchor").folder != refdis_text_cache("whisper", "paper").folder


def test_seeded_opcodes_build_the_same_alignment() -> None:
    cache = AlignmentCache()
    ref, hyp = cache.tokens("madam president we agree"), cache.tokens("we agree today")
    cache.seed({(ref, hyp): align(ref, hyp).opcodes}, {(ref, hyp): 3})
    assert cache.align(ref, hyp) == align(ref, hyp)
    assert cache.errors(ref, hyp) == 3
    assert cache.computed == 0
    cache.align(hyp, ref)
    assert cache.computed == 1


def test_an_unwritable_cache_never_fails_the_run(preds_dir: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    plain, _ = _run(preds_dir, None)
    result, persist = _run(preds_dir, blocker)
    assert json.dumps(result, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert persist.stats().warm == 0


def test_cli_reports_the_cache_on_stderr_and_can_turn_it_off(
    preds_dir: Path, tmp_path: Path, run_cli, monkeypatch
) -> None:
    monkeypatch.setenv("ASR_AUDIT_CACHE_DIR", str(tmp_path))
    args = ("refdis", "--preds", str(preds_dir), "--panel", ",".join(PANEL), "--resamples", "50")
    code, out1, err1 = run_cli(*args)
    assert code == 0 and "0/10 prediction files warm" in err1
    code, out2, err2 = run_cli(*args)
    assert code == 0 and "10/10 prediction files warm" in err2 and out2 == out1
    code, out3, err3 = run_cli(*args, "--no-text-cache")
    assert code == 0 and "text cache" not in err3 and out3 == out1
