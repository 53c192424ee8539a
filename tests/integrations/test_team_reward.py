# SPDX-License-Identifier: BSD-3-Clause
"""PCS's team_reward_share: the mix it promises, equal across thread counts."""

import numpy as np
import pytest

import seer_envs
from seer_envs.pcs.rewards import mix_team_reward

KW = dict(grid_width=6, grid_height=5, max_cycles=12, move_interval_mean=60.0, call_interarrival_mean=200.0)


def rollout(share, threads, seed):
    env = seer_envs.make("pcs_v0", num_threads=threads, team_reward_share=share, **KW)
    env.reset_arrays(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    while env.agents:
        out.append(env.step_arrays(rng.integers(0, 6, env.config.num_cells))[1])
    env.close()
    return np.stack(out)


@pytest.mark.parametrize("seed", [0, 3])
def test_share_mixes_own_and_team_reward(seed):
    own = rollout(0.0, 1, seed)
    assert own.std(axis=1).max() > 0                    # cells differ: the mix is visible
    for share in (0.25, 1.0):
        mixed = rollout(share, 1, seed)
        expect = (1 - share) * own + share * own.mean(axis=1, dtype=np.float64, keepdims=True)
        np.testing.assert_allclose(mixed, expect, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(mixed.sum(axis=1), own.sum(axis=1), rtol=1e-5, atol=1e-4)
    assert np.allclose(rollout(1.0, 1, seed).std(axis=1), 0, atol=1e-5)


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_share_is_serially_equivalent(threads, share):
    assert np.array_equal(rollout(share, 1, 7), rollout(share, threads, 7))


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_share_is_validated(bad):
    with pytest.raises(ValueError, match="team_reward_share"):
        seer_envs.make("pcs_v0", team_reward_share=bad, **KW)


def test_mix_team_reward_in_place():
    # one row per copy: each copy mixes with its own mean
    r = np.array([[-2.0, 0.0, -4.0], [0.0, 0.0, -6.0]], np.float32)
    assert mix_team_reward(r, 0.5) is r
    assert np.allclose(r, [[-2.0, -1.0, -3.0], [-1.0, -1.0, -4.0]])
    r0 = r.copy()
    assert np.array_equal(mix_team_reward(r, 0.0), r0)
