# SPDX-License-Identifier: BSD-3-Clause
"""The thread tuner's closed loop once per env against once per episode.

    python tools/perf/tuner_carry_ab.py [--rounds 9] [--episodes 5] [--max-cycles 100]
        [--uavs 256] [--grid 32] [--quick]

With ``num_threads="auto"`` an env starts the tuner at every reset; its
closed loop (trials of the neighbouring team sizes, a few steps each) runs at
the first start and later starts begin at its result.  For short episodes
(``max_cycles=100``) of Aircraft (256 UAVs) and PCS (32x32), a round times, in
one process and interleaved, ``--episodes`` whole episodes of: "auto" as
shipped (twice: A and A', the A/A), "auto" with the closed loop forced at
every reset (the tuner's result dropped before each reset), "auto" with
STPA's key built at every reset (the env's chooser dropped before each
reset), and a fixed count equal to the closed loop's pick.  Prints steps/s of the median round and the
paired ratios against A.
"""

import argparse
import os
import sys

import numpy as np

import seer_envs
from seer_bench import interleave, median_rates, paired

def episodes(env, n, forget=None):
    """Run ``n`` whole episodes with zero actions; returns the steps.
    ``forget``: "loop" drops the tuner's result, "key" the env's STPA
    chooser (and its key) before each reset."""
    agents = env.possible_agents
    sp = env.action_space(agents[0])
    acts = np.zeros(len(agents), np.int64) if hasattr(sp, "n") else np.zeros((len(agents),) + sp.shape, np.float32)
    steps = 0
    for ep in range(n):
        if forget == "loop":             # what every reset did before the tuner's result was kept
            env.core.batch.tuner = env.core.batch._tuned = None
        elif forget == "key":            # what every reset did before the chooser was kept
            env.core._single_choose = None
        env.reset_arrays(seed=ep)
        while env.agents:
            env.step_arrays(acts)
            steps += 1
    return steps


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--episodes", type=int, default=5)
    p.add_argument("--max-cycles", type=int, default=100)
    p.add_argument("--uavs", type=int, default=256)
    p.add_argument("--grid", type=int, default=32)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.rounds, a.episodes, a.max_cycles, a.uavs, a.grid = 2, 1, 20, 32, 8
    for name, kw in (("aircraft_v0", dict(num_uavs=a.uavs)), ("pcs_v0", dict(grid_width=a.grid, grid_height=a.grid))):
        make = lambda t: seer_envs.make(name, num_threads=t, max_cycles=a.max_cycles, **kw)  # noqa: E731
        envs = {"A": make("auto"), "A'": make("auto"), "per episode": make("auto"), "key per reset": make("auto")}
        for e in envs.values():          # STPA's preflight and the first closed loop, untimed
            episodes(e, 1)
        tu = envs["A"].core.batch.tuner
        pick = tu.closed_loop["picked"] if tu is not None and tu.closed_loop else envs["A"].num_threads
        envs[f"fixed {pick}"] = make(pick)
        steps = episodes(envs["A"], 1)
        forget = {"per episode": "loop", "key per reset": "key"}
        runners = {k: (lambda e=e, k=k: episodes(e, a.episodes, forget=forget.get(k))) for k, e in envs.items()}
        times = interleave(runners, a.rounds)
        rates = median_rates(times, steps * a.episodes)
        print(f"{name} {kw}, max_cycles={a.max_cycles}, closed-loop pick {pick}, "
              f"{os.cpu_count()} CPUs, {a.rounds} rounds of {a.episodes} episodes:")
        for k in envs:
            vs = "" if k == "A" else f"   {k} / A {paired(times, k, 'A')}"
            print(f"  {k:<12} {rates[k]:9.1f} steps/s{vs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
