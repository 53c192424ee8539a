# SPDX-License-Identifier: BSD-3-Clause
"""The envs hand their actions to the engine with ``inject(...,
execute=True)`` (tests/runtime/test_inject_execute.py): a step equals the
step that queues them, at every thread count."""

import numpy as np
import pytest

import seer_envs
from seer_envs.pcs.env import PcsEnv


def _queued(cls):
    """``cls`` with its actions queued at injection, never executed there."""
    class Queued(cls):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._batch.execute_actions = False
    return Queued


GossipEnv = seer_envs.get("gossip_v0").env          # the class the registry made from its spec
_QueuedPcs, _QueuedGossip = _queued(PcsEnv), _queued(GossipEnv)


@pytest.mark.parametrize("envs", [(PcsEnv, _QueuedPcs, dict(grid_width=6, grid_height=5)),
                                  (GossipEnv, _QueuedGossip, dict(num_agents=40))])
@pytest.mark.parametrize("seed", [0, 3])
def test_envs_executing_their_actions_equal_the_queued_injection(envs, seed):
    cls, queued_cls, kw = envs
    rng = np.random.default_rng(seed)
    ref = queued_cls(num_threads=1, **kw)
    n_act = ref.action_space(ref.possible_agents[0]).n
    actions = rng.integers(0, n_act, (20, len(ref.possible_agents)))

    def rollout(env):
        out = [env.reset_arrays(seed=seed)]
        for a in actions:
            out.extend(np.array(x, copy=True) for x in env.step_arrays(a)[:4])
        return out, env.engine.state_digest()

    want = rollout(ref)
    for threads in [1, 2, 3]:
        env = cls(num_threads=threads, **kw)
        got = rollout(env)
        assert got[1] == want[1]
        assert all(np.array_equal(x, y) for x, y in zip(got[0], want[0]))
        # the executed path was taken: fewer LPs visited per round
        assert env.engine.stats()["ready_per_round"] < ref.engine.stats()["ready_per_round"]
