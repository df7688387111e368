"""``asr-audit mech direction`` on captures written in the capture format, and the one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from asr_audit.mech.directions import Direction, load_direction, save_direction
from asr_audit.mechrun.capture import FORMAT, MANIFEST, site_file

SITES = ("decoder.layers.0.out", "decoder.layers.1.out")


def _write_capture(root: Path, rows: dict[str, np.ndarray], model_key: str = "k1") -> None:
    root.mkdir(parents=True)
    n = len(next(iter(rows.values())))
    for site, arr in rows.items():
        (root / site_file(site)).write_bytes(np.ascontiguousarray(arr, dtype="<f4").tobytes())
    manifest = {
        "format": FORMAT,
        "model": {"spec": "fake", "key": model_key},
        "sites": list(rows),
        "widths": {s: int(a.shape[1]) for s, a in rows.items()},
        "dtype": "float32",
        "pool": "mean",
        "clips": [{"id": f"c{i}", "audio_hash": f"h{i}", "offset": i, "rows": 1} for i in range(n)],
    }
    (root / MANIFEST).write_text(json.dumps(manifest))


def _corpus(root: Path) -> Path:
    """A one-clip manifest: the corpus is read before the directions (its audio is never reached)."""
    path = root / "clips.jsonl"
    path.write_text(json.dumps({"id": "c0", "audio_filepath": "c0.wav", "text": "a b"}) + "\n")
    return path


def test_direction_verb_sweeps_layers_and_saves_by_name(tmp_path: Path, run_cli) -> None:
    rng = np.random.default_rng(0)
    b0, b1 = rng.standard_normal((20, 6)), rng.standard_normal((20, 6))
    a0 = b0 + 0.05 * rng.standard_normal((20, 6))  # layer 0: no separation
    a1 = b1 + 3.0 * np.eye(6)[2]  # layer 1: separated along axis 2
    _write_capture(tmp_path / "A", {SITES[0]: a0, SITES[1]: a1})
    _write_capture(tmp_path / "B", {SITES[0]: b0, SITES[1]: b1})
    dirs, out = tmp_path / "dirs", tmp_path / "sweep.json"
    code, stdout, stderr = run_cli(
        "mech", "direction", "--a", tmp_path / "A", "--b", tmp_path / "B", "--name", "v", "--k", "2",
        "--directions", dirs, "--json", out,
    )  # fmt: skip
    assert code == 0, stderr
    data = json.loads(out.read_text())
    assert data["site"] == SITES[1] and [r["site"] for r in data["sweep"]] == list(SITES)
    assert data["sweep"][1]["auc"] > 0.95 > data["sweep"][0]["auc"]
    d = load_direction("v", dirs)
    assert d.site == SITES[1] and d.k == 2 and d.provenance["set_a"]["ids"][0] == "c0"
    assert abs(d.basis[0, 2]) > 0.9

    _write_capture(tmp_path / "C", {SITES[0]: b0, SITES[1]: b1}, model_key="other")
    code, _, stderr = run_cli("mech", "direction", "--a", tmp_path / "A", "--b", tmp_path / "C", "--name", "w")
    assert code == 2 and "different models" in stderr
    code, _, stderr = run_cli(
        "mech", "steer", "-m", "whisper-tiny.en-pt", "-c", _corpus(tmp_path), "--truth", tmp_path,
        "--direction", "nope", "--directions", dirs,
    )  # fmt: skip
    assert code == 2 and "saved: v" in stderr and "asr-audit mech direction" in stderr


def test_steer_verb_mean_ablation_and_multi_site_errors(tmp_path: Path, run_cli) -> None:
    dirs = tmp_path / "dirs"
    v, basis = np.array([1.0, 0.0, 0.0]), np.array([[1.0, 0.0, 0.0]])
    save_direction(Direction("old", SITES[0], v, basis), dirs)  # saved without set B's mean
    save_direction(Direction("new0", SITES[0], v, basis, {}, np.zeros(3)), dirs)
    save_direction(Direction("new1", SITES[1], v, basis, {}, np.zeros(3)), dirs)
    base = ("mech", "steer", "-m", "whisper-tiny.en-pt", "-c", _corpus(tmp_path), "--truth", tmp_path)
    code, _, stderr = run_cli(*base, "--direction", "old", "--mode", "mean-ablate", "--directions", dirs)
    assert code == 2 and "without set B's mean" in stderr and "asr-audit mech direction" in stderr
    code, _, stderr = run_cli(*base, "--direction", "new0,new1", "--site", SITES[1], "--directions", dirs)
    assert code == 2 and "--site 'decoder.layers.1.out' needs a single direction" in stderr
    code, _, stderr = run_cli(*base, "--direction", "new0,old", "--directions", dirs)
    assert code == 2 and "share a site" in stderr
    code, _, stderr = run_cli(*base, "--direction", "new0", "--mode", "zero", "--directions", dirs)
    assert code == 2 and "mean-ablate" in stderr
    code, _, stderr = run_cli(*base, "--direction", "old", "--mode", "clamp", "--directions", dirs)
    assert code == 2 and "without set B's mean, which clamp needs" in stderr
    code, _, stderr = run_cli(
        *base, "--direction", "new0", "--mode", "clamp", "--clamp-at", "inf", "--directions", dirs
    )
    assert code == 2 and "--clamp-at inf must be finite" in stderr
    code, _, stderr = run_cli(
        *base, "--direction", "new0", "--mode", "clamp", "--trigger-at", "-1", "--directions", dirs
    )
    assert code == 2 and "--trigger-at -1.0 must be at or above clamp_at 0.0" in stderr
    for bad in ("2:1", "1", "a:b"):
        code, _, stderr = run_cli(*base, "--direction", "new0", "--positions", bad, "--directions", dirs)
        assert code == 2 and f"--positions {bad!r} is not P0:P1" in stderr
    code, _, stderr = run_cli(*base, "--direction", "new0", "--gate", "old", "--directions", dirs)
    assert code == 2 and "gate direction 'old' was saved without set B's mean" in stderr
    code, _, stderr = run_cli(*base, "--direction", "new0", "--gate", "new1", "--gate-at", "nan", "--directions", dirs)
    assert code == 2 and "--gate-at nan must be finite" in stderr
