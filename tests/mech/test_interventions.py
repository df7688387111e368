"""Interventions on a plain torch module: ablation (rank k, centered), induction, frames, keys, cleanup."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from asr_audit.errors import ConfigError  # noqa: E402
from asr_audit.mech.interventions import Intervention, intervene  # noqa: E402

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
