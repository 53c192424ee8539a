# SPDX-License-Identifier: BSD-3-Clause
"""RLlib's single-agent env runner on the agent-level vector env
(``seer_envs.integrations.rllib.rllib_env_creator``): it trains, seeds every
copy of every runner apart, and records each agent's episode and the
placeholder of a stopped agent (docs/training.md, "One episode, one
report")."""

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install the RL extras)")


KW = dict(grid_width=4, grid_height=3, dt=30.0, move_interval_mean=20.0, call_interarrival_mean=60.0)


@pytest.mark.heavy
def test_rllib_single_agent_runner_on_the_agent_vector_env():
    ray = pytest.importorskip("ray")
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env
    from seer_envs.integrations.rllib import rllib_env_creator
    register_env("seer-vec-test", rllib_env_creator("pcs_v0"))
    ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    try:
        cfg = (PPOConfig().environment("seer-vec-test", env_config=dict(KW, max_cycles=4, num_threads=1))
               .env_runners(num_env_runners=0, num_envs_per_env_runner=2 * 12,
                            gym_env_vectorize_mode="vector_entry_point")
               .training(train_batch_size_per_learner=2 * 12 * 8, minibatch_size=96, num_epochs=1))
        algo = cfg.build_algo()
        r = algo.train()
        # 8 steps per sub-env, episodes of 4 steps plus RLlib's reset step.
        assert r["env_runners"]["num_episodes"] >= 24
        assert np.isfinite(r["env_runners"]["episode_return_mean"])
        algo.stop()
    finally:
        ray.shutdown()
    with pytest.raises(ValueError, match="multiple of the 12 agents"):
        rllib_env_creator("pcs_v0")(dict(KW, num_envs=13))


@pytest.mark.heavy
def test_rllib_runners_and_copies_get_distinct_seed_streams():
    """RLlib resets runner w's vector env with seed + w: 2 runners x 4
    copies draw 8 distinct streams (with seed + c per copy, runner 1's
    copies 1-3 replayed runner 2's 0-2), and RLlib's seed fixes them."""
    from seer_envs.integrations.rllib import rllib_env_creator
    creator = rllib_env_creator("pcs_v0")

    def streams(base):
        out = []
        for w in (1, 2):
            env = creator(dict(KW, num_envs=4 * 12, num_threads=1))
            env.reset(seed=None if base is None else base + w)
            out += [int(s) for s in env.vec.seeds_used]
            env.close()
        return out
    for base in (0, 7):
        got = streams(base)
        assert len(set(got)) == 8 and got == streams(base)
    assert len(set(streams(None))) == 8


# Small batteries: UAVs stop after 6-12 s depending on their commands, so
# copies (all UAVs stopped) end at different steps.
@pytest.mark.heavy
def test_rllib_runner_records_agents_and_placeholders():
    """RLlib's own single-agent env runner on the Aircraft agent vector env
    (NEXT_STEP), UAVs stopping at different steps: no one-step episodes,
    every episode terminated (battery) and the lengths vary within a copy
    (each UAV's own)."""
    pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install -e '.[rllib]')")
    pytest.importorskip("torch", reason="torch is not installed")
    import collections
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
    from ray.tune.registry import register_env
    from seer_envs.integrations.rllib import rllib_env_creator
    register_env("seer-air-vec-test", rllib_env_creator("aircraft_v0"))
    A = 5
    kw = dict(num_uavs=A, num_targets=2, dynamics_substeps=2, battery_capacity=10.0, continuous_actions=True,
              max_cycles=30, num_threads=1)
    cfg = (PPOConfig().environment("seer-air-vec-test", env_config=kw)
           .env_runners(num_env_runners=0, num_envs_per_env_runner=2 * A,
                        gym_env_vectorize_mode="vector_entry_point"))
    runner = SingleAgentEnvRunner(config=cfg)
    try:
        done = [e for e in runner.sample(num_timesteps=400, random_actions=True) if e.is_done]
    finally:
        runner.stop()
    lengths = collections.Counter(len(e) for e in done)
    assert len(done) >= 3 * A and len(lengths) > 1
    assert all(e.is_terminated for e in done)           # every UAV stopped (battery)


