# SPDX-License-Identifier: BSD-3-Clause
# ruff: noqa: E402
"""Tune a SEER env with RLlib, then continue from the checkpoint with
``algo.save()`` / ``algo.restore()``; CPU, a few iterations.

    pip install -e ".[rllib]"       # install torch==2.13.0 first for the CPU build
    python examples/rllib_tune_checkpoint.py [--env pcs_v0 | aircraft_v0] [--iters 2] [--dir DIR]
        [--grid 4] [--num-uavs 8] [--max-cycles 20] [--batch 200]

1. ``tune.Tuner`` runs PPO (the config of ``rllib_ppo.py``) for ``--iters``
   iterations and checkpoints at the end;
2. a new algorithm restores the trial's checkpoint (``algo.restore``),
   trains one more iteration (its weights must move) and saves
   (``algo.save``);
3. it restores the trial's checkpoint again, then the save, and checks the
   learner's policy weights are each time those it had then, bit for bit.

Ray 2.60 has no local mode (``ray.init(local_mode=True)`` raises), so the
trial runs in a Ray actor of its own; the example asks Ray for one CPU (the
trial's), which is also all the worker processes Ray starts ahead.

What a checkpoint holds (RLlib 2.60, new API stack): the learner (the
RLModule's weights and the optimiser's state), and per env runner the
module's weights, the connectors' states and the lifetime step counter.
Not the environments: after a restore every env runner builds fresh envs
and its first ``sample()`` resets them (RLlib's ``_needs_initial_reset``),
so an episode in progress at the save is not continued.  A SEER env's own
state can be saved beside a checkpoint with ``env.snapshot().to_bytes()``
(docs/guide.md, "Snapshots"), for a loop of one's own; RLlib's runner would
reset it.
"""

from seer_bench.needs import need

need("torch", "ray")     # before the imports that need them: one line, not a traceback

import argparse
import os
import tempfile
import time

from seer_bench.ppo import positive_int
from rllib_ppo import ENVS, build


def module_weights(algo):
    """The shared policy's weights on the learner (what trains; the env
    runners get them at the next weight sync), as NumPy arrays."""
    import numpy as np
    state = algo.learner_group.get_weights()["shared"]
    return {k: np.asarray(v) for k, v in state.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", choices=ENVS, default="pcs_v0")
    p.add_argument("--iters", type=positive_int, default=2, help="Tune iterations before the checkpoint")
    p.add_argument("--grid", type=positive_int, default=4, help="PCS: grid x grid cells (agents)")
    p.add_argument("--num-uavs", type=positive_int, default=8, help="Aircraft: UAVs (agents)")
    p.add_argument("--max-cycles", type=positive_int, default=20, help="steps per episode")
    p.add_argument("--batch", type=positive_int, default=200, help="env steps per training batch")
    p.add_argument("--dir", default=None, help="where Tune and the save write (default: a temporary folder)")
    a = p.parse_args()
    import numpy as np
    import ray
    import torch
    from ray import tune
    torch.set_num_threads(1)
    root = a.dir or tempfile.mkdtemp(prefix="seer_rllib_")
    ray.init(num_cpus=1, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    config = build(a.env, grid=a.grid, num_uavs=a.num_uavs, max_cycles=a.max_cycles, batch=a.batch)

    t0 = time.perf_counter()
    tuner = tune.Tuner("PPO", param_space=config,
                       run_config=tune.RunConfig(
                           name="seer_ppo", storage_path=os.path.abspath(root), verbose=0,
                           stop={"training_iteration": a.iters},
                           checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True)))
    result = tuner.fit()[0]
    if result.error:
        raise SystemExit(f"the Tune trial failed: {result.error}")
    ret = result.metrics["env_runners"]["episode_return_mean"]
    print(f"tune: {result.metrics['training_iteration']} iterations, mean episode return {ret:.2f}, "
          f"checkpoint {result.checkpoint.path} ({time.perf_counter() - t0:.1f} s)", flush=True)

    def same(w, v):
        return all(np.array_equal(w[k], v[k]) for k in w)

    algo = config.build_algo()
    algo.restore(result.checkpoint.path)
    tuned = module_weights(algo)
    lifetime = algo.env_runner.num_env_steps_sampled_lifetime
    print(f"restored the trial's checkpoint: env runner's lifetime env steps {lifetime}", flush=True)
    algo.train()
    path = algo.save(os.path.join(root, "continued")).checkpoint.path
    saved = module_weights(algo)
    moved = not same(tuned, saved)
    algo.restore(result.checkpoint.path)           # back to the trial's, then forward to the save
    ok_tuned = same(tuned, module_weights(algo))
    algo.restore(path)
    ok_saved = same(saved, module_weights(algo))
    print(f"one more iteration {'moved' if moved else 'DID NOT MOVE'} the weights; saved to {path}", flush=True)
    print(f"restored the trial's checkpoint again: the learner's policy weights "
          f"{'equal' if ok_tuned else 'DIFFER'} to the tuned ones; restored the save: "
          f"{'equal' if ok_saved else 'DIFFER'} to the saved ones", flush=True)
    algo.stop()
    ray.shutdown()
    return 0 if moved and ok_tuned and ok_saved else 1


if __name__ == "__main__":
    raise SystemExit(main())
