"""The Ray executor on a two-node cluster simulated on this machine (``ray.cluster_utils.Cluster``):
one actor per node, audio only the driver can read shipped through the object store, and
``results.json`` byte-identical to the local executor's.

Marked ``ray``: run only inside a loopback-only network namespace (see ``tests/conftest.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

import ray_backends as rb  # noqa: E402 - tests/support, after the skip

from asr_audit.runner.ray_exec import RayExecutor  # noqa: E402
from asr_audit.runner.run import LocalExecutor  # noqa: E402

pytestmark = pytest.mark.ray

SRC = Path(rb.__file__).resolve().parents[2] / "src"


@pytest.fixture()
def two_nodes():
    from ray.cluster_utils import Cluster

    paths = [str(SRC), str(Path(rb.__file__).parent), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    rb.setup()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    # every worker treats the `driver-only` folder as out of its reach
    ray.init(
        address=cluster.address,
        logging_level="ERROR",
        runtime_env={"worker_process_setup_hook": "ray_backends.setup_hide"},
    )
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def test_two_nodes_ship_driver_only_audio_and_match_local(two_nodes, tmp_path) -> None:
    spec = rb.write_spec(tmp_path, rb.build_world(tmp_path, rb.HIDDEN), replicas=2, num_cpus=1, full=False)
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    executor = RayExecutor(show_progress=False)
    outcome, got = rb.run_both(spec, executor, tmp_path / "ray.sqlite")
    assert got == expected  # every clip transcribed from shipped bytes; the missing file fails as locally
    assert outcome.n_computed == 4 and executor.n_shipped == 4
    # the actors (one CPU each, one CPU per node) sit on the cluster's nodes; which of them answered
    # first depends on start-up times, so only membership is certain
    node_ids = {n["NodeID"][:12] for n in ray.nodes()}
    assert executor.nodes["echo"] and {n.split("(node ")[1].rstrip(")") for n in executor.nodes["echo"]} <= node_ids
    assert b"audio file not found" in got
    # lift scores on the same nodes; the clips' files are out of the workers' reach, so each scoring
    # chunk comes back unresolved and is sent again with the samples the driver read
    probe = '[probes.lift]\nspans = "full"\ngate_max_wer = 1.0\nresamples = 20\n'
    spec = rb.write_probe_spec(tmp_path, "lift", tmp_path / rb.HIDDEN / "manifest.jsonl", "sc", "score-test:a", probe)
    _, expected = rb.run_both(spec, LocalExecutor(False), tmp_path / "local.sqlite")
    lines: list[str] = []
    executor = RayExecutor(show_progress=False, log=lines.append)
    _, got = rb.run_both(spec, executor, tmp_path / "ray.sqlite")
    assert got == expected and executor.n_rows_shipped == 4 and executor.backends == {}
    assert sum("rebuilt on the driver and shipped" in line for line in lines) == 4
