"""Interventions on a plain torch module: ablation (rank k, centered), induction, frames, keys, cleanup."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from asr_audit.errors import ConfigError  # noqa: E402
from asr_audit.mech.interventions import Intervention, intervene, parse_positions  # noqa: E402

SITE = "encoder.layers.0.out"


class Net:
    def __init__(self) -> None:
        self.mod = torch.nn.Identity()

    def site_module(self, name: str):
        return self.mod


def _run(net: Net, iv, h):
    with intervene(net, iv):
        return net.mod(h).double().numpy()


def test_centered_ablation_sets_the_projection_to_the_centers() -> None:
    net, rng = Net(), np.random.default_rng(0)
    h = torch.tensor(rng.standard_normal((2, 5, 6)))
    basis, center = rng.standard_normal((2, 6)), rng.standard_normal(6)
    plain = Intervention.ablation([SITE], basis)
    centered = Intervention.ablation([SITE], basis, center=center)
    q = np.asarray(plain.basis)
    assert np.allclose(_run(net, plain, h) @ q.T, 0, atol=1e-12)
    assert np.allclose(_run(net, centered, h) @ q.T, np.broadcast_to(center @ q.T, (2, 5, 2)), atol=1e-12)
    assert plain.key != centered.key and centered.to_dict()["centered"]
    assert not net.mod._forward_hooks


def test_induction_frames_and_alpha_zero() -> None:
    net = Net()
    h = torch.zeros(1, 4, 3, dtype=torch.float64)
    v = np.array([1.0, 2.0, 3.0])
    assert np.array_equal(_run(net, Intervention.induction([SITE], v, 0.0), h), h.numpy())
    out = _run(net, Intervention.induction([SITE], v, 2.0, frames=(1, 3)), h)
    assert np.array_equal(out[0, 1], 2 * v) and np.array_equal(out[0, 0], 0 * v) and np.array_equal(out[0, 3], 0 * v)
    with pytest.raises(ConfigError, match="encoder sites only"):
        Intervention.induction(["decoder.layers.0.out"], v, 1.0, frames=(0, 2))
    with pytest.raises(ConfigError, match="rank-deficient"):
        Intervention.ablation([SITE], np.array([[1.0, 0, 0], [2.0, 0, 0]]))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_clamp_caps_the_projection_and_leaves_positions_below_bit_identical(dtype) -> None:
    net, rng = Net(), np.random.default_rng(1)
    h = torch.tensor(rng.standard_normal((3, 7, 6)), dtype=dtype)
    basis, center = rng.standard_normal((2, 6)), rng.standard_normal(6)
    iv = Intervention.clamping([SITE], basis, 0.3, center=center)
    q = np.asarray(iv.basis)
    before = (h.double().numpy() - center) @ q.T
    after = (_run(net, iv, h) - center) @ q.T
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    assert after.max() <= 0.3 + tol  # every row's projection capped at the limit
    over = (before > 0.3).any(-1)
    assert over.any() and not over.all()  # the draw has positions on both sides
    out = _run(net, iv, h)
    assert np.array_equal(out[~over], h.double().numpy()[~over])  # below the threshold: untouched, bit for bit
    # a capped row moves onto the threshold; the other row of the same position keeps its projection
    assert np.allclose(after[before > 0.3], 0.3, atol=tol * 10)
    kept = over[..., None] & (before <= 0.3)
    assert kept.any() and np.allclose(after[kept], before[kept], atol=tol * 10)
    # +inf is the identity; the limit enters the key; a NaN limit is refused
    assert np.array_equal(_run(net, Intervention.clamping([SITE], basis, np.inf, center=center), h), h.double().numpy())
    assert iv.key != Intervention.clamping([SITE], basis, 0.4, center=center).key
    assert iv.to_dict()["limit"] == 0.3 and Intervention.clamping([SITE], basis, np.inf).to_dict()["limit"] is None
    assert iv.key != Intervention.ablation([SITE], basis, center=center).key
    with pytest.raises(ConfigError, match="clamp limit"):
        Intervention.clamping([SITE], basis, float("nan"))
    assert not net.mod._forward_hooks
    # the cap is one-sided, so the basis keeps each given row's sign (orthonormalizing may flip it)
    neg = Intervention.clamping([SITE], np.array([[-2.0, 0.0, 0.0]]), 0.0)
    x = torch.tensor([[[-3.0, 1.0, 1.0], [3.0, 1.0, 1.0]]], dtype=torch.float64)
    assert neg.basis == ((-1.0, 0.0, 0.0),)
    assert _run(net, neg, x).tolist() == [[[0.0, 1.0, 1.0], [3.0, 1.0, 1.0]]]


def test_clamp_with_a_trigger_moves_only_projections_beyond_it_down_to_the_limit() -> None:
    net, rng = Net(), np.random.default_rng(2)
    h = torch.tensor(rng.standard_normal((2, 9, 5)))
    basis, center = rng.standard_normal((1, 5)), rng.standard_normal(5)
    iv = Intervention.clamping([SITE], basis, -0.2, center=center, trigger=0.4)
    q = np.asarray(iv.basis)[0]
    before = (h.numpy() - center) @ q
    out = _run(net, iv, h)
    after = (out - center) @ q
    moved = before > 0.4
    assert moved.any() and (~moved & (before > -0.2)).any()  # both kinds of positions occur
    assert np.allclose(after[moved], -0.2, atol=1e-12)  # beyond the trigger: all the way down to the limit
    assert np.array_equal(out[~moved], h.numpy()[~moved])  # between limit and trigger: untouched, bit for bit
    same = Intervention.clamping([SITE], basis, -0.2, center=center)
    assert iv.key != same.key and same.to_dict()["trigger"] == -0.2 and iv.to_dict()["trigger"] == 0.4
    with pytest.raises(ConfigError, match="at or above the limit"):
        Intervention.clamping([SITE], basis, 0.5, trigger=0.1)
    assert np.array_equal(
        _run(net, Intervention.clamping([SITE], basis, -0.2, center=center, trigger=np.inf), h), h.numpy()
    )


def test_parse_positions_reads_p0_p1_and_refuses_anything_else() -> None:
    assert parse_positions("1:2") == (1, 2) and parse_positions(" 0 : 7 ") == (0, 7)
    for bad in ("2:1", "1:1", "1", ":2", "1:", "a:2", "-1:2", "1.5:2"):
        with pytest.raises(ValueError, match="expected P0:P1 with 0 <= P0 < P1"):
            parse_positions(bad)


def test_gate_opens_above_its_threshold_and_refuses_bad_fields() -> None:
    from asr_audit.mech.interventions import Gate

    g = Gate.between("decoder.layers.1.out", np.array([3.0, 4.0]), np.zeros(2), label="voice")
    assert g.vector == pytest.approx((0.6, 0.8)) and g.threshold == pytest.approx(2.5) and g.center == (0.0, 0.0)
    assert g.opens(np.array([3.0, 4.0])) and not g.opens(np.zeros(2)) and not g.opens(np.array([1.5, 2.0]))
    keys = {g.key, Gate(g.site, g.vector, g.center, 2.4).key, Gate(g.site, g.vector, g.center, 2.5, position=3).key}
    assert len(keys) == 3 and Gate(g.site, g.vector, g.center, g.threshold, label="other").key == g.key
    bad: list[tuple[dict[str, Any], str]] = [
        ({"site": "encoder.layers.0.out"}, "not a decoder site"),
        ({"vector": (1.0, 1.0)}, "divide it by its norm"),
        ({"center": (0.0,)}, "center has width 1"),
        ({"threshold": float("nan")}, "threshold"),
        ({"position": -1}, "position"),
    ]
    for change, message in bad:
        fields: dict[str, Any] = {"site": g.site, "vector": g.vector, "center": g.center, "threshold": 1.0} | change
        with pytest.raises(ConfigError, match=message):
            Gate(**fields)
    with pytest.raises(ConfigError, match="coincide"):
        Gate.between("decoder.layers.1.out", np.ones(2), np.ones(2))
