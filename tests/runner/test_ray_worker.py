"""The Ray worker's batch logic, run in this process (no Ray): what it reads, hashes, transcribes and
reports unreachable."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import ray_backends as rb

from asr_audit.corpus.clips import EncodedSource
from asr_audit.corpus.spec import load_corpus
from asr_audit.runner import ray_worker
from asr_audit.runner.ray_worker import ModelWorker


def test_worker_reads_hashes_transcribes_and_reports_unreachable(tmp_path: Path, monkeypatch) -> None:
    rb.setup()
    clips = load_corpus(str(rb.build_world(tmp_path))).clips  # four clips and a missing file
    w = ModelWorker("echo-test:a", {})
    assert w.info().identity.spec == "echo-test:a" and not w.info().lookup
    batch = w.transcribe(clips)
    assert set(batch.hashes) == {c.id for c in clips[:4]} and not batch.bad and not batch.failed
    assert set(batch.done) == {h for h, _ in batch.hashes.values()}
    assert all(fp.startswith("file:") for fp in batch.fingerprints.values())
    assert batch.unreachable == ("gone.flac",)  # the driver decides: it ships the bytes or records "not found"
    # a file this worker cannot see is unreachable (the driver ships it); its bytes then transcribe the same
    monkeypatch.setattr(ray_worker, "reachable", lambda clip: clip.audio_path is None)
    hidden = w.transcribe(clips[:2])
    assert hidden.unreachable == (clips[0].id, clips[1].id) and not hidden.hashes
    shipped = [
        dataclasses.replace(c, audio_path=None, source=EncodedSource(Path(str(c.audio_path)).read_bytes(), "x"))
        for c in clips[:2]
    ]
    again = w.transcribe(shipped)
    assert again.hashes == {c.id: batch.hashes[c.id] for c in clips[:2]}
    assert {h: t for h, (t, _) in again.done.items()} == {h: batch.done[h][0] for h, _ in again.hashes.values()}


def test_worker_that_cannot_load_its_model_says_why() -> None:
    w = ModelWorker("preds:/nonexistent/preds.jsonl", {})
    assert w.info().fatal is not None and "Ray worker" in w.info().fatal
    assert w.transcribe([]).fatal == w.info().fatal


def test_resources_beyond_the_cluster_fail_on_a_local_ray_and_warn_on_a_joined_one() -> None:
    import pytest

    from asr_audit.errors import ConfigError
    from asr_audit.runner.ray_exec import _check_resources
    from asr_audit.runner.spec import ModelSpec

    m = ModelSpec("large", "hf:x", num_gpus=1)
    with pytest.raises(ConfigError, match=r"'large' asks for num_gpus = 1 per actor but the Ray cluster has 0 GPU"):
        _check_resources(m, {"CPU": 2.0}, strict=True, log=print)
    said: list[str] = []
    _check_resources(m, {"CPU": 2.0}, strict=False, log=said.append)
    assert len(said) == 1 and "wait until the cluster provides them" in said[0]
    _check_resources(m, {"CPU": 2.0, "GPU": 8.0}, strict=True, log=said.append)
    assert len(said) == 1


def test_worker_scores_decodes_and_isolates_rows_as_the_local_code_does(tmp_path: Path) -> None:
    """A worker's scoring, forced-continuation and attn-isolated rows give what the local functions give
    on the same audio (it calls them); a row whose audio hashes otherwise here, or whose file it cannot
    see, comes back unresolved and nothing of its chunk is computed; a backend that cannot decode with
    end-of-text banned says why in its info."""
    import numpy as np
    import pytest

    from asr_audit.audio.io import audio_hash, load_audio
    from asr_audit.models.base import DecodeOptions, load_backend
    from asr_audit.models.ops import compute_scores, forced_rows
    from asr_audit.probes.core.models import Silence

    rb.setup()
    clips = load_corpus(str(rb.build_world(tmp_path))).clips[:2]
    x = [load_audio(c) for c in clips]
    h = [audio_hash(a) for a in x]
    local = load_backend("score-test:a", DecodeOptions())
    w = ModelWorker("score-test:a", {})
    rows = [(clips[0], h[0], "", "a b"), (Silence(len(x[0])), audio_hash(np.zeros(len(x[0]), np.float32)), "", "a b")]
    got = w.score(rows)
    want, _ = compute_scores(local, [x[0], np.zeros(len(x[0]), np.float32)], ["", ""], ["a b", "a b"])
    assert list(got.results) == want and not got.unresolved and want[0] != want[1]
    mixed = w.score([rows[0], (clips[1], h[1], "", "an unscorable target")])  # the failing row is isolated
    assert mixed.results[0] == want[0] and "cannot score" in mixed.results[1]
    bad = w.score([rows[0], (clips[1], h[0], "", "a b")])  # the second row's hash is another clip's
    assert list(bad.unresolved) == [1] and "hashes to" in bad.unresolved[1] and bad.results == ()
    assert w.forced([(c, hc) for c, hc in zip(clips, h)], 3).results == tuple(forced_rows(local, x, 3))
    assert w.info().forced is None and w.info().capabilities == ("score", "transcribe")
    assert "end-of-text banned" in (ModelWorker("echo-test:a", {}).info().forced or "")
    pytest.importorskip("torch")  # the white-box test backend's cross-attention site
    white = ModelWorker("whitebox-test:a", {})
    iso = white.isolated([(clips[0], h[0], (0.2, 1.0))])
    assert iso.results == (("thank you mister president, 40 frames heard", None),)
