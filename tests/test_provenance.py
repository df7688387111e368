"""Provenance records of result files: the code hash follows the source, a reader marks stale files."""

from __future__ import annotations

import subprocess

import pytest

from asr_audit.provenance import (
    Provenance,
    code_hash,
    file_hash,
    freshness,
    git_commit,
    make_provenance,
    tree_hash,
)


def test_code_hash_covers_modules_and_files(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text("print(1)\n")
    one = code_hash(["asr_audit.provenance"], ["bench.py"], tmp_path)
    assert one == code_hash(["asr_audit.provenance"], ["bench.py"], tmp_path)  # deterministic
    script.write_text("print(2)\n")
    assert code_hash(["asr_audit.provenance"], ["bench.py"], tmp_path) != one
    script.unlink()  # a removed script changes the hash instead of failing
    assert code_hash(["asr_audit.provenance"], ["bench.py"], tmp_path) != one
    # a package covers every module under it
    assert code_hash(["asr_audit.stats"]) != code_hash(["asr_audit.stats.flags"])


def test_unknown_module_is_a_one_line_error():
    with pytest.raises(ValueError, match="fix"):
        code_hash(["asr_audit.no_such_module"])
    with pytest.raises(ValueError, match="asr_audit.<module>"):
        code_hash(["numpy"])


def test_freshness_fresh_stale_unverified(tmp_path):
    (tmp_path / "bench.py").write_text("x = 1\n")
    prov = make_provenance(["asr_audit.provenance"], [3, 4], {"a": "00"}, ["bench.py"], tmp_path, ["bench.py"])
    assert prov.seeds == (3, 4) and prov.command == "bench.py" and prov.date.endswith("Z")
    record = prov.to_dict()
    assert Provenance.from_dict(record) == prov
    assert freshness(record, tmp_path).status == "fresh"
    (tmp_path / "bench.py").write_text("x = 2\n")
    stale = freshness(record, tmp_path)
    assert stale.status == "stale" and not stale.ok and "rerun `bench.py`" in stale.detail
    assert freshness(None).status == "unverified"
    assert freshness({"modules": []}).status == "unverified"  # no code hash: unreadable


def test_input_hashes(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("a")
    b.write_text("b")
    assert file_hash(a) == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
    assert tree_hash([a, b], tmp_path) == tree_hash([b, a], tmp_path)
    b.write_text("c")
    assert tree_hash([a, b], tmp_path) != tree_hash([a], tmp_path)


def test_git_commit_marks_a_dirty_tree(tmp_path):
    assert git_commit(tmp_path) is None  # not a git tree

    def run(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    run("init", "-q")
    (tmp_path / "f").write_text("1")
    run("add", "f")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    clean = git_commit(tmp_path)
    assert clean and len(clean) == 40
    (tmp_path / "f").write_text("2")
    assert git_commit(tmp_path) == clean + "+dirty"
