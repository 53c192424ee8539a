# SPDX-License-Identifier: BSD-3-Clause
"""PPO on the PCS env with RLlib's new API stack and one shared policy.

    pip install -e ".[rllib]"       # install torch==2.13.0 first for the CPU build
    python examples/rllib_ppo_pcs.py [--iters 10] [--grid 4] [--batch 500]

Every cell is an agent; all cells share one policy ("shared").  Prints the
mean episode return per iteration.
"""

import argparse
import time

import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from seer_envs.integrations.rllib import register


def build(grid=4, max_cycles=48, batch=500, seed=0, num_threads=1):
    register()
    # one SEER thread: a small grid is fine-grained (one thread is fastest),
    # and torch's threads share the same cores
    env_config = {"grid_width": grid, "grid_height": grid, "max_cycles": max_cycles, "seed": seed,
                  "num_threads": num_threads}
    return (
        PPOConfig()
        .environment("seer/pcs_v0", env_config=env_config)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec()}))
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 250), num_epochs=4, lr=3e-4)
        .debugging(seed=seed)
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--grid", type=int, default=4, help="grid side: grid x grid cells (agents)")
    p.add_argument("--batch", type=int, default=500, help="env steps per training batch")
    a = p.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    algo = build(grid=a.grid, batch=a.batch).build_algo()
    print(f"built in {time.perf_counter() - t0:.1f} s", flush=True)
    for i in range(a.iters):
        t = time.perf_counter()
        r = algo.train()
        ret = r.get("env_runners", {}).get("episode_return_mean", float("nan"))
        print(f"iteration {i + 1:3d}: mean episode return {ret:10.2f} "
              f"(sum over {a.grid * a.grid} cells), {time.perf_counter() - t:.1f} s", flush=True)
    algo.stop()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
