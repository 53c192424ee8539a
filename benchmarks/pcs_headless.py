# SPDX-License-Identifier: BSD-3-Clause
"""PCS benchmark, measured side by side in one run.

    python benchmarks/pcs_headless.py [--repeats N] [--quick]

1. Headless PDES run, 256 x 256 cells to t = 1000 min, default parameters:
   events/s at 1 and 2 threads (interleaved repeats, medians), the counters
   and the speedup.  Target: >= 2 M events/s at 2 threads.
2. Env steps/s (array fast path, guard 0) for 16x16, 32x32, 64x64 and
   256x256 grids at 1 and 2 threads, beside the pure-Python reference where
   it finishes in reasonable time.  Target: >= 100x the reference's step
   throughput at 32x32.
Writes a JSON copy to benchmarks/results/pcs_headless.json.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import seer_runtime
import seer_envs
from seer_envs.pcs.reference import PcsReference


def env_steps_per_s(grid, threads, steps):
    env = seer_envs.make("pcs_v0", grid_width=grid, grid_height=grid, num_threads=threads,
                              max_cycles=steps + 1)
    env.reset_arrays(seed=1)
    acts = np.zeros(env.config.num_cells, np.int64)
    env.step_arrays(acts)                      # warm the queues
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step_arrays(acts)
    return steps / (time.perf_counter() - t0)


def ref_steps_per_s(grid, steps):
    env = seer_envs.make("pcs_v0", grid_width=grid, grid_height=grid, max_cycles=steps + 1)
    ref = PcsReference(env.config)
    ref.reset(1)
    acts = np.zeros(env.config.num_cells, np.int64)
    ref.step(acts)
    t0 = time.perf_counter()
    for _ in range(steps):
        ref.step(acts)
    return steps / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="3 repeats, fewer steps")
    a = p.parse_args()
    reps = 3 if a.quick else a.repeats
    print(f"SEER PCS benchmark; {seer_runtime.available_cpus()} CPUs, "
          f"OpenMP={seer_runtime.openmp_enabled()}, repeats={reps} (medians, interleaved)\n")
    report = {}

    # 1. headless
    runs = {1: [], 2: []}
    for _ in range(reps):
        for t in (1, 2):
            runs[t].append(seer_envs.get("pcs_v0").headless(grid_width=256, grid_height=256, end_time=1000.0,
                                               num_threads=t, seed=1))
    r1 = runs[1][0]
    assert all(r["state_digest"] == r1["state_digest"] for r in runs[1] + runs[2])
    eps = {t: statistics.median(r["events_per_s"] for r in runs[t]) for t in (1, 2)}
    print("1. Headless PCS, 256 x 256 cells to t = 1000 min, default parameters")
    print(f"   events {r1['events']:,}; call attempts {r1['call_attempts']:,}; busy lines "
          f"{r1['busy_lines']:,}; channel blocks {r1['channel_blocks']:,}; handoff blocks "
          f"{r1['handoff_blocks']:,}; handoffs {r1['handoffs']:,}; blocking probability "
          f"{r1['blocking_probability']:.5f}; rounds {r1['rounds']}")
    for t in (1, 2):
        print(f"   {t} thread{'s' if t > 1 else ' '}: {eps[t] / 1e6:6.2f} M events/s")
    print(f"   speedup {eps[2] / eps[1]:.2f}x; target >= 2 M events/s at 2 threads -> "
          f"{'MET' if eps[2] >= 2e6 else 'NOT MET'}\n")
    report["headless"] = {"events": r1["events"], "eps_1": eps[1], "eps_2": eps[2],
                          "counters": {k: r1[k] for k in ("call_attempts", "busy_lines", "channel_blocks",
                                                          "handoff_blocks", "handoffs", "blocking_probability")}}

    # 2. env steps/s
    print("2. Env steps/s (array fast path, guard 0, default parameters)")
    print(f"   {'grid':>9} {'1 thread':>10} {'2 threads':>10} {'speedup':>8} {'reference':>10} {'vs ref (best)':>14}")
    report["env"] = []
    plan = [(16, 200, 20), (32, 100, 5), (64, 50, 2), (256, 10 if a.quick else 20, 0)]
    for grid, steps, ref_steps in plan:
        sps = {1: [], 2: []}
        refs = []
        for _ in range(reps):
            for t in (1, 2):
                sps[t].append(env_steps_per_s(grid, t, steps))
            if ref_steps:
                refs.append(ref_steps_per_s(grid, ref_steps))
        m1, m2 = statistics.median(sps[1]), statistics.median(sps[2])
        ref = statistics.median(refs) if refs else None
        ratio = max(m1, m2) / ref if ref else None
        print(f"   {grid:>4}x{grid:<4} {m1:>10.1f} {m2:>10.1f} {m2 / m1:>7.2f}x "
              f"{(f'{ref:.2f}' if ref else '-'):>10} {(f'{ratio:.0f}x' if ratio else '-'):>14}")
        report["env"].append({"grid": grid, "sps_1": m1, "sps_2": m2, "ref_sps": ref, "vs_ref": ratio})
    r32 = next(r for r in report["env"] if r["grid"] == 32)
    print(f"   target >= 100x the reference at 32x32 -> {'MET' if r32['vs_ref'] >= 100 else 'NOT MET'}")
    os.makedirs(os.path.join(os.path.dirname(__file__), "results"), exist_ok=True)
    with open(os.path.join(os.path.dirname(__file__), "results", "pcs_headless.json"), "w") as f:
        json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
