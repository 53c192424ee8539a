# SPDX-License-Identifier: BSD-3-Clause
"""Throughput while another process takes a core: fixed threads vs "auto"
(STPA plus the contention fallback), measured side by side in one run.

    python benchmarks/contention.py [--steps 60]

Starts one busy-loop process, then runs each configuration at 1 thread, at
2 threads, and with num_threads="auto", interleaved; prints steps/s and the
thread count "auto" ended with.
"""

import argparse
import multiprocessing as mp
import statistics
import sys
import time

import numpy as np

import seer_envs


def hog():
    x = 0
    while True:
        x += 1


def run(name, kw, threads, steps):
    env = seer_envs.make(name, num_threads=threads, max_cycles=10**6, **kw)
    env.reset_arrays(seed=0)
    n = len(env.possible_agents)
    sp = env.action_space(env.possible_agents[0])
    a = np.zeros(n, np.int64) if hasattr(sp, "n") else np.zeros((n, 2), np.float32)
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step_arrays(a)
    return steps / (time.perf_counter() - t0), env.engine.num_threads


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    cfgs = [("PCS 64x64", "pcs_v0", dict(grid_width=64, grid_height=64)),
            ("Aircraft 1024", "aircraft_v0", dict(num_uavs=1024))]
    for label, name, kw in cfgs:                 # choose threads on a quiet machine first
        run(name, kw, "auto", 2)
    proc = mp.get_context("fork").Process(target=hog, daemon=True)
    proc.start()
    try:
        time.sleep(0.5)
        print("with one busy-loop process running (steps/s, medians of interleaved repeats):")
        for label, name, kw in cfgs:
            res = {1: [], 2: [], "auto": []}
            ended = None
            for _ in range(a.repeats):
                for t in res:
                    sps, final = run(name, kw, t, a.steps)
                    res[t].append(sps)
                    if t == "auto":
                        ended = final
            m = {t: statistics.median(v) for t, v in res.items()}
            print(f"  {label:<14} 1 thread {m[1]:7.1f}   2 threads {m[2]:7.1f}   auto {m['auto']:7.1f} "
                  f"(ended with {ended} thread(s); auto / 2 threads = {m['auto'] / m[2]:.2f}x)")
    finally:
        proc.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
