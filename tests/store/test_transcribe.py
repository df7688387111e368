"""The transcribe runner and CLI: cache reuse, broken clips, preds: backends, kill -9 resume."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from audio_fixtures import BAD_MANIFEST_EXPECT, build_bad_manifest, build_gain_manifest, write_manifest_rows

import asr_audit.store.transcribe as runner
from asr_audit.audio.io import LoadedAudio
from asr_audit.corpus.clips import ArraySource, Clip, Corpus
from asr_audit.corpus.spec import load_corpus
from asr_audit.models.base import BaseBackend, DecodeOptions, load_backend
from asr_audit.store import PredictionRecord, Store, write_predictions
from asr_audit.store.transcribe import corpus_wer, transcribe_corpus


def _missing(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return True
    return False


# per test: only the tests that decode with PocketSphinx skip without it (a module-level
# importorskip skipped the five unrelated tests too)
needs_sphinx = pytest.mark.skipif(_missing("pocketsphinx"), reason="needs pocketsphinx (pip install pocketsphinx)")


class Counting:
    """Wraps a backend and counts the clips it is asked to transcribe."""

    def __init__(self, inner) -> None:
        self.inner, self.calls, self.clips = inner, 0, 0
        self.spec, self.capabilities, self.max_duration = inner.spec, inner.capabilities, inner.max_duration

    def identity(self):
        return self.inner.identity()

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        self.calls += 1
        self.clips += len(audios)
        return self.inner.transcribe(audios)


class LengthBackend(BaseBackend):
    """Answers the sample count; fails on clips of ``poison`` samples (test double)."""

    def __init__(self, poison: int = -1) -> None:
        super().__init__("test:length", DecodeOptions(), "0")
        self.poison, self.batches = poison, list[int]()

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        self.batches.append(len(audios))
        if any(len(a) == self.poison for a in audios):
            raise RuntimeError("poisoned clip")
        return [f"n{len(a)}" for a in audios]


def _mem_corpus(lengths: Sequence[int]) -> Corpus:
    clips = tuple(
        Clip(id=f"c{i}", reference="r", source=ArraySource(np.full(n, 0.01 * (i + 1), np.float32), 16000))
        for i, n in enumerate(lengths)
    )
    return Corpus("mem", "test", "mem", clips)


@needs_sphinx
def test_sphinx_cache_hit_on_rerun_and_across_paths(
    librispeech_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = load_corpus(librispeech_dir)
    backend = Counting(load_backend("sphinx:en-us"))
    with Store(tmp_path / "s.sqlite") as st:
        first = transcribe_corpus(backend, corpus, st, batch_size=2)
        assert (first.n_computed, first.n_cached, backend.clips, backend.calls) == (3, 0, 3, 2)
        wer = corpus_wer(first.records)
        assert wer is not None and wer < 0.6 and not first.failures
        decoded = []
        real_load = runner.load_clip_audio

        def counted_load(clip: Clip, max_duration: float | None = None) -> LoadedAudio:
            decoded.append(clip.id)
            return real_load(clip, max_duration)

        monkeypatch.setattr(runner, "load_clip_audio", counted_load)
        second = transcribe_corpus(backend, corpus, st, batch_size=2)
        assert (second.n_computed, second.n_cached, backend.clips) == (0, 3, 3)  # no recomputation
        assert decoded == []  # unchanged files: not even decoded
        assert second.records == tuple(first.records)
        # the same audio reached through another corpus (other paths, other ids) is not recomputed
        rows = [{"audio_filepath": c.audio_path, "text": c.reference, "id": f"other-{c.id}"} for c in corpus]
        other = load_corpus(write_manifest_rows(tmp_path / "other.jsonl", rows))
        third = transcribe_corpus(backend, other, st)
        assert third.n_cached == 3 and backend.clips == 3
        assert [r.hypothesis for r in third.records] == [r.hypothesis for r in first.records]
        assert st.count("transcript") == 3


def test_duplicate_audio_in_a_batch_is_computed_once(tmp_path: Path) -> None:
    clip = Clip(id="a", reference="r", source=ArraySource(np.ones(50, np.float32) * 0.1, 16000))
    twin = Clip(id="b", reference="r", source=ArraySource(np.ones(50, np.float32) * 0.1, 16000))
    backend = LengthBackend()
    with Store(tmp_path / "s.sqlite") as st:
        out = transcribe_corpus(backend, Corpus("m", "test", "m", (clip, twin)), st)
    assert backend.batches == [1] and [r.hypothesis for r in out.records] == ["n50", "n50"]


def test_a_failing_clip_does_not_sink_its_batch(tmp_path: Path) -> None:
    backend = LengthBackend(poison=30)
    with Store(tmp_path / "s.sqlite") as st:
        out = transcribe_corpus(backend, _mem_corpus([10, 30, 20, 40]), st, batch_size=4)
        assert [r.clip_id for r in out.records] == ["c0", "c2", "c3"]
        assert [(f.clip_id, f.reason) for f in out.failures] == [("c1", "RuntimeError: poisoned clip")]
        assert backend.batches == [4, 1, 1, 1, 1]
        backend.poison = -1  # fixed: a rerun computes only the failed clip
        again = transcribe_corpus(backend, _mem_corpus([10, 30, 20, 40]), st, batch_size=4)
        assert (again.n_cached, again.n_computed, backend.batches[-1]) == (3, 1, 1)


class BatchLog(LengthBackend):
    """Records the sample counts of every batch it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[list[int]] = []

    def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
        self.seen.append([len(a) for a in audios])
        return super().transcribe(audios)


def test_batches_are_length_sorted_and_records_come_back_in_corpus_order(tmp_path: Path) -> None:
    lengths = [160, 800, 320, 1600, 480, 640]
    clips = [
        Clip(id=f"c{i}", reference="r", source=ArraySource(np.full(n, 0.01 * (i + 1), np.float32), 16000))
        for i, n in enumerate(lengths)
    ]
    # declared durations sort the batches (longest first); c5 has none and goes last
    clips = [c if i == 5 else dataclasses.replace(c, duration=lengths[i] / 16000) for i, c in enumerate(clips)]
    corpus = Corpus("mem", "test", "mem", tuple(clips))
    backend = BatchLog()
    with Store(tmp_path / "s.sqlite") as st:
        out = transcribe_corpus(backend, corpus, st, batch_size=2)
        assert backend.seen == [[1600, 800], [480, 320], [160, 640]]
        assert [r.clip_id for r in out.records] == [f"c{i}" for i in range(6)]
        assert [r.hypothesis for r in out.records] == [f"n{n}" for n in lengths]
        assert st.count("transcript") == 6  # each result written once
        again = transcribe_corpus(backend, corpus, st, batch_size=4)
        assert (again.n_cached, again.n_computed, len(backend.seen)) == (6, 0, 3)
        assert again.records == out.records


def test_audio_decodes_on_the_prefetch_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch k+1's audio decodes on the background thread while batch k is transcribed: the first
    backend call waits for the second batch's decoding to start, which cannot happen in sequence."""
    threads: set[str] = set()
    second_batch_loading = threading.Event()
    real_load = runner.load_clip_audio

    def load(clip: Clip, max_duration: float | None = None):
        threads.add(threading.current_thread().name.split("_")[0])
        if clip.id == "c2":
            second_batch_loading.set()
        return real_load(clip, max_duration)

    class Waiting(LengthBackend):
        def transcribe(self, audios: Sequence[np.ndarray]) -> list[str]:
            if not self.batches:
                assert second_batch_loading.wait(timeout=20), "the next batch was not decoded in the background"
            return super().transcribe(audios)

    monkeypatch.setattr(runner, "load_clip_audio", load)
    with Store(tmp_path / "s.sqlite") as st:
        out = transcribe_corpus(Waiting(), _mem_corpus([10, 20, 30, 40]), st, batch_size=2)
    assert [r.hypothesis for r in out.records] == ["n10", "n20", "n30", "n40"] and not out.failures
    assert threads == {"asr-audit-audio"}


def test_preds_backend_looks_up_clip_ids(tmp_path: Path) -> None:
    corpus = _mem_corpus([10, 20, 30])
    write_predictions(
        tmp_path / "m.jsonl",
        [
            PredictionRecord("c0", "r", "zero", 1.0, None),
            PredictionRecord("dir/c1.wav", "r", "one", 1.0, None),  # matched by file-name stem
        ],
    )
    backend = load_backend(f"preds:{tmp_path / 'm.jsonl'}")
    with Store(tmp_path / "s.sqlite") as st:
        out = transcribe_corpus(backend, corpus, st)
        assert st.count() == 0  # the file is the cache
    assert [(r.clip_id, r.hypothesis) for r in out.records] == [("c0", "zero"), ("c1", "one")]
    assert [f.clip_id for f in out.failures] == ["c2"] and "no prediction" in out.failures[0].reason
    assert len(backend.identity().weights_hash) == 16
    from asr_audit.errors import BackendError

    with pytest.raises(BackendError, match="by clip id"):
        backend.transcribe([np.zeros(3, np.float32)])


@needs_sphinx
def test_cli_bad_audio_manifest_completes_and_lists_failures(tmp_path: Path, run_cli) -> None:
    manifest = build_bad_manifest(tmp_path / "bad")
    code, out, err = run_cli(
        "transcribe",
        "--model",
        "sphinx:en-us",
        "--corpus",
        manifest,
        "--out",
        tmp_path / "out",
        "--store",
        tmp_path / "s.sqlite",
        "--batch-size",
        "3",
    )
    assert code == 0, err
    (pred,) = (tmp_path / "out").iterdir()
    assert pred.name == "MODEL_sphinx-en-us_DATASET_bad_test.jsonl"
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    assert [r["audio_filepath"] for r in rows] == ["good", "stereo8k"]
    assert rows[1]["duration"] == pytest.approx(2.99, abs=0.01) and rows[1]["pred_text"]
    assert "5 clip(s) failed" in err
    for cid, reason in BAD_MANIFEST_EXPECT.items():
        if reason is not None:
            assert any(cid in line and reason in line for line in err.splitlines()), (cid, err)
    assert "WER" in out and "sphinx:en-us" in out
    assert "WER after the whisper (OpenAI Whisper EnglishTextNormalizer" in " ".join(out.split())
    with Store(tmp_path / "s.sqlite") as st:
        (run,) = st.runs()
        assert len(st.run_errors(run["run_id"])) == 5


def test_models_verb_lists_light_backends(run_cli) -> None:
    code, out, _ = run_cli("models")
    assert code == 0
    for name in ("sphinx:<arg>", "openai:<arg>", "preds:<arg>"):
        assert name in out


def test_bad_model_spec_is_one_line_error(tmp_path: Path, run_cli, librispeech_dir: Path) -> None:
    code, _, err = run_cli("transcribe", "--model", "nope:x", "--corpus", librispeech_dir, "--out", tmp_path)
    assert code == 2 and "not recognised" in err and "Traceback" not in err
    code, _, err = run_cli(
        "transcribe", "--model", "whisper-tiny.en", "--corpus", librispeech_dir, "--out", tmp_path, "--device", "tpu"
    )
    assert code == 2 and "device 'tpu' is unknown; fix: use cpu, cuda, cuda:N or auto" in err


def _transcribe_cmd(manifest: Path, out: Path, store: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "asr_audit",
        "transcribe",
        "--model",
        "sphinx:en-us",
        "--corpus",
        str(manifest),
        "--out",
        str(out),
        "--store",
        str(store),
        "--batch-size",
        "1",
        "--no-timings",
    ]


def _rows(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:  # schema not created yet
        return 0


@pytest.mark.slow
@needs_sphinx
def test_kill_9_then_resume_gives_identical_files(tmp_path: Path) -> None:
    manifest = build_gain_manifest(tmp_path / "audio", names=("0880", "0930"))  # 4 clips of distinct audio
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    killed_store, out_killed = tmp_path / "killed.sqlite", tmp_path / "out_killed"
    proc = subprocess.Popen(
        _transcribe_cmd(manifest, out_killed, killed_store),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while _rows(killed_store) < 1 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL  # it was killed mid-run, not finished
    partial = _rows(killed_store)
    assert 1 <= partial < 4 and not out_killed.exists()

    resumed = subprocess.run(
        _transcribe_cmd(manifest, out_killed, killed_store), env=env, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    clean_out = tmp_path / "out_clean"
    clean = subprocess.run(
        _transcribe_cmd(manifest, clean_out, tmp_path / "clean.sqlite"), env=env, capture_output=True, text=True
    )
    assert clean.returncode == 0, clean.stderr
    (a,), (b,) = list(out_killed.iterdir()), list(clean_out.iterdir())
    assert a.name == b.name and a.read_bytes() == b.read_bytes()
    assert len(a.read_text().splitlines()) == 4
    with Store(killed_store) as st:
        assert st.integrity_ok() and st.count("transcript") == 4
