# SPDX-License-Identifier: BSD-3-Clause
"""Runtime benchmark on PHOLD, measured side by side in one run.

    python benchmarks/runtime_phold.py [--repeats N] [--quick]

Prints, with medians of interleaved repeats (1 thread, 2 threads, 1, 2, ...):
  1. events/s at 1 and 2 threads, 16384 LPs to end_time 500, work_iters=0;
  2. the engine's own cost per event on one thread: time per event in the
     engine minus the PHOLD handler's time per call measured alone;
  3. the 2-thread speedup at work sizes calibrated to ~2 us and ~20 us per
     event.
Targets: >= 5 M events/s at 2 threads; <= 150 ns engine overhead;
speedup >= 1.5 at ~2 us and >= 1.85 at ~20 us.  Writes a JSON copy to
benchmarks/results/runtime_phold.json.
"""

import argparse
import functools
import json
import os
import platform
import statistics
import sys

import seer_runtime
from seer_runtime.models import phold
from seer_runtime.models.phold._model import bench_handler

from seer_bench import interleaved as _interleaved, median_of as med, spread


def interleaved(configs, repeats):
    """Run each PHOLD config (keyword arguments of ``phold.run``) once per repeat, alternating."""
    return _interleaved({k: functools.partial(phold.run, **kw) for k, kw in configs.items()}, repeats)


def calibrate(target_us, num_lps):
    """work_iters giving ~target_us per event on one thread (linear fit)."""
    n = 200_000
    base = bench_handler(n, num_lps=num_lps) / n
    probe = 2000
    per = (bench_handler(n // 20, num_lps=num_lps, work_iters=probe) / (n // 20) - base) / probe
    return max(1, round((target_us * 1e-6 - base) / per))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="3 repeats, shorter runs")
    a = p.parse_args()
    reps = 3 if a.quick else a.repeats
    end = 200.0 if a.quick else 500.0
    print(f"SEER runtime benchmark: PHOLD; {platform.processor() or platform.machine()}, "
          f"{seer_runtime.available_cpus()} CPUs, OpenMP={seer_runtime.openmp_enabled()}, "
          f"repeats={reps} (medians, interleaved)\n")
    report = {"repeats": reps}

    # 1. throughput, fine-grained
    base = dict(num_lps=16384, end_time=end, seed=1, work_iters=0)
    res = interleaved({1: dict(base, num_threads=1), 2: dict(base, num_threads=2)}, reps)
    assert res[1][0]["digest"] == res[2][0]["digest"], "serial equivalence broken"
    eps1, eps2 = med(res[1], "events_per_s"), med(res[2], "events_per_s")
    print(f"1. PHOLD 16384 LPs, end_time {end:g}, work_iters=0 ({res[1][0]['events']:,} events)")
    print(f"   {'threads':>8} {'M events/s':>11} {'spread':>7} {'rounds':>7} {'CAS retries':>12}")
    for t in (1, 2):
        print(f"   {t:>8} {med(res[t], 'events_per_s') / 1e6:>11.2f} {spread(res[t], 'events_per_s'):>6.0%} "
              f"{res[t][0]['rounds']:>7} {res[t][0]['cas_retries']:>12,}")
    print(f"   speedup 2/1: {eps2 / eps1:.2f}x    target: >= 5 M events/s at 2 threads "
          f"-> {'MET' if eps2 >= 5e6 else 'NOT MET'}\n")
    report["throughput"] = {"events": res[1][0]["events"], "eps_1": eps1, "eps_2": eps2,
                            "speedup": eps2 / eps1}

    # 2. engine overhead per event, one thread
    n = 2_000_000
    handler = statistics.median(bench_handler(n) / n for _ in range(reps))
    per_event = 1.0 / eps1
    overhead = per_event - handler
    print("2. Engine cost per event on one thread (same run as 1)")
    print(f"   time per event in the engine   {per_event * 1e9:7.1f} ns")
    print(f"   PHOLD handler alone            {handler * 1e9:7.1f} ns")
    print(f"   engine overhead                {overhead * 1e9:7.1f} ns   target <= 150 ns -> "
          f"{'MET' if overhead <= 150e-9 else 'NOT MET'}\n")
    report["overhead_ns"] = {"per_event": per_event * 1e9, "handler": handler * 1e9,
                             "engine": overhead * 1e9}

    # 3. speedup at coarse grains
    print("3. 2-thread speedup vs event cost (calibrated work_iters)")
    print(f"   {'target':>7} {'work_iters':>10} {'us/event 1T':>12} {'speedup':>8} {'spread 1T/2T':>13} {'target':>7}")
    report["grain"] = []
    for target_us, need, lps, t_end in ((2.0, 1.5, 16384, 40.0 if a.quick else 100.0),
                                        (20.0, 1.85, 4096, 20.0 if a.quick else 50.0)):
        iters = calibrate(target_us, lps)
        kw = dict(num_lps=lps, end_time=t_end, seed=2, work_iters=iters)
        r = interleaved({1: dict(kw, num_threads=1), 2: dict(kw, num_threads=2)}, reps)
        assert r[1][0]["digest"] == r[2][0]["digest"], "serial equivalence broken"
        us = med(r[1], "wall_s") / r[1][0]["events"] * 1e6
        sp = med(r[1], "wall_s") / med(r[2], "wall_s")
        print(f"   {target_us:>5.0f}us {iters:>10} {us:>12.2f} {sp:>7.2f}x "
              f"{spread(r[1], 'wall_s'):>6.0%}/{spread(r[2], 'wall_s'):<6.0%} {'>=' + str(need):>7} "
              f"{'MET' if sp >= need else 'NOT MET'}")
        busy = r[2][0]["busy_s"]
        idle = r[2][0]["idle_s"]
        print(f"   {'':>7} 2T busy/idle per thread: " +
              ", ".join(f"{b:.3f}/{i:.3f} s" for b, i in zip(busy, idle)))
        report["grain"].append({"target_us": target_us, "work_iters": iters, "us_per_event": us,
                                "speedup": sp})
    os.makedirs(os.path.join(os.path.dirname(__file__), "results"), exist_ok=True)
    with open(os.path.join(os.path.dirname(__file__), "results", "runtime_phold.json"), "w") as f:
        json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
