# SPDX-License-Identifier: BSD-3-Clause
"""The CleanRL-style trainers' hidden activation, ``seer_bench.ppo.Tanh``
(tanh as ``2 sigmoid(2x) - 1``, a quarter of torch's tanh's cost on the
CPU): its values and gradients are tanh's, and every trainer uses it."""

import ast
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

from seer_bench.ppo import Tanh  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINERS = ("cleanrl_ippo_pcs.py", "cleanrl_mappo_pcs.py", "cleanrl_ppo_aircraft.py", "cleanrl_mappo_aircraft.py")


def test_tanh_values_and_gradients_are_torchs():
    x = torch.cat([torch.linspace(-30, 30, 20001), torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e-4, 88.0, -88.0, 1e4])])
    x.requires_grad_(True)
    y = Tanh()(x)
    ref = torch.tanh(x)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert (y - ref).abs().max().item() < 3e-7
    assert y.abs().max().item() <= 1.0 and torch.isfinite(y).all()
    assert y[x > 20].eq(1).all() and y[x < -20].eq(-1).all()
    g = torch.randn(x.shape, generator=torch.Generator().manual_seed(0))
    (gy,) = torch.autograd.grad(y, x, g)
    (gref,) = torch.autograd.grad(ref, x, g)
    assert (gy - gref).abs().max().item() < 1e-6
    x64 = torch.randn(64, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Tanh(), (x64,))


def test_tanh_without_grad_and_in_a_module_saves_and_loads(tmp_path):
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), Tanh())
    with torch.no_grad():
        out = net(torch.ones(2, 3))
    torch.save(net.state_dict(), tmp_path / "m.pt")
    twin = torch.nn.Sequential(torch.nn.Linear(3, 4), Tanh())
    twin.load_state_dict(torch.load(tmp_path / "m.pt"))
    np.testing.assert_array_equal(twin(torch.ones(2, 3)).detach().numpy(), out.numpy())


@pytest.mark.parametrize("script", TRAINERS)
def test_every_trainer_uses_the_shared_activation(script):
    """An ``nn.Tanh`` back in a trainer would quietly cost a quarter of its
    update (docs/measurements/dev2-2026-12-07/README.md)."""
    tree = ast.parse(open(os.path.join(ROOT, "examples", script)).read())
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call)]
    names = [c.attr if isinstance(c, ast.Attribute) else getattr(c, "id", "") for c in calls]
    assert "Tanh" in names
    assert not any(isinstance(c, ast.Attribute) and c.attr == "Tanh" for c in calls), \
        f"{script} builds torch's nn.Tanh; use seer_bench.ppo.Tanh"
