# SPDX-License-Identifier: BSD-3-Clause
"""A/B of the wait policy: throughput at 1 and 2 threads, with 0, 1 and 3
busy-loop processes beside it, for two source trees side by side (each
measurement in a fresh subprocess, trees and thread counts interleaved).

    python tools/perf/waiting_ab.py --tree before=/path/to/old --tree after=. \
        [--env after:SEER_PHASE_GRAIN_NS=2000] [--loads 0 1 3] [--repeats 2] [--seconds 1.5]
        [--threads 1 2] [--work phold16k air4096]

Prints per load and workload: throughput per tree and thread count, the
2-thread / 1-thread ratio of each tree and, for two trees, the second's
throughput over the first's at each thread count; plus the load average.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORKLOADS = {
    "phold16k": "PHOLD 16384 LPs to t=200 (events/s)",
    "pcs8": "PCS env 8x8, step_arrays (steps/s)",
    "pcs32": "PCS env 32x32, step_arrays (steps/s)",
    "air4096": "Aircraft env 4096 UAVs, step_arrays (steps/s)",
    "vec64": "PCS 8x8 vector env, 64 copies, step (vector steps/s)",
    "pcs256h": "PCS headless 256x256 to t=300 (events/s)",
}

CHILD = r"""
import sys, time, json
import numpy as np
work, threads, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
if work == "phold16k":
    from seer_runtime.models import phold
    model, eng = phold.make(num_lps=16384, num_threads=threads, seed=1)
    eng.run_until(5.0)
    t0 = time.perf_counter(); e0 = eng.stats()["events"]; t = 5.0
    while time.perf_counter() - t0 < seconds and t < 200.0:
        t += 5.0
        eng.run_until(t)
    rate = (eng.stats()["events"] - e0) / (time.perf_counter() - t0)
elif work == "pcs256h":
    from seer_envs.pcs.headless import run_headless
    rate = run_headless(256, 256, end_time=300.0, num_threads=threads, seed=1)["events_per_s"]
elif work == "vec64":
    from seer_envs.views.vector import vector_env
    env = vector_env("pcs_v0", 64, num_threads=threads, grid_width=8, grid_height=8,
                     max_cycles=10**9)
    env.reset(seed=1)
    a = np.random.default_rng(0).integers(0, 3, (64, 64))
    for _ in range(5):
        env.step(a)
    n = 0; t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(5):
            env.step(a)
        n += 5
    rate = n / (time.perf_counter() - t0)
else:
    if work == "air4096":
        import seer_envs
        env = seer_envs.make("aircraft_v0", num_threads=threads, num_uavs=4096, max_cycles=10**9)
        a = np.zeros((4096, 2), dtype=np.float32)
    else:
        import seer_envs
        side = 8 if work == "pcs8" else 32
        env = seer_envs.make("pcs_v0", num_threads=threads, grid_width=side, grid_height=side,
                                  max_cycles=10**9)
        a = np.zeros(side * side, dtype=np.int64)
    env.reset_arrays(seed=1)
    for _ in range(3 if work == "air4096" else 20):
        env.step_arrays(a)
    n = 0; t0 = time.perf_counter()
    k = 1 if work == "air4096" else 10
    while time.perf_counter() - t0 < seconds:
        for _ in range(k):
            env.step_arrays(a)
        n += k
    rate = n / (time.perf_counter() - t0)
import os, seer_runtime
print(os.path.dirname(os.path.dirname(os.path.abspath(seer_runtime.__file__))))
print(json.dumps(rate))
"""


def measure(tree, work, threads, seconds, extra_env=()):
    rest = os.environ.get("PYTHONPATH", "")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree) + (os.pathsep + rest if rest else ""))
    env.pop("OMP_NUM_THREADS", None)
    env.update(extra_env)
    # cwd = the tree: "python -c" puts the working directory first on
    # sys.path, ahead of PYTHONPATH, so run from elsewhere every tree would
    # import the caller's checkout.
    r = subprocess.run([sys.executable, "-c", CHILD, work, str(threads), str(seconds)],
                       env=env, capture_output=True, text=True, timeout=300,
                       cwd=os.path.abspath(tree))
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    out = r.stdout.strip().splitlines()
    where, rate = out[-2], json.loads(out[-1])
    if os.path.realpath(where) != os.path.realpath(tree):
        raise RuntimeError(f"tree {tree} imported seer_runtime from {where}")
    return rate


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", required=True, help="name=path")
    ap.add_argument("--env", action="append", default=[],
                    help="NAME:VAR=VALUE, an environment variable for tree NAME's runs "
                         "(e.g. the same tree twice with two SEER_PHASE_GRAIN_NS)")
    ap.add_argument("--loads", type=int, nargs="+", default=[0, 1, 3])
    ap.add_argument("--work", nargs="+", default=list(WORKLOADS))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="thread counts (the first is the baseline of the ratios)")
    args = ap.parse_args()
    trees = [t.split("=", 1) for t in args.tree]
    envs = {}
    for spec in args.env:
        name, _, assign = spec.partition(":")
        var, eq, value = assign.partition("=")
        if not eq or name not in dict(trees):
            ap.error(f"--env takes NAME:VAR=VALUE for a --tree NAME, got {spec!r}")
        envs.setdefault(name, {})[var] = value
    for load in args.loads:
        busy = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(load)]
        try:
            time.sleep(0.5)
            print(f"== {load} busy process(es); load average {os.getloadavg()[0]:.1f} "
                  f"on {os.cpu_count()} cpus", flush=True)
            for work in args.work:
                res = {}
                for r in range(args.repeats):
                    # ABBA order: a drift over the run (this VM's CPU credit,
                    # a neighbour's load) does not favour the tree run first.
                    for name, path in (trees if r % 2 == 0 else trees[::-1]):
                        for th in args.threads:
                            res.setdefault((name, th), []).append(
                                measure(path, work, th, args.seconds, envs.get(name, {})))
                line = [f"  {work:9s}"]
                base, top = args.threads[0], args.threads[-1]
                for name, _ in trees:
                    rb = statistics.median(res[(name, base)])
                    parts = [f"{th}t {statistics.median(res[(name, th)]):12.1f}" for th in args.threads]
                    ratios = [f"{th}t/{base}t {statistics.median(res[(name, th)]) / rb:5.2f}"
                              for th in args.threads[1:]]
                    line.append(f"{name}: " + " ".join(parts + ratios))
                if len(trees) == 2:
                    a, b = trees[0][0], trees[1][0]
                    line.append(" ".join(
                        f"{th}t {b}/{a} {statistics.median(res[(b, th)]) / statistics.median(res[(a, th)]):5.2f}"
                        for th in args.threads))
                print(" | ".join(line), flush=True)
        finally:
            for p in busy:
                p.kill()
                p.wait()


if __name__ == "__main__":
    main()
