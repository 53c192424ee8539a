# SPDX-License-Identifier: BSD-3-Clause
"""The independent check of ``benchmarks/baselines.py``: BenchMARL's own
MAPPO and IPPO (its algorithm configs, models, collector and losses)
trained on SEER's task through :mod:`seer_envs.integrations.benchmarl`, on
the CleanRL-style trainers' batch geometry and learning rate, and the
learned actor wrapped as a ``policy(env, obs, rng)`` that
``baselines.evaluate`` plays on the same held-out seeds as every other row.
If ours is below BenchMARL's, ours is wrong.

    python benchmarks/benchmarl_check.py [--task pcs_hotspot_v1] [--algo mappo] [--frames N] [--copies N]

Needs BenchMARL (README's RL line); ``available()`` says whether it is
importable.
"""

import argparse
import tempfile
import time

import numpy as np


def available():
    """Whether BenchMARL (and TorchRL) can be imported."""
    try:
        import seer_envs.integrations.benchmarl  # noqa: F401
    except ImportError:
        return False
    return True


def train(task_id, algo, seed, frames, env_kw, copies, steps, epochs=4, minibatches=4, lr=2.5e-3,
          torch_threads=1):
    """Train BenchMARL's ``algo`` ("mappo" or "ippo") on ``task_id`` for
    ``frames`` env steps (rounded up to whole batches): its algorithm's
    YAML config (clipping, losses, GAE, MAPPO's centralised critic) and its
    MLP models, on our trainers' batch geometry and learning rate (a batch
    of ``copies`` episodes of ``steps`` steps, ``epochs`` passes of
    ``minibatches`` minibatches, ``lr``), so the two implementations are
    compared at one budget.  (Its experiment defaults, 45 minibatches of 400
    frames per 6,000-frame batch at lr 5e-5, took over 3 minutes an
    iteration on the 64-cell PCS task on 2 cores.)  Returns ``({"greedy":
    policy, "sampled": policy}, wall seconds, iterations)``; each policy
    maps one env's ``(agents, obs)`` array to its actions."""
    import torch
    torch.set_num_threads(torch_threads)
    from seer_envs.integrations.benchmarl import Experiment, ExperimentConfig, SeerTask

    from benchmarl.algorithms import IppoConfig, MappoConfig
    from benchmarl.models.mlp import MlpConfig

    task = getattr(SeerTask, task_id.upper()).get_task(dict(env_kw))
    cfg = ExperimentConfig.get_from_yaml()
    per = copies * steps
    cfg.on_policy_collected_frames_per_batch = per
    cfg.on_policy_n_envs_per_worker = copies
    cfg.on_policy_n_minibatch_iters = epochs * minibatches
    cfg.on_policy_minibatch_size = max(1, per // minibatches)
    cfg.lr = lr
    iters = max(1, -(-frames // per))
    cfg.max_n_iters = iters
    cfg.max_n_frames = iters * per
    cfg.evaluation = False
    cfg.render = False
    cfg.loggers = []
    cfg.create_json = False
    cfg.checkpoint_interval = 0
    cfg.save_folder = tempfile.mkdtemp(prefix="seer-benchmarl-")
    algo_cfg = {"mappo": MappoConfig, "ippo": IppoConfig}[algo].get_from_yaml()
    exp = Experiment(task=task, algorithm_config=algo_cfg, model_config=_mlp(MlpConfig),
                     critic_model_config=_mlp(MlpConfig), seed=seed, config=cfg)
    t0 = time.perf_counter()
    exp.run()
    wall = time.perf_counter() - t0
    return {"greedy": _policy(exp.policy, "deterministic"), "sampled": _policy(exp.policy, "random")}, wall, iters


def _mlp(MlpConfig):
    """BenchMARL's MLP config with our trainers' size: two tanh layers of 64
    (its default, two of 256, costs 16 times the arithmetic: 20 s an
    iteration on the PCS task on 2 cores, where ours takes 1 s)."""
    import torch
    cfg = MlpConfig.get_from_yaml()
    cfg.num_cells = [64, 64]
    cfg.activation_class = torch.nn.Tanh
    return cfg


def _policy(module, mode):
    """``policy(env, obs, rng)`` of BenchMARL's actor: one env's observation
    as a batch of one, TorchRL's exploration type ``mode``; a sampled action
    is drawn with torch's generator seeded from ``rng`` (the evaluation
    seed's), so a row is reproducible.  ``policy.module`` is the actor
    (TorchRL's module), to play it on TorchRL's own env."""
    import torch
    from tensordict import TensorDict
    from torchrl.envs.utils import ExplorationType, set_exploration_type

    kind = ExplorationType.DETERMINISTIC if mode == "deterministic" else ExplorationType.RANDOM

    def policy(env, obs, rng):
        td = TensorDict({("agents", "observation"): torch.from_numpy(np.asarray(obs, np.float32))[None]},
                        batch_size=[1])
        torch.manual_seed(int(rng.integers(2**62)))
        with torch.no_grad(), set_exploration_type(kind):
            act = module(td)["agents", "action"][0].numpy()
        if act.dtype.kind == "f":
            return np.clip(act, -1, 1).astype(np.float32)
        return act.astype(np.int64)
    policy.module = module
    return policy


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="pcs_hotspot_v1")
    p.add_argument("--algo", choices=["mappo", "ippo"], default="mappo")
    p.add_argument("--frames", type=int, default=192, help="env steps to train for")
    p.add_argument("--copies", type=int, default=2, help="episodes a batch")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    import seer_envs
    steps = seer_envs.get(a.task).build_config({}).max_cycles
    pols, wall, iters = train(a.task, a.algo, a.seed, a.frames, {}, a.copies, steps)
    env = seer_envs.make(a.task, num_threads=1)
    obs = env.reset_arrays(seed=10_000)
    rng = np.random.default_rng(0)
    ret = 0.0
    while env.agents:
        obs, rew, _, _ = env.step_arrays(pols["greedy"](env, obs, rng))
        ret += float(rew.mean())
    print(f"{a.algo} on {a.task}: {iters} iterations in {wall:.1f} s; greedy return per agent {ret:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
