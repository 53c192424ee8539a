# SPDX-License-Identifier: BSD-3-Clause
# ruff: noqa: E402
"""PPO on a SEER env with RLlib's new API stack and one shared policy.

    pip install -e ".[rllib]"       # install torch==2.13.0 first for the CPU build
    python examples/rllib_ppo.py [--env pcs_v0 | aircraft_v0] [--iters 10] [--batch 500]
        [--grid 4] [--num-uavs 8] [--vector-runner --num-envs 4]

Every cell (PCS) or UAV (Aircraft) is an agent; all share one policy
("shared").  By default RLlib's multi-agent env runner steps one env
(``seer_envs.integrations.rllib.SeerRLlibEnv``); with ``--vector-runner``
it runs ``--num-envs`` copies in one SEER vector env
(``SeerMultiAgentEnvRunner``: RLlib 2.60's own runner vectorises multi-agent
envs only as a Python loop of single envs, docs/training.md).  Prints the
mean episode return per iteration.
"""

from seer_bench.needs import need

need("torch", "ray")     # before the imports that need them: one line, not a traceback

import argparse
import time

from seer_bench.ppo import positive_int

ENVS = ("pcs_v0", "aircraft_v0")


def env_config(env, grid=4, num_uavs=8, max_cycles=48, seed=0, num_threads=1):
    """The env's parameters: a small world; one SEER thread (a small world
    is fine-grained, and torch's threads share the same cores)."""
    if env == "pcs_v0":
        params = {"grid_width": grid, "grid_height": grid}
    else:
        params = {"num_uavs": num_uavs}
    return dict(params, max_cycles=max_cycles, seed=seed, num_threads=num_threads)


def build(env="pcs_v0", grid=4, num_uavs=8, max_cycles=48, batch=500, seed=0, num_threads=1,
          vector_runner=False, num_envs=1):
    """The PPO config (one shared policy) on ``seer/<env>``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from seer_envs.integrations.rllib import SeerMultiAgentEnvRunner, register
    register()
    runners = dict(num_env_runners=0, num_envs_per_env_runner=num_envs)
    if vector_runner:
        runners["env_runner_cls"] = SeerMultiAgentEnvRunner
    return (
        PPOConfig()
        .environment(f"seer/{env}", env_config=env_config(env, grid, num_uavs, max_cycles, seed, num_threads))
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec()}))
        .env_runners(**runners)
        .training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 250), num_epochs=4, lr=3e-4)
        .debugging(seed=seed)
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", choices=ENVS, default="pcs_v0")
    p.add_argument("--iters", type=positive_int, default=10)
    p.add_argument("--grid", type=positive_int, default=4, help="PCS: grid x grid cells (agents)")
    p.add_argument("--num-uavs", type=positive_int, default=8, help="Aircraft: UAVs (agents)")
    p.add_argument("--max-cycles", type=positive_int, default=48, help="steps per episode")
    p.add_argument("--batch", type=positive_int, default=500, help="env steps per training batch")
    p.add_argument("--vector-runner", action="store_true",
                   help="RLlib's multi-agent runner on one SEER vector env of --num-envs copies")
    p.add_argument("--num-envs", type=positive_int, default=1, help="sub-envs (copies) per env runner")
    a = p.parse_args()
    import ray
    import torch
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    algo = build(a.env, a.grid, a.num_uavs, a.max_cycles, a.batch, vector_runner=a.vector_runner,
                 num_envs=a.num_envs).build_algo()
    agents = a.grid * a.grid if a.env == "pcs_v0" else a.num_uavs
    print(f"built in {time.perf_counter() - t0:.1f} s ({type(algo.env_runner.env).__name__})", flush=True)
    for i in range(a.iters):
        t = time.perf_counter()
        r = algo.train()
        ret = r.get("env_runners", {}).get("episode_return_mean", float("nan"))
        print(f"iteration {i + 1:3d}: mean episode return {ret:10.2f} "
              f"(sum over {agents} agents), {time.perf_counter() - t:.1f} s", flush=True)
    algo.stop()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
