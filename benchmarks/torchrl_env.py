# SPDX-License-Identifier: BSD-3-Clause
"""SEER's native TorchRL env (``seer_envs.integrations.torchrl``, one engine
for every copy) against TorchRL's ``PettingZooWrapper`` over single envs
(``group_map=ALL_IN_ONE_GROUP``, batched with ``SerialEnv``), side by side
in one run, on PCS 16x16 (256 agents) x 16 copies.

Runners, interleaved in rounds (each round times a block of steps of each,
so load on the machine hits all alike), every one a TorchRL rollout
(``rollout(steps, break_when_any_done=False)``, TorchRL's random policy,
the same torch seed):

- SEER's TorchRL env at 1 thread and at 2 threads;
- ``SerialEnv(copies, PettingZooWrapper(seer_envs.make("pcs_v0", num_threads=1)))``;
- and, for the TorchRL layer's own cost, the vector env stepped bare (NumPy
  random actions) at 1 thread.

Reported: env steps/s (copies x steps per second) from the median round,
and the ratios as the median of the per-round ratios with their range.
The ``PettingZooWrapper`` runner is slow (it moves every agent's data
through dicts), so it runs fewer steps per round (``--pz-steps``).

    python benchmarks/torchrl_env.py [--copies 16] [--grid 16] [--steps 20] [--pz-steps 2] [--rounds 5]
"""

import argparse
import statistics
import time

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--copies", type=int, default=16)
    p.add_argument("--grid", type=int, default=16)
    p.add_argument("--steps", type=int, default=20, help="steps per SEER runner per round")
    p.add_argument("--pz-steps", type=int, default=2, help="steps of the PettingZooWrapper runner per round")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()

    import warnings

    import torch
    from torchrl.envs import PettingZooWrapper, SerialEnv
    from torchrl.envs.utils import MarlGroupMapType

    import seer_envs
    from seer_envs.integrations.torchrl import torchrl_env
    from seer_envs.views.vector import vector_env

    torch.set_num_threads(1)        # the policy is random; torch's threads would take SEER's cores
    E, g = args.copies, args.grid
    kw = dict(grid_width=g, grid_height=g, max_cycles=10**6)
    A = g * g

    seer = {t: torchrl_env("pcs_v0", E, num_threads=t, **kw) for t in (1, 2)}
    for t, env in seer.items():
        env.set_seed(0)

    def make_single():
        return PettingZooWrapper(seer_envs.make("pcs_v0", num_threads=1, **kw),
                                 group_map=MarlGroupMapType.ALL_IN_ONE_GROUP)
    warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
    pz = SerialEnv(E, make_single)
    pz.set_seed(0)
    bare = vector_env("pcs_v0", E, num_threads=1, **kw)
    bare.reset(seed=0)
    n_act = bare.single_action_space.n
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, n_act, (E, A)) for _ in range(args.steps)]

    tds = {}

    def rollout(name, env, steps):
        torch.manual_seed(0)
        td = tds.get(name)
        if td is None:
            td = tds[name] = env.reset()
        t0 = time.perf_counter()
        out = env.rollout(steps, break_when_any_done=False, auto_reset=False, tensordict=td)
        dt = time.perf_counter() - t0
        tds[name] = out[..., -1]["next"].exclude("reward", ("agents", "reward"))
        return E * steps / dt

    def bare_steps():
        t0 = time.perf_counter()
        for a in acts:
            bare.step(a)
        return E * len(acts) / (time.perf_counter() - t0)

    runners = {
        "SEER TorchRL env, 1 thread": lambda: rollout("seer1", seer[1], args.steps),
        "SEER TorchRL env, 2 threads": lambda: rollout("seer2", seer[2], args.steps),
        "PettingZooWrapper x SerialEnv, 1 thread each": lambda: rollout("pz", pz, args.pz_steps),
        "vector env bare (NumPy actions), 1 thread": bare_steps,
    }
    for r in runners.values():            # warm-up (first-touch, STPA-free: threads are given)
        r()
    rates = {k: [] for k in runners}
    for _ in range(args.rounds):
        for k, r in runners.items():
            rates[k].append(r())

    def ratio(a, b, d=1):
        rs = [x / y for x, y in zip(rates[a], rates[b])]
        return f"{statistics.median(rs):.{d}f}x (rounds {min(rs):.{d}f}-{max(rs):.{d}f})"

    print(f"PCS {g}x{g} ({A} agents) x {E} copies, {args.rounds} rounds; env steps/s (copies x steps / s),"
          " median round:")
    for k, v in rates.items():
        print(f"  {k:48s} {statistics.median(v):10.1f}")
    pzk = "PettingZooWrapper x SerialEnv, 1 thread each"
    print(f"SEER TorchRL env 1 thread / PettingZooWrapper: {ratio('SEER TorchRL env, 1 thread', pzk)}")
    print(f"SEER TorchRL env 2 threads / PettingZooWrapper (target >= 10x): "
          f"{ratio('SEER TorchRL env, 2 threads', pzk)}")
    print(f"SEER TorchRL env 1 thread / bare vector env: "
          f"{ratio('SEER TorchRL env, 1 thread', 'vector env bare (NumPy actions), 1 thread', 2)}")
    for env in seer.values():
        env.close()
    pz.close()
    bare.close()


if __name__ == "__main__":
    main()
