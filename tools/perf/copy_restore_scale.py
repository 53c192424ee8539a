# SPDX-License-Identifier: BSD-3-Clause
"""One copy of a vector env saved and restored into another slot, at
growing numbers of copies: a per-copy restore should cost what one copy
holds, not what the batch holds.

    python tools/perf/copy_restore_scale.py [--copies 16 256 1024 4096] [--grid 4] [--repeats 40]

For each count: two vector envs of PCS ``grid`` x ``grid`` at 1 thread, a
few steps in; then, ``--repeats`` times, ``snapshot(copies=[k])``,
``to_bytes()``, ``Snapshot.from_bytes`` and ``restore(..., copies=[k+5])``
into the other env.  Prints the median of each part (ms).  For an A/B, run
it with ``PYTHONPATH`` set to each tree, twice for the A/A."""

import argparse
import statistics
import time

import numpy as np

import seer_envs
from seer_envs import Snapshot


def measure(copies, grid, repeats):
    kw = dict(grid_width=grid, grid_height=grid, max_cycles=10**6, num_threads=1)
    src, dst = (seer_envs.vector_env("pcs_v0", copies, **kw) for _ in range(2))
    src.reset(seed=0)
    dst.reset(seed=1)
    acts = np.ones((copies, src.num_agents), np.int64)
    for _ in range(3):
        src.step(acts)
    parts = {"snapshot": [], "to_bytes": [], "from_bytes": [], "restore": []}
    for k in range(repeats):
        t0 = time.perf_counter()
        snap = src.snapshot(copies=[k % copies])
        t1 = time.perf_counter()
        raw = snap.to_bytes()
        t2 = time.perf_counter()
        back = Snapshot.from_bytes(raw)
        t3 = time.perf_counter()
        dst.restore(back, copies=[(k + 5) % copies])
        t4 = time.perf_counter()
        for name, t in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            parts[name].append(t)
    src.close()
    dst.close()
    return {name: 1e3 * statistics.median(ts) for name, ts in parts.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--copies", type=int, nargs="+", default=[16, 256, 1024, 4096])
    p.add_argument("--grid", type=int, default=4)
    p.add_argument("--repeats", type=int, default=40)
    a = p.parse_args()
    print(f"one copy of PCS {a.grid}x{a.grid}, 1 thread; medians of {a.repeats} (ms)")
    print(f"{'copies':>7} {'snapshot':>9} {'to_bytes':>9} {'from_bytes':>11} {'restore':>8}")
    for n in a.copies:
        m = measure(n, a.grid, a.repeats)
        print(f"{n:>7} {m['snapshot']:>9.3f} {m['to_bytes']:>9.3f} {m['from_bytes']:>11.3f} {m['restore']:>8.3f}",
              flush=True)


if __name__ == "__main__":
    main()
