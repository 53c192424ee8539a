# SPDX-License-Identifier: BSD-3-Clause
"""What a small env's step costs outside the engine's run: action checks,
the action writes and injection, the boundary, episode bookkeeping.  On a
small env (PCS 8x8: 64 cells, ~45 us of events a step) that part is a large
share of the step, and it is what a loop of single envs or SuperSuit pays
per env.

For each env, ``step_arrays`` with random actions in blocks of 100 steps,
1 thread: the median over blocks of the time per step, of the time inside
``run_until`` (``Engine.counters``) and of the rest.  To compare two trees,
run it in each (``PYTHONPATH=<tree>``), alternated.

    python tools/perf/env_overhead.py [--blocks 30]
"""

import argparse
import statistics
import time

import numpy as np

import seer_envs

ENVS = {
    "PCS 8x8": lambda: seer_envs.make("pcs_v0", num_threads=1, grid_width=8, grid_height=8,
                                           max_cycles=10**6),
    # a battery that never runs out: every step is an ordinary one
    "Aircraft 64": lambda: seer_envs.make("aircraft_v0", num_threads=1, num_uavs=64, battery_capacity=1e9,
                                                    max_cycles=10**6),
}


def measure(make, blocks, block=100):
    env = make()
    env.reset_arrays(seed=0)
    rng = np.random.default_rng(0)
    space = env.action_space(env.possible_agents[0])
    n = len(env.possible_agents)
    if hasattr(space, "n"):
        acts = [rng.integers(0, space.n, n) for _ in range(block)]
    else:
        acts = [rng.uniform(-1, 1, (n,) + space.shape).astype(np.float32) for _ in range(block)]
    for a in acts:                       # warm up
        env.step_arrays(a)
    eng = env.unwrapped.engine
    step, inside = [], []
    for _ in range(blocks):
        w0 = eng.counters()[0]
        t0 = time.perf_counter()
        for a in acts:
            env.step_arrays(a)
        step.append((time.perf_counter() - t0) / block)
        inside.append((eng.counters()[0] - w0) / block)
    return (statistics.median(step), statistics.median(inside),
            statistics.median(s - i for s, i in zip(step, inside)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=30)
    args = p.parse_args()
    print(f"{'env':<12} {'step us':>8} {'run_until us':>13} {'outside us':>11} {'outside share':>14}")
    for name, make in ENVS.items():
        s, i, o = measure(make, args.blocks)
        print(f"{name:<12} {1e6 * s:>8.1f} {1e6 * i:>13.1f} {1e6 * o:>11.1f} {o / s:>14.0%}")


if __name__ == "__main__":
    main()
