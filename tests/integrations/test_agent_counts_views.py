# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft copies with different agent counts (``num_uavs`` per copy,
below the batch's width) through every view: the rows beyond a copy's count
are never in play: out of the vector env's and the agent-level env's
``mask``, reward 0, no flags, no episode of their own; RLlib's per-copy
dicts never hold them; TorchRL's ``mask`` is False there.  Returns and
lengths are what a hand count of the in-play rows gives."""

import numpy as np
import pytest

import seer_envs

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

MC = 5
KW = dict(num_uavs=[3, 2], num_targets=[1, 1], arena_size=300.0, dynamics_substeps=2,
          max_cycles=MC)
COUNTS = [3, 2]
IN_PLAY = np.array([[True, True, True], [True, True, False]])
STEPS = 2 * MC + 2          # two episodes and the restarts between


def _zeros(E=2, A=3):
    return np.zeros((E, A, 2), np.float32)


def test_vector_env_mask_rewards_and_episode_stats():
    v = seer_envs.vector_env("aircraft_v0", 2, num_threads=2, **KW)
    _, infos = v.reset(seed=0)
    assert infos["mask"].tolist() == IN_PLAY.tolist()
    ret = np.zeros((2, 3))
    ends = 0
    for k in range(STEPS):
        _, rew, term, trunc, infos = v.step(_zeros())
        assert not rew[1, 2] and not term[1, 2] and not trunc[1, 2]
        ret += rew
        if "seer_episode" in infos:         # every copy truncated at max_cycles
            ends += 1
            ep = infos["seer_episode"]
            assert ep["l"].tolist() == [[MC] * 3, [MC, MC, 0]]
            np.testing.assert_allclose(ep["r"], ret)
            assert ep["r"][1, 2] == 0.0
            ret[:] = 0.0
        else:
            assert infos["mask"].tolist() == IN_PLAY.tolist()
    assert ends == 2


def test_agent_level_env_rows_beyond_a_count_never_play():
    av = seer_envs.agent_vector_env("aircraft_v0", 2, num_threads=1, **KW)
    _, infos = av.reset(seed=0)
    assert infos["mask"].tolist() == IN_PLAY.reshape(-1).tolist()
    for _ in range(STEPS):
        _, rew, _, trunc, infos = av.step(np.zeros((6, 2), np.float32))
        assert not infos["mask"][5] and rew[5] == 0.0 and not trunc[5]
        if "_seer_episode" in infos:
            assert not infos["_seer_episode"][5]
            assert infos["_seer_episode"][:5].all()


def test_rllib_dicts_hold_only_the_agents_in_play():
    pytest.importorskip("ray")
    from seer_envs.integrations.rllib import SeerVectorMultiAgentEnv
    env = SeerVectorMultiAgentEnv("aircraft_v0", 2, num_threads=1, **KW)
    obs, _ = env.reset(seed=0)
    names = [[f"uav_{j}" for j in range(n)] for n in COUNTS]
    assert [sorted(d) for d in obs] == names
    restarts = 0
    for _ in range(STEPS):
        obs, rew, term, trunc, _ = env.step([{a: np.zeros(2, np.float32) for a in d} for d in obs])
        assert [sorted(d) for d in obs] == names
        for c in range(2):
            assert set(rew[c]) == set(names[c])
            assert set(term[c]) - {"__all__"} == set(names[c])
            restarts += trunc[c]["__all__"]
    assert restarts == 4


def test_torchrl_mask_and_rewards():
    pytest.importorskip("torchrl")
    from seer_envs.integrations.torchrl import torchrl_env
    env = torchrl_env("aircraft_v0", 2, num_threads=1, **KW)
    td = env.rollout(STEPS, break_when_any_done=False)
    mask = td["next", "agents", "mask"].numpy()                 # (copies, steps, agents)
    rew = td["next", "agents", "reward"].numpy()[..., 0]
    done = td["next", "agents", "done"].numpy()[..., 0]
    assert not mask[1, :, 2].any() and not rew[1, :, 2].any() and not done[1, :, 2].any()
    assert mask[:, :MC - 1, :2].all() and mask[0, :MC - 1, 2].all()
    assert td["agents", "mask"].numpy()[1, 0].tolist() == [True, True, False]
    assert td["next", "done"].numpy()[:, MC - 1].all()          # both copies truncated at max_cycles
