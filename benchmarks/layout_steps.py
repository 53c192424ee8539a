# SPDX-License-Identifier: BSD-3-Clause
"""Step one vector env layout for a while, to profile it: a target for
``perf record`` (a sampling profile of where the engine's time goes, which
needs no hardware counters), or a plain timing of one layout.

    python benchmarks/layout_steps.py [--copies 32] [--grid 8] [--threads 1] [--layout team|cg]
        [--steps 600]
    perf record -e cpu-clock -F 2000 -o cg.data python benchmarks/layout_steps.py --layout cg
    perf report -i cg.data --no-children --sort symbol -n

PCS on a ``--grid`` square, ``--copies`` copies, ``--threads`` threads, in
the team (``copy_parallel=False``: every copy round by round) or in copy
groups (``cg``, ``copy_parallel=True``), random actions (a fixed
generator, as in ``vector_env.py``).  After 10 untimed steps it times
``--steps`` steps and prints ms per step and the engine's LP visits and
events, which are the same in both layouts: sample counts of the two
layouts' profiles then compare the cost per visit.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vector_env import pcs_workload                    # noqa: E402

from seer_envs.vector import vector_env               # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=32)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--layout", choices=("team", "cg"), default="cg")
    p.add_argument("--steps", type=int, default=600)
    args = p.parse_args()
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


if __name__ == "__main__":
    main()
