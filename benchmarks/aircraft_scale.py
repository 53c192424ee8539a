# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft benchmark, measured side by side in one run.

    python benchmarks/aircraft_scale.py [--repeats N] [--quick]

1. Env step latency (array fast path, random continuous actions, default
   parameters) at 64, 256, 1024 and 4096 UAVs, at 1 and 2 threads
   (interleaved repeats, medians), the speedup, and the pure-Python
   reference's step time where it finishes in reasonable time.
   Targets: 2-thread speedup >= 1.8 at 4096 UAVs; >= 100x the reference's
   step throughput at 1024 UAVs (best thread count).
2. Event granularity: the mean event time (runtime statistics: busy time
   over events executed, 1 thread) and the 2-thread speedup at 1024 UAVs
   for several ``dynamics_substeps``.
Writes a JSON copy to benchmarks/results/aircraft_scale.json.
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
from seer_envs.aircraft.reference import AircraftReference


def _actions(n, steps, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (n, 2)).astype(np.float32) for _ in range(steps)]


def env_step_ms(n, threads, steps, **params):
    """Median-free single measurement: ms per step and the runtime stats."""
    env = seer_envs.make("aircraft_v0", num_uavs=n, num_threads=threads, max_cycles=steps + 10, **params)
    env.reset_arrays(seed=1)
    acts = _actions(n, steps + 2)
    env.step_arrays(acts[0])                    # warm the queues
    env.step_arrays(acts[1])
    env.engine.reset_stats()
    t0 = time.perf_counter()
    for a in acts[2:]:
        env.step_arrays(a)
    ms = (time.perf_counter() - t0) / steps * 1e3
    return ms, env.engine.stats()


def ref_step_ms(n, steps):
    env = seer_envs.make("aircraft_v0", num_uavs=n)
    ref = AircraftReference(env.config)
    ref.reset(1)
    acts = _actions(n, steps + 1)
    ref.step(acts[0])
    t0 = time.perf_counter()
    for a in acts[1:]:
        ref.step(a)
    return (time.perf_counter() - t0) / steps * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="3 repeats, fewer steps")
    a = p.parse_args()
    reps = 3 if a.quick else a.repeats
    print(f"SEER Aircraft benchmark; {seer_runtime.available_cpus()} CPUs, "
          f"OpenMP={seer_runtime.openmp_enabled()}, repeats={reps} (medians, interleaved)\n")
    report = {"scale": [], "granularity": []}

    # 1. step latency
    print("1. Env step latency (array fast path, random actions, default parameters)")
    print(f"   {'UAVs':>5} {'events/step':>11} {'1 thread':>10} {'2 threads':>10} {'speedup':>8} "
          f"{'reference':>11} {'vs ref (best)':>14}")
    plan = [(64, 200, 10), (256, 100, 3), (1024, 40, 1), (4096, 20, 0)]
    if a.quick:
        plan = [(n, max(5, s // 2), r) for n, s, r in plan]
    for n, steps, ref_steps in plan:
        ms = {1: [], 2: []}
        refs = []
        events = None
        for _ in range(reps):
            for t in (1, 2):
                m, st = env_step_ms(n, t, steps)
                ms[t].append(m)
                events = st["events"] / steps
            if ref_steps:
                refs.append(ref_step_ms(n, ref_steps))
        m1, m2 = statistics.median(ms[1]), statistics.median(ms[2])
        ref = statistics.median(refs) if refs else None
        ratio = ref / min(m1, m2) if ref else None
        print(f"   {n:>5} {events:>11.0f} {m1:>7.2f} ms {m2:>7.2f} ms {m1 / m2:>7.2f}x "
              f"{(f'{ref:.0f} ms' if ref else '-'):>11} {(f'{ratio:.0f}x' if ratio else '-'):>14}")
        report["scale"].append({"uavs": n, "events_per_step": events, "ms_1": m1, "ms_2": m2,
                                "speedup": m1 / m2, "ref_ms": ref, "vs_ref": ratio,
                                "all_ms_1": ms[1], "all_ms_2": ms[2]})
    r4096 = next(r for r in report["scale"] if r["uavs"] == 4096)
    r1024 = next(r for r in report["scale"] if r["uavs"] == 1024)
    ok_speedup = r4096["speedup"] >= 1.8
    ok_ref = r1024["vs_ref"] is not None and r1024["vs_ref"] >= 100
    print(f"   target: 2-thread speedup >= 1.8 at 4096 UAVs -> {r4096['speedup']:.2f}x "
          f"{'MET' if ok_speedup else 'NOT MET'}")
    print(f"   target: >= 100x the reference's step throughput at 1024 UAVs -> "
          f"{r1024['vs_ref']:.0f}x {'MET' if ok_ref else 'NOT MET'}\n")

    # 2. event granularity
    n = 1024
    print(f"2. Event granularity at {n} UAVs: mean event time (busy / events, 1 thread) "
          "and 2-thread speedup")
    print(f"   {'substeps':>8} {'mean event':>11} {'1 thread':>10} {'2 threads':>10} {'speedup':>8}")
    for sub in (1, 4, 8, 16, 32):
        steps = 10 if a.quick else 20
        ms = {1: [], 2: []}
        met = []
        for _ in range(reps):
            for t in (1, 2):
                m, st = env_step_ms(n, t, steps, dynamics_substeps=sub)
                ms[t].append(m)
                if t == 1:
                    met.append(sum(st["busy_s"]) / st["events"] * 1e6)
        m1, m2 = statistics.median(ms[1]), statistics.median(ms[2])
        mt = statistics.median(met)
        print(f"   {sub:>8} {mt:>8.3f} us {m1:>7.2f} ms {m2:>7.2f} ms {m1 / m2:>7.2f}x")
        report["granularity"].append({"uavs": n, "substeps": sub, "mean_event_us": mt,
                                      "ms_1": m1, "ms_2": m2, "speedup": m1 / m2})
    os.makedirs(os.path.join(os.path.dirname(__file__), "results"), exist_ok=True)
    with open(os.path.join(os.path.dirname(__file__), "results", "aircraft_scale.json"), "w") as f:
        json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
