# SPDX-License-Identifier: BSD-3-Clause
"""The vector env's speedup under several phase grains, in one
process: ``phase_policy(grain_ns)`` switched between blocks of steps, the
settings and a 1-thread copy interleaved block by block (so a slow spell of
the machine hits all alike).

    python tools/perf/phase_grain.py [--grains 4000 2000 1000 0]
        [--copies 64] [--grid 8] [--blocks 30] [--steps 10] [--threads 2]

Prints, per grain: the median step time at ``--threads`` threads and the
speedup as the median over blocks of (1-thread block time / that block's
time), with its range.  With 2 threads, grain G opens a phase estimated at G
or more to both threads: G = 4000 is the rule before the width rule (every
opened phase open to the whole team), 0 opens every phase.  With more
threads a phase opens to one thread per G/2 of its estimate.
"""

import argparse
import statistics

import numpy as np

from seer_envs.views.vector import vector_env
from seer_runtime import phase_policy

from seer_bench import interleave, paired


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grains", type=float, nargs="+", default=[4000, 2000, 1000, 0])
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--blocks", type=int, default=30)
    p.add_argument("--steps", type=int, default=10, help="steps per block")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    E, g = args.copies, args.grid
    kw = dict(grid_width=g, grid_height=g, max_cycles=10**9)
    envs = {t: vector_env("pcs_v0", E, num_threads=t, **kw) for t in (1, args.threads)}
    for v in envs.values():
        v.reset(seed=0)
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, 3, (E, g * g)) for _ in range(args.steps)]
    shipped = phase_policy()

    def block(threads, grain):
        def run():
            phase_policy(grain, shipped[1])
            for a in acts:
                envs[threads].step(a)
        return run

    runners = {f"grain {int(gr)} ns": block(args.threads, gr) for gr in args.grains}
    runners["1 thread"] = block(1, shipped[0])
    try:
        times = interleave(runners, args.blocks)
    finally:
        phase_policy(*shipped)
    print(f"PCS {g}x{g} vector env, {E} copies, {args.blocks} blocks of {args.steps} steps; "
          f"{args.threads} threads; shipped policy {shipped}")
    for name, t in times.items():
        print(f"  {name:16s} {statistics.median(t) / args.steps * 1e3:7.3f} ms/step   "
              f"speedup {paired(times, name, '1 thread')}")


if __name__ == "__main__":
    main()
