"""Experiment spec validation: every bad field gives a one-line error naming file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from asr_audit.errors import ConfigError
from asr_audit.runner.run import Shard
from asr_audit.runner.spec import load_spec

GOOD = """
title = "t"
seed = 3
output = "out"
[[corpus]]
name = "vox"
predictions = "preds"
panel = ["a", "b", "c", "d"]
[[model]]
name = "tiny"
spec = "whisper-tiny.en"
options = { language = "en" }
[probes.refdis]
preset = "paper"
[probes.switch_rate]
min_per_arm = 2
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "audit.toml"
    p.write_text(text)
    return p


def test_good_spec_resolves_paths(tmp_path: Path) -> None:
    s = load_spec(write(tmp_path, GOOD))
    assert s.seed == 3 and s.output == str(tmp_path / "out")
    assert s.corpora[0].predictions == str(tmp_path / "preds") and s.corpora[0].panel == ("a", "b", "c", "d")
    assert s.models[0].options == {"language": "en"}
    assert s.probes == {"refdis": {"preset": "paper"}, "switch_rate": {"min_per_arm": 2}}
    assert s.to_dict()["seed"] == 3
    assert s.models[0].device is None


def test_model_device_is_read_and_recorded(tmp_path: Path) -> None:
    s = load_spec(
        write(tmp_path, GOOD.replace('spec = "whisper-tiny.en"', 'spec = "whisper-tiny.en"\ndevice = "cuda:1"'))
    )
    assert s.models[0].device == "cuda:1"
    assert "device" not in s.to_dict()["models"][0]  # the identity records the resolved device kind


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (("seed = 3", 'seed = "x"'), r"field 'seed' is 'x' \(str\), expected int"),
        (('predictions = "preds"', 'predictions = "preds"\nspec = "a.jsonl"'), r"corpus\[0\]' needs exactly one of"),
        (('name = "vox"', 'name = "vox"\ncolour = 1'), r"field 'corpus\[0\]\.colour' is not a known field"),
        (("[probes.refdis]", "[probes.nope]"), r"field 'probes\.nope' is not a known probe; fix: use one of .*refdis"),
        (('preset = "paper"', "bogus = 1"), r"field 'probes\.refdis\.bogus' is not a parameter of refdis"),
        (('options = { language = "en" }', "options = { beam = 2 }"), r"field 'model\[0\]\.options' is invalid"),
        (('spec = "whisper-tiny.en"', ""), r"field 'model\[0\]\.spec' is missing"),
        (('title = "t"', 'title = "t"\nextra = 1'), r"field 'extra' is not a known field"),
        (('title = "t"', 'title = "t"\nexecutor = "dask"'), r"field 'executor' is 'dask'; fix: use one of local, ray"),
        (('title = "t"', 'title = "t"\nray_address = "auto"'), r"field 'ray_address' is set but executor is 'local'"),
        (('options = { language = "en" }', "num_gpus = -1"), r"field 'model\[0\]\.num_gpus' is -1\.0"),
        (
            ('options = { language = "en" }', "num_cpus = true"),
            r"field 'model\[0\]\.num_cpus' is True, expected a number",
        ),
        (('options = { language = "en" }', "replicas = 0"), r"field 'model\[0\]\.replicas' is 0"),
        (('spec = "whisper-tiny.en"', 'spec = "whisper-tiny.en"\ndevice = "tpu"'), r"'model\[0\]\.device' is 'tpu'"),
    ],
)
def test_bad_fields(tmp_path: Path, change: tuple[str, str], pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern) as info:
        load_spec(write(tmp_path, GOOD.replace(*change)))
    assert str(tmp_path / "audit.toml") in str(info.value) and "\n" not in str(info.value)


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_spec(write(tmp_path, "seed = = 1"))
    with pytest.raises(ConfigError, match="no such spec file"):
        load_spec(tmp_path / "nope.toml")


def test_shards_partition_clips() -> None:
    ids = [f"clip-{i}" for i in range(200)]
    shards = [Shard.parse(f"{i}/3") for i in range(3)]
    owners = [[s.owns(c) for s in shards] for c in ids]
    assert all(sum(o) == 1 for o in owners)
    assert all(20 < sum(o[i] for o in owners) for i in range(3))
    for bad in ("3/3", "x", "1/0"):
        with pytest.raises(ConfigError):
            Shard.parse(bad)


def test_executor_fields_stay_out_of_results(tmp_path: Path) -> None:
    """Where the work runs changes no number: results.json (spec.to_dict) is the same either way."""
    ray_spec = GOOD.replace('title = "t"', 'title = "t"\nexecutor = "ray"\nray_address = "auto"').replace(
        'options = { language = "en" }', 'options = { language = "en" }\nnum_gpus = 0.5\nnum_cpus = 2\nreplicas = 3'
    )
    s = load_spec(write(tmp_path, ray_spec))
    assert (s.executor, s.ray_address) == ("ray", "auto")
    assert (s.models[0].num_gpus, s.models[0].num_cpus, s.models[0].replicas) == (0.5, 2.0, 3)
    assert s.to_dict() == load_spec(write(tmp_path, GOOD)).to_dict()


def test_make_executor() -> None:
    from asr_audit.runner.run import LocalExecutor, make_executor

    assert isinstance(make_executor("local"), LocalExecutor)
    assert type(make_executor("ray", address="auto")).__name__ == "RayExecutor"  # Ray itself loads on run
    with pytest.raises(ConfigError, match="--address names a Ray cluster; fix: add --executor ray"):
        make_executor("local", address="auto")
    with pytest.raises(ConfigError, match="--executor 'dask' is not an executor"):
        make_executor("dask")
