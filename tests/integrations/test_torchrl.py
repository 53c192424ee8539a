# SPDX-License-Identifier: BSD-3-Clause
"""TorchRL's ``GymWrapper`` takes the agent-level vector env as it is: its
specs pass ``check_env_specs``, and a rollout records the rewards and the
episode ends the env gives for the actions it took (TorchRL accepts the
SAME_STEP and DISABLED autoreset modes; it refuses NEXT_STEP)."""

import numpy as np
import pytest

from seer_envs.views.agent_vector import agent_vector_env

KW = dict(grid_width=3, grid_height=2, max_cycles=3, dt=30.0, move_interval_mean=20.0,
          call_interarrival_mean=60.0)


@pytest.mark.parametrize("mode", ["same_step", "disabled"])
def test_gym_wrapper_rolls_out_the_agent_vector_env(mode):
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    torchrl = pytest.importorskip("torchrl", reason="torchrl is not installed (pip install -e '.[torchrl]')")
    from torchrl.envs import GymWrapper
    from torchrl.envs.utils import check_env_specs
    env = GymWrapper(agent_vector_env("pcs_v0", 2, num_threads=2, autoreset_mode=mode, **KW))
    assert tuple(env.batch_size) == (12,)
    check_env_specs(env)
    env.set_seed(3)
    td = env.rollout(7, break_when_any_done=False)
    actions = td["action"].numpy().argmax(-1)       # one-hot (TorchRL's Discrete) -> (12 rows, 7 steps)
    rewards = td["next", "reward"].numpy()[..., 0]
    done = td["next", "done"].numpy()[..., 0]
    assert actions.shape == rewards.shape == (12, 7)
    # The same actions through the env itself: the same rewards, the same ends.
    raw = agent_vector_env("pcs_v0", 2, num_threads=1, autoreset_mode=mode, **KW)
    raw.reset(seed=3)           # set_seed resets with the seed, rollout() resets again
    raw.reset()
    for t in range(7):
        _, r, term, trunc, _ = raw.step(actions[:, t].astype(np.int64))
        np.testing.assert_array_equal(rewards[:, t], r, err_msg=f"step {t}")
        np.testing.assert_array_equal(done[:, t], term | trunc, err_msg=f"step {t}")
        if (term | trunc).all():    # TorchRL 0.14 resets the ended sub-envs then
            raw.reset(options=None if mode == "same_step" else {"reset_mask": term | trunc})
    assert done.sum() == 2 * 12 and rewards.any()              # every row ended at steps 3 and 6
    del torchrl


def test_gym_wrapper_refuses_next_step_as_torchrl_documents():
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    pytest.importorskip("torchrl", reason="torchrl is not installed (pip install -e '.[torchrl]')")
    from torchrl.envs import GymWrapper
    with pytest.raises(RuntimeError, match="auto-reset mode"):
        GymWrapper(agent_vector_env("pcs_v0", 2, num_threads=1, **KW))
