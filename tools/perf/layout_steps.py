# SPDX-License-Identifier: BSD-3-Clause
"""Step one vector env layout for a while, to profile it: a target for
``perf record`` (a sampling profile of where the engine's time goes, which
needs no hardware counters), or a plain timing of one layout.

    python tools/perf/layout_steps.py [--copies 32] [--grid 8] [--threads 1] [--layout team|cg]
        [--steps 600]
    perf record -e cpu-clock -F 2000 -o cg.data python tools/perf/layout_steps.py --layout cg
    perf report -i cg.data --no-children --sort symbol -n

PCS on a ``--grid`` square, ``--copies`` copies, ``--threads`` threads, in
the team (``copy_parallel=False``: every copy round by round) or in copy
groups (``cg``, ``copy_parallel=True``), random actions (a fixed
generator, as in ``vector_env.py``).  After 10 untimed steps it times
``--steps`` steps and prints ms per step and the engine's LP visits and
events, which are the same in both layouts: sample counts of the two
layouts' profiles then compare the cost per visit.

    python tools/perf/layout_steps.py --sweep 4,8,16,32,64 [--threads 1] [--rounds 9]
        [--steps 100]

``--sweep``: both layouts at each of these numbers of copies, blocks of
``--steps`` steps interleaved over ``--rounds`` rounds; prints the time
inside ``run_until`` per copy and step (median block) and copy groups over
the team (the median of per-round ratios).  How the cost of a copy grows
with the copies one thread runs: a copy's queues and state are touched once
a step, so past what a core's cache holds each copy starts its step cold.
"""

import argparse
import statistics
import sys
import time

from seer_bench import interleave, paired                            # noqa: E402
from seer_bench.workloads import pcs_workload, steps_timed as _steps_timed   # noqa: E402

from seer_envs.views.vector import vector_env               # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=32)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--layout", choices=("team", "cg"), default="cg")
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--sweep", help="comma-separated numbers of copies: both layouts at each")
    p.add_argument("--rounds", type=int, default=9, help="with --sweep")
    args = p.parse_args()
    if args.sweep:
        return sweep(args)
    kw, acts = pcs_workload(args.copies, args.grid, 50)
    v = vector_env("pcs_v0", args.copies, num_threads=args.threads,
                   copy_parallel=args.layout == "cg", **kw)
    v.reset(seed=0)
    for a in acts[:10]:
        v.step(a)
    v.engine.reset_stats()
    t0 = time.perf_counter()
    for i in range(args.steps):
        v.step(acts[i % len(acts)])
    dt = time.perf_counter() - t0
    visits = sum(t["lps_executed"] for t in v.engine._thread_stats())
    print(f"PCS {args.grid}x{args.grid} x {args.copies} copies, {args.threads} thread(s), "
          f"{v.layout}: {1e3 * dt / args.steps:.3f} ms/step; per step {visits / args.steps:.0f} LP "
          f"visits, {v.engine.stats()['events'] / args.steps:.0f} events")
    v.close()


def sweep(args):
    try:
        sizes = [int(x) for x in args.sweep.split(",")]
    except ValueError:
        sys.exit(f"--sweep takes comma-separated numbers of copies, got {args.sweep!r}")
    if not sizes or min(sizes) < 1 or args.rounds < 1 or args.steps < 1:
        sys.exit("--sweep sizes, --rounds and --steps must be at least 1")
    kw, acts = pcs_workload(max(sizes), args.grid, args.steps)
    envs = {}
    for n in sizes:
        for layout in ("team", "cg"):
            v = envs[n, layout] = vector_env("pcs_v0", n, num_threads=args.threads,
                                             copy_parallel=layout == "cg", **kw)
            v.reset(seed=0)
            for a in acts[:5]:
                v.step(a[:n])
    engine_s = {k: [] for k in envs}
    runners = {k: (lambda v=v, k=k: _steps_timed(v, [a[:k[0]] for a in acts], engine_s[k]))
               for k, v in envs.items()}
    interleave(runners, args.rounds)
    print(f"PCS {args.grid}x{args.grid}, {args.threads} thread(s), {args.rounds} rounds of "
          f"{args.steps} steps: microseconds inside run_until per copy and step (median round)")
    print(f"{'copies':>6} {'team':>8} {'cg':>8} {'cg over team':>22}")
    for n in sizes:
        us = {k: 1e6 * statistics.median(engine_s[n, k]) / (args.steps * n) for k in ("team", "cg")}
        print(f"{n:>6} {us['team']:>8.1f} {us['cg']:>8.1f} "
              f"{paired(engine_s, (n, 'cg'), (n, 'team')):>22}")
    for v in envs.values():
        v.close()


if __name__ == "__main__":
    main()
