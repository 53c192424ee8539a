# SPDX-License-Identifier: BSD-3-Clause
"""Cores reserved for a learner (seer_runtime.reserve_cores) bind an env at
num_threads="auto", in a single env and a vector env, and leave outputs
unchanged."""
import numpy as np
import pytest

import seer_envs
import seer_runtime
from seer_runtime import _threads


@pytest.fixture
def reserve_all_but_one(monkeypatch):
    monkeypatch.setattr(_threads, "_reserved", [None])
    monkeypatch.delenv("SEER_RESERVED_CORES", raising=False)
    seer_runtime.reserve_cores(max(0, seer_runtime.available_cpus() - 1))


@pytest.mark.parametrize("make", [lambda: seer_envs.make("pcs_v0", num_threads="auto", grid_height=3, grid_width=3),
                                  lambda: seer_envs.vector_env("pcs_v0", 2, num_threads="auto",
                                                               grid_height=3, grid_width=3)])
def test_reserved_cores_bind_auto(reserve_all_but_one, make):
    env = make()
    env.reset(seed=0)
    assert env.num_threads == 1
    if seer_runtime.available_cpus() > 1 and seer_runtime.openmp_enabled():
        assert env.thread_choice.caps == {"reserved": 1}
    env.close()


def test_reserved_cores_leave_outputs_unchanged(monkeypatch):
    monkeypatch.setattr(_threads, "_reserved", [None])
    outs = []
    for kept in (0, max(0, seer_runtime.available_cpus() - 1)):
        seer_runtime.reserve_cores(kept)
        env = seer_envs.vector_env("pcs_hotspot_v1", 2, num_threads="auto", grid_height=4, grid_width=4)
        obs = [env.reset(seed=5)[0]]
        rng = np.random.default_rng(0)
        for _ in range(6):
            obs.append(env.step(rng.integers(0, 6, (2, 16)))[0])
        outs.append(np.stack(obs))
        env.close()
    assert np.array_equal(*outs)
