# SPDX-License-Identifier: BSD-3-Clause
"""A timeline of the vector env at 1 and 2 threads: blocks of steps back to
back, one line per pair of blocks, with what the engine saw in the 2-thread
block (straggles, phases opened, phases member 1 joined).  It tells a slow
spell of the machine (both threads join every phase, no straggles, and the
2-thread block is still slow) from a slowdown of the engine's own making
(straggles, phases left to the caller).

    python tools/perf/vector_timeline.py [--seconds 30] [--copies 64] [--grid 8]
        [--steps 30]

Ends with a summary: blocks, the 2-thread speedup's 10th percentile, median
and 90th percentile over blocks, the blocks with straggles, and how much
slower per step those were than the median block without one.
"""

import argparse
import statistics
import time

import numpy as np

from seer_envs.views.vector import vector_env


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--steps", type=int, default=30, help="steps per block")
    args = p.parse_args()
    E, g = args.copies, args.grid
    envs = {t: vector_env("pcs_v0", E, num_threads=t, grid_width=g, grid_height=g, max_cycles=10**9)
            for t in (1, 2)}
    for v in envs.values():
        v.reset(seed=0)
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, 3, (E, g * g)) for _ in range(args.steps)]
    speedups, clean, hit = [], [], []
    end = time.monotonic() + args.seconds
    print("time      1t ms/step  2t ms/step  speedup  straggles  opened  member 1 joined")
    while time.monotonic() < end:
        ms, seen = {}, {}
        for t, v in envs.items():
            before = v.engine.stats()
            t0 = time.perf_counter()
            for a in acts:
                v.step(a)
            ms[t] = (time.perf_counter() - t0) / args.steps * 1e3
            seen[t] = (before, v.engine.stats())
        s0, s1 = seen[2]
        straggles = s1["straggles"] - s0["straggles"]
        joined = s1["threads"][1]["phases"] - s0["threads"][1]["phases"]
        speedups.append(ms[1] / ms[2])
        (hit if straggles else clean).append(ms[2])
        print(f"{time.strftime('%H:%M:%S')}  {ms[1]:10.3f}  {ms[2]:10.3f}  {ms[1] / ms[2]:7.2f}  "
              f"{straggles:9d}  {s1['phases_opened'] - s0['phases_opened']:6d}  {joined:15d}",
              flush=True)
    q = statistics.quantiles(speedups, n=10) if len(speedups) > 1 else speedups * 9
    print(f"{len(speedups)} blocks of {args.steps} steps; 2-thread speedup p10 {q[0]:.2f}, "
          f"median {statistics.median(speedups):.2f}, p90 {q[-1]:.2f}; blocks with straggles: {len(hit)}")
    if hit and clean:
        print(f"a block with straggles: {statistics.mean(hit) - statistics.median(clean):+.3f} ms/step "
              f"against the median block without ({statistics.median(clean):.3f} ms/step)")


if __name__ == "__main__":
    main()
