# SPDX-License-Identifier: BSD-3-Clause
"""One episode, one report in the TorchRL and RLlib views: the agent-exit
scenario of tests/envs/test_episode_report.py gives each agent's end at its
step, the hand count's return and length, and the same mask."""

import numpy as np
import pytest
from seer_test_helpers import EXIT_ACTS as ACTS, EXIT_KW as KW
from seer_test_helpers import exit_hand_count as hand_count


def test_torchrl_reports_each_agent_at_its_step():
    pytest.importorskip("torchrl")
    import torch
    from seer_envs.integrations.torchrl import torchrl_env
    want = hand_count()
    env = torchrl_env("aircraft_v0", 2, num_threads=2, **KW)
    env.set_seed(0)
    td = env.reset()
    seen, ret, mask = {}, np.zeros((2, 4)), td["agents", "mask"].numpy()
    assert mask.all()
    for k in range(1, 31):
        td["agents", "action"] = torch.from_numpy(np.stack([ACTS, ACTS]))
        nxt = env.step(td)["next"]
        rew = nxt["agents", "reward"].numpy()[..., 0]
        term = nxt["agents", "terminated"].numpy()[..., 0]
        trunc = nxt["agents", "truncated"].numpy()[..., 0]
        done = nxt["agents", "done"].numpy()[..., 0]
        assert (rew[~mask] == 0).all() and not done[~mask].any()      # out of play: nothing
        np.testing.assert_array_equal(done, term | trunc)
        ret[mask] += rew[mask]
        for c, i in zip(*np.nonzero(done)):
            seen[(int(c), int(i))] = (k, "term" if term[c, i] else "trunc", ret[c, i])
        mask = nxt["agents", "mask"].numpy()
        td = nxt
    assert nxt["truncated"].numpy().all() and not mask.any()
    # copy 0 seeded 0 (copy 1: 1): copy 0 is the hand count's episode
    for i, (k, kind, r, n) in want.items():
        assert seen[(0, i)][:2] == (k, kind) and seen[(0, i)][2] == pytest.approx(r, rel=1e-6)
    env.close()


def test_rllib_vector_env_reports_each_agent_at_its_step():
    pytest.importorskip("ray.rllib")
    from seer_envs.integrations import rllib
    want = hand_count()
    v = rllib.SeerVectorMultiAgentEnv("aircraft_v0", 1, num_threads=1, **KW)
    v.vec.seed_stride = 1            # copy 0 seeded 0: the hand count's episode
    obs, _ = v.reset(seed=0)
    names = v.possible_agents
    live, ret, seen = set(obs[0]), {a: 0.0 for a in names}, {}
    for k in range(1, 31):
        obs, rew, term, trunc, _ = v.step([{a: ACTS[names.index(a)] for a in live}])
        assert set(rew[0]) == live
        for a in live:
            ret[a] += rew[0][a]
            if term[0][a] or trunc[0][a]:
                seen[names.index(a)] = (k, "term" if term[0][a] else "trunc", ret[a])
        live = {a for a in live if not (term[0][a] or trunc[0][a])}
        assert term[0]["__all__"] is False and (trunc[0]["__all__"] is (k == 30))
    for i, (k, kind, r, n) in want.items():
        assert seen[i][:2] == (k, kind) and seen[i][2] == pytest.approx(r, rel=1e-6)
    v.close()
