"""The Ray executor on a local Ray (``ray.init(num_cpus=2)``): byte-identical ``results.json`` to the
local executor, resume after the driver dies mid-run, and a worker killed mid-batch costs a retry.

Marked ``ray``: these run only inside a loopback-only network namespace (``tests/conftest.py``;
``scripts/test.sh`` starts them with ``unshare -n``), so Ray never binds this machine's address.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

import ray_backends as rb  # noqa: E402 - tests/support, after the skip

from asr_audit.runner import ray_exec  # noqa: E402
from asr_audit.runner.ray_exec import RayExecutor  # noqa: E402
from asr_audit.runner.run import LocalExecutor  # noqa: E402
from asr_audit.store.sqlite import open_store  # noqa: E402

pytestmark = pytest.mark.ray

SRC = Path(rb.__file__).resolve().parents[2] / "src"


def _start_env() -> None:
    """Workers import this checkout's asr_audit and the test backends (they inherit the environment),
    and lose their TTS engines while the file ``$ASR_AUDIT_TEST_NO_TTS_MARKER`` exists."""
    paths = [str(SRC), str(Path(rb.__file__).parent), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    os.environ[rb.NO_TTS_MARKER] = str(Path(tempfile.mkdtemp(prefix="asr-audit-ray-")) / "no-tts")
    rb.setup()


@pytest.fixture(scope="module")
def local_ray():
    _start_env()
    ray.init(
        address="local",  # a new Ray even where a `ray start` cluster runs
        num_cpus=2,
        include_dashboard=False,
        logging_level="ERROR",
        runtime_env={"worker_process_setup_hook": "ray_backends.setup_worker"},
    )
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray-world")
    spec = rb.write_spec(root, rb.build_world(root))
    _, expected = rb.run_both(spec, LocalExecutor(False), root / "local.sqlite")
    return root, spec, expected


def test_resume_after_the_driver_dies_mid_run(local_ray, tmp_path, monkeypatch) -> None:
    spec = rb.write_spec(tmp_path, rb.build_world(tmp_path), replicas=1, full=False)
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    store = tmp_path / "resume.sqlite"
    finish, calls = ray_exec._finish, list[int]()

    def dying(batch, pool, st) -> None:  # the driver is killed right after committing two batches
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(batch.index)
        finish(batch, pool, st)

    monkeypatch.setattr(ray_exec, "_finish", dying)
    killed = RayExecutor(show_progress=False)
    with pytest.raises(KeyboardInterrupt):
        rb.run_both(spec, killed, store)
    assert killed.actors_started == {"echo": 1} and killed.n_pools == 0  # its pool was torn down on the way out
    monkeypatch.setattr(ray_exec, "_finish", finish)
    with open_store(store) as st:
        assert st.count("transcript") == 2  # what was committed survives
    outcome, got = rb.run_both(spec, RayExecutor(show_progress=False), store)
    assert got == expected
    assert (outcome.n_computed, outcome.n_cached) == (2, 2)  # the two lost clips computed, the two stored reused


def test_worker_killed_mid_batch_costs_only_a_retry(local_ray, tmp_path) -> None:
    marker = tmp_path / "crashed"
    spec = rb.write_spec(tmp_path, rb.build_world(tmp_path), echo=f"crash-once-test:{marker}", replicas=1, full=False)
    marker.write_text("local")  # the local reference run does not crash
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    marker.unlink()
    outcome, got = rb.run_both(spec, RayExecutor(show_progress=False), tmp_path / "ray.sqlite")
    assert marker.read_text() != "local"  # a worker did die (it wrote its pid and exited)
    assert got == expected  # nothing lost: every clip has its transcript
    with open_store(tmp_path / "ray.sqlite") as st:
        assert st.count("transcript") == 4  # nothing duplicated
    assert outcome.n_computed == 4


def test_cli_run_with_executor_ray_matches_local_byte_for_byte(local_ray, world, run_cli) -> None:
    root, spec, expected = world  # expected: results.json of the local executor
    code, out, err = run_cli("run", spec, "--executor", "ray", "--store", root / "cli.sqlite")
    assert code == 0, err
    assert (root / "out" / "results.json").read_bytes() == expected
    assert "4 transcriptions computed, 3 from the store" in out  # 4 echo clips, 3 preds answers
    assert "Ray cluster: 1 node(s), 2 CPU, 0 GPU; echo: 2 actor(s) x 0 GPU, 0.5 CPU" in " ".join(out.split())
    code, _, err = run_cli("run", spec, "--address", "auto", "--store", root / "cli.sqlite")
    assert code == 2 and "--address names a Ray cluster; fix: add --executor ray" in err


def test_a_model_that_cannot_load_on_the_workers_stops_the_run_with_its_reason(local_ray, tmp_path, run_cli) -> None:
    spec = rb.write_spec(
        tmp_path, rb.build_world(tmp_path), echo=f"preds:{tmp_path / 'nope.jsonl'}", replicas=1, full=False
    )
    code, _, err = run_cli("run", spec, "--executor", "ray", "--no-progress", "--store", tmp_path / "s.sqlite")
    assert code == 2 and "nope.jsonl" in err and "on Ray worker" in err and len(err.strip().splitlines()) == 1


def test_audio_only_the_driver_can_load_is_decoded_there_and_shipped(local_ray, tmp_path) -> None:
    from asr_audit.runner.executor import Job
    from asr_audit.runner.spec import ModelSpec

    job = Job(ModelSpec("echo", "echo-test:a", batch_size=3), rb.driver_only_corpus())
    with open_store(tmp_path / "local.sqlite") as st:
        local = LocalExecutor(False).run([job], st)[0].outcome
    with open_store(tmp_path / "ray.sqlite") as st:
        remote = RayExecutor(show_progress=False).run([job], st)[0].outcome

    def rows(o):  # everything but the compute time
        return [(r.clip_id, r.reference, r.hypothesis, r.duration) for r in o.records]

    assert len(remote.records) == 2 and rows(remote) == rows(local)
    assert remote.failures == local.failures and "damaged" in remote.failures[0].reason


BATTERY = ("noise:10db", "truncate:1w0.25s", "donor:bench2s", "voice:flite-slt+noise:5db")


def _transcripts(store: Path) -> set[tuple[str, str]]:
    """Every (audio hash, text) the store holds: equal sets = the same audio, bit for bit."""
    with sqlite3.connect(store) as db:
        return set(db.execute("SELECT audio, value FROM results WHERE kind = 'transcript'"))


def test_battery_audio_is_built_on_the_workers_from_recipes_and_matches_local(local_ray, tmp_path, monkeypatch) -> None:
    from asr_audit.probes.battery.recipe import RecipeSource

    if not shutil.which("flite"):
        pytest.skip("flite is not installed")
    spec = rb.write_battery_spec(tmp_path, rb.build_world(tmp_path), BATTERY)
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    built_here, load = [], RecipeSource.load

    def counted(self):  # a recipe built on the driver (the workers are other processes)
        out = load(self)
        built_here.append(self.label)
        return out

    monkeypatch.setattr(RecipeSource, "load", counted)
    calls, transcribe = [], RayExecutor.transcribe

    def counted_calls(self, jobs, store):
        calls.append(sum(len(clips) for clips in jobs.values()))
        return transcribe(self, jobs, store)

    monkeypatch.setattr(RayExecutor, "transcribe", counted_calls)
    ex = RayExecutor(show_progress=False, log=lambda _: None)
    _, got = rb.run_both(spec, ex, tmp_path / "ray.sqlite")
    assert got == expected  # results.json byte for byte
    assert built_here == [] and ex.n_built_on_driver == 0
    assert len(calls) == 2 and calls[0] == 5  # the original audio, then every condition's clips at once
    assert ex.backends == {}  # no model was loaded on the driver
    # the plan, the original audio and the conditions ran on one actor pool: the model loaded once, and
    # the pool was killed when the run ended
    assert ex.actors_started == {"echo": 1} and ex.n_pools == 0
    local = _transcripts(tmp_path / "local.sqlite")
    assert len(local) > 10 and _transcripts(tmp_path / "ray.sqlite") == local  # every derived clip's audio hash
    again = RayExecutor(show_progress=False, log=lambda _: None)
    _, got = rb.run_both(spec, again, tmp_path / "ray.sqlite")
    assert got == expected and 0 < again.n_sent < ex.n_sent
    # a rerun sends only what the store cannot answer: the missing file (plan, original audio) and its
    # recipes (noise, donor: clip and donor part), which fail again as they did; the voiced recipes are
    # keyed by their voice's synthesis key, so their transcripts are found without building them
    assert again.n_sent == 2 + 3


def test_a_recipe_no_worker_can_build_is_built_on_the_driver_shipped_and_logged(local_ray, tmp_path) -> None:
    if not shutil.which("flite"):
        pytest.skip("flite is not installed")
    spec = rb.write_battery_spec(tmp_path, rb.build_world(tmp_path), ("voice:flite-slt+noise:5db",))
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    marker, lines = Path(os.environ[rb.NO_TTS_MARKER]), list[str]()
    ex = RayExecutor(show_progress=False, log=lines.append)
    marker.touch()
    try:
        _, got = rb.run_both(spec, ex, tmp_path / "ray.sqlite")
    finally:
        marker.unlink()
    assert got == expected
    assert ex.n_built_on_driver == 5  # every clip's voice (the missing file's too: its words are known)
    shipped = [line for line in lines if "its recipe was built on the driver and shipped" in line]
    assert len(shipped) == 5 and "not on this test worker" in shipped[0]
    assert _transcripts(tmp_path / "ray.sqlite") == _transcripts(tmp_path / "local.sqlite")


def test_the_masked_probe_runs_on_the_plan_s_actors_with_recipes_and_matches_local(local_ray, tmp_path) -> None:
    """The masked probe's clips (the originals, and each masked span as a recipe with its noise seed) go
    to the actors the plan started: the model loads once, none on the driver, results.json is the local one."""
    pytest.importorskip("pocketsphinx")
    manifest = rb.build_world(tmp_path)
    probe = '[probes.masked]\nkind = "word"\nmethod = "noise"\n'
    spec = rb.write_probe_spec(tmp_path, "masked", manifest, "echo", "echo-test:a", probe)
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    ex = RayExecutor(show_progress=False, log=lambda _: None)
    _, got = rb.run_both(spec, ex, tmp_path / "ray.sqlite")
    assert got == expected
    masked = next(e["result"] for e in json.loads(got)["probes"] if e["probe"] == "masked")
    assert masked["n_recipes"] > 0 and len(masked["items"]) == masked["n_recipes"]
    assert ex.actors_started == {"echo": 1} and ex.backends == {} and ex.n_pools == 0
    assert ex.n_sent > 5  # the plan's 5 clips, then the masked probe's originals and recipes
    assert _transcripts(tmp_path / "ray.sqlite") == _transcripts(tmp_path / "local.sqlite")  # same masked audio


def test_the_courtesy_study_translates_and_isolates_on_the_workers_and_loads_no_model_on_the_driver(
    local_ray, tmp_path
) -> None:
    """The study's translate arm runs as a variant of the model (task = translate) on actors of its own,
    its attn-isolated arm (a white-box model, as its workers report) on the model's actors with the
    windows the driver aligned: nothing loads on the driver, the plan's pool serves every other call,
    and results.json is the local one."""
    pytest.importorskip("pocketsphinx")  # the study's truncation aligns the spoken text
    pytest.importorskip("torch")  # the white-box test backend's cross-attention site
    if not shutil.which("flite"):
        pytest.skip("flite is not installed")
    manifest, spoken = rb.build_courtesy_world(tmp_path)  # 3 clips that say the courtesy the reference omits
    spec = rb.write_courtesy_spec(tmp_path, manifest, "whitebox-test:a", spoken)
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    ex = RayExecutor(show_progress=False, log=lambda _: None)
    _, got = rb.run_both(spec, ex, tmp_path / "ray.sqlite")
    assert got == expected
    result = next(e["result"] for e in json.loads(got)["probes"] if e["probe"] == "courtesy")
    study = {r["condition"]: r for r in result["study"]}
    assert study["translate"]["n"] == 3 and study["translate"]["k"] == 3  # every eligible clip, the courtesy kept
    assert study["attn-isolated"]["n"] == 3 and study["attn-isolated"]["k"] == 3  # decoded with the opener's frames
    assert ex.n_model_rows == 3 and ex.n_rows_shipped == 0  # the 3 eligible clips, as paths, on the workers
    assert ex.backends == {} and ex.n_pools == 0
    assert ex.actors_started == {"tr": 1, "tr [language=en, task=translate]": 1}


def test_lift_and_continuation_run_on_the_actors_match_local_and_a_worker_killed_mid_chunk_costs_a_retry(
    local_ray, tmp_path
) -> None:
    """The lift probe's teacher-forced scoring and the continuation probe's forced decoding run on the
    model's actors (the pool that transcribed the plan): the rows name their clips, silences and cut
    recipes, the driver loads no model, lift's gate transcribes through the store; the worker dies on
    its first scoring chunk, Ray retries it, and results.json is the local one byte for byte, with
    every score and forced output stored once."""
    pytest.importorskip("pocketsphinx")  # the continuation probe aligns the cuts
    marker = tmp_path / "crashed"
    probe = (
        '[probes.lift]\nspans = "full"\ngate_max_wer = 1.0\nresamples = 20\n'
        "[probes.continuation]\nhide_words = 2\nextra_tokens = 3\nresamples = 20\n"
        '[[model]]\nname = "plain"\nspec = "echo-test:a"\nbatch_size = 4\nnum_cpus = 1\n'  # scores nothing
    )
    spec = rb.write_probe_spec(tmp_path, "lift", rb.build_world(tmp_path), "sc", f"score-test:crash={marker}", probe)
    marker.write_text("local")  # the local reference run does not crash
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    marker.unlink()
    ex = RayExecutor(show_progress=False, log=lambda _: None)
    _, got = rb.run_both(spec, ex, tmp_path / "ray.sqlite")
    assert marker.read_text() != "local"  # a worker did die while scoring
    assert got == expected
    probes = {e["probe"]: e["result"] for e in json.loads(got)["probes"]}
    assert probes["lift"]["models"][0]["n"] == 4 and probes["lift"]["models"][0]["scored_rows"] == 8
    cont = probes["continuation"]
    assert cont["models"][0]["n_clips"] == 4 and cont["items"][0]["forced"].endswith(" 3")
    # a model that cannot is skipped with the reason its workers gave, the local run's words
    assert probes["lift"]["skipped"] == [{"model": "plain", "reason": "no score capability"}]
    assert [s["model"] for s in cont["skipped"]] == ["plain"] and "end-of-text banned" in cont["skipped"][0]["reason"]
    assert ex.backends == {} and ex.actors_started == {"sc": 1, "plain": 1} and ex.n_pools == 0
    # 4 clips x (audio, silence) scored, 4 cuts decoded; clips as paths, silences as lengths, cuts as recipes
    assert ex.n_model_rows == 8 + 4 and ex.n_rows_shipped == 0
    with sqlite3.connect(tmp_path / "ray.sqlite") as db, sqlite3.connect(tmp_path / "local.sqlite") as ref:
        rows = "SELECT kind, audio, item, value FROM results WHERE kind IN ('score', 'forced') ORDER BY 1, 2, 3"
        assert db.execute(rows).fetchall() == ref.execute(rows).fetchall()  # nothing duplicated or lost
