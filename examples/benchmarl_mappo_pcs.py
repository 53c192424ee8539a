# SPDX-License-Identifier: BSD-3-Clause
# ruff: noqa: E402
"""MAPPO (or IPPO) from BenchMARL on SEER's PCS task, then the learned
policy against the random one on held-out seeds.

BenchMARL's ``Experiment`` runs on :class:`seer_envs.integrations.benchmarl.SeerTask`
``.PCS_HOTSPOT_V1`` (the task of ``cleanrl_ippo_pcs.py``: hot spots of load
moving over the cells, a daily swing, rush hours, the team's reward, 48
steps of an hour): ``--copies`` copies of a ``--grid`` x ``--grid`` grid, in one engine, one episode of
every copy per iteration, parameter sharing, MAPPO's critic on the global
state.  Then the greedy policy (BenchMARL's deterministic mode) and the
random policy (TorchRL's ``rand_action``), and the greedy policy before
training (an untrained network's argmax is a fixed guard too), each play ``--eval-copies``
episodes with the same held-out seeds; printed: the mean episode return per
cell of each, and of a fixed guard of 0 and of 3 for scale, and the
learned-minus-random difference paired by seed, with its standard error.

Needs BenchMARL (docs/training.md, "BenchMARL": ``pip install hydra-core &&
pip install --no-deps benchmarl==1.5.2`` beside the ``torchrl`` extra).

    PYTHONPATH=$PWD python examples/benchmarl_mappo_pcs.py [--iters 150] [--algorithm mappo|ippo]
"""

from seer_bench.needs import need

need("torch", "benchmarl")     # before the imports that need them: one line, not a traceback

import argparse
import tempfile
import time

ENV_ID = "pcs_hotspot_v1"
ENV_KW = dict(max_cycles=48)


def evaluate(policy, grid, copies, seed):
    """Episode return per cell of ``policy`` (None: random; an int: that
    fixed guard) in each of ``copies`` episodes, seeded ``seed + c``."""
    import torch
    from torchrl.envs.utils import ExplorationType, set_exploration_type

    from seer_envs.integrations.torchrl import torchrl_env
    env = torchrl_env(ENV_ID, copies, num_threads=1, grid_width=grid, grid_height=grid, **ENV_KW)
    env.set_seed(seed)
    torch.manual_seed(seed)
    if isinstance(policy, int):
        guard = policy

        def policy(td):
            td.set(("agents", "action"), torch.full(td["agents", "observation"].shape[:-1], guard))
            return td
    with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
        td = env.rollout(ENV_KW["max_cycles"], policy)
    env.close()
    return td["next", "agents", "reward"].sum(dim=1).mean(dim=(1, 2))   # per copy: return per cell


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algorithm", choices=["mappo", "ippo"], default="mappo")
    p.add_argument("--iters", type=int, default=150, help="BenchMARL iterations (one episode per copy each)")
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--copies", type=int, default=16)
    p.add_argument("--lr", type=float, default=2.5e-3, help="as cleanrl_ippo_pcs.py")
    p.add_argument("--epochs", type=int, default=4, help="passes over each batch")
    p.add_argument("--minibatches", type=int, default=4, help="minibatches per pass")
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-copies", type=int, default=16)
    p.add_argument("--eval-seed", type=int, default=10_000, help="held-out seeds start here")
    a = p.parse_args()
    for name in ("iters", "grid", "copies", "eval_copies", "epochs", "minibatches"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")

    import torch
    torch.set_num_threads(1)        # small networks; SEER's engine runs beside them

    # first: it gives TorchRL 0.14's collector the name BenchMARL 1.5.2 imports
    from seer_envs.integrations.benchmarl import Experiment, ExperimentConfig, SeerTask

    from benchmarl.algorithms import IppoConfig, MappoConfig         # noqa: E402
    from benchmarl.models.mlp import MlpConfig

    task = SeerTask.PCS_HOTSPOT_V1.get_task(dict(ENV_KW, grid_width=a.grid, grid_height=a.grid))
    cfg = ExperimentConfig.get_from_yaml()
    frames = a.copies * ENV_KW["max_cycles"]
    cfg.max_n_iters = a.iters
    cfg.max_n_frames = a.iters * frames
    cfg.on_policy_collected_frames_per_batch = frames
    cfg.on_policy_n_envs_per_worker = a.copies
    cfg.on_policy_n_minibatch_iters = a.epochs
    cfg.on_policy_minibatch_size = max(1, frames // a.minibatches)
    cfg.lr = a.lr
    cfg.evaluation = False
    cfg.render = False
    cfg.loggers = []
    cfg.create_json = False
    cfg.checkpoint_interval = 0
    cfg.save_folder = tempfile.mkdtemp(prefix="seer-benchmarl-")
    algo = (MappoConfig if a.algorithm == "mappo" else IppoConfig).get_from_yaml()
    algo.entropy_coef = a.ent_coef
    exp = Experiment(task=task, algorithm_config=algo, model_config=MlpConfig.get_from_yaml(),
                     critic_model_config=MlpConfig.get_from_yaml(), seed=a.seed, config=cfg)
    untrained = evaluate(exp.policy, a.grid, a.eval_copies, a.eval_seed)   # before any update
    t0 = time.perf_counter()
    exp.run()
    print(f"{a.algorithm}: {a.iters} iterations x {frames} env steps in {time.perf_counter() - t0:.1f} s")

    rows = [("learned (greedy)", exp.policy), ("random", None), ("fixed guard 0", 0), ("fixed guard 3", 3)]
    print(f"episode return per cell, {a.eval_copies} held-out seeds from {a.eval_seed}:")
    out = {"untrained (greedy)": untrained}
    for name, pol in rows:
        out[name] = evaluate(pol, a.grid, a.eval_copies, a.eval_seed)
    for name, r in out.items():
        print(f"  {name:18s} {float(r.mean()):8.2f} +- {float(r.std()):.2f} (std over episodes)")
    # the same seeds for every row: compare episode by episode
    diff = out["learned (greedy)"] - out["random"]
    se = float(diff.std()) / len(diff) ** 0.5
    print(f"learned - random, paired by seed: {float(diff.mean()):+.2f} +- {se:.2f} (standard error); "
          f"learned better in {int((diff > 0).sum())} of {len(diff)} episodes")


if __name__ == "__main__":
    main()
