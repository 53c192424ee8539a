# SPDX-License-Identifier: BSD-3-Clause
"""The team's spreading (src/team.h, ``seer_spread``: a member woken into a
phase on a teammate's CPU moves to another allowed CPU) on and off, side by
side in one process, beside busy-loop processes.

    python tools/perf/team_spread.py [--busy 1] [--rounds 15] [--steps 100]
        [--copies 64] [--grid 8] [--threads 2]

One vector env (PCS, ``--copies`` copies, ``--threads`` threads, the
automatic layout) steps blocks of ``--steps`` steps, spreading on and off in
alternate blocks (the order swapped every round, so a slow spell of the
machine hits both).  Per setting it prints the median block's ms per step,
the CPUs the env's threads used (their run time in
``/proc/self/task/*/schedstat`` over the block's wall time), the CPU the
busy loops got, the share of steps after which the caller and the busiest
member last ran on one CPU (``/proc/self/task/TID/stat``, read after each
step; it costs each step a file read in both settings), and the moves a
step.  Then the speed with spreading on over off: the median of per-round
ratios, with their range.  Linux only (it reads /proc).
"""

import argparse
import ctypes
import os
import statistics
import sys
import threading
import time


from seer_bench import paired, start_busy, stop                 # noqa: E402
from seer_bench.workloads import pcs_workload             # noqa: E402

from seer_envs.views.vector import vector_env                # noqa: E402
from seer_runtime import loop                          # noqa: E402


def _run_ns(path):
    with open(path) as f:
        return int(f.read().split()[0])


def _last_cpu(tid):
    with open(f"/proc/self/task/{tid}/stat") as f:
        s = f.read()
    return int(s[s.rindex(")") + 2:].split()[36])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--busy", type=int, default=1, help="busy-loop processes beside the env")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--steps", type=int, default=100, help="steps per block")
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    if not os.path.isdir("/proc/self/task"):
        sys.exit("team_spread.py reads /proc/self/task: Linux only")
    if args.threads < 2 or args.rounds < 1 or args.steps < 1:
        sys.exit("--threads must be at least 2, --rounds and --steps at least 1")
    E, g = args.copies, args.grid
    kw, acts = pcs_workload(E, g, args.steps)
    v = vector_env("pcs_v0", E, num_threads=args.threads, **kw)
    v.reset(seed=0)
    for a in acts[:20]:
        v.step(a)                       # the team exists from here on
    me = threading.get_native_id()
    tids = [int(t) for t in os.listdir("/proc/self/task")]
    getcpu = ctypes.CDLL(None).sched_getcpu
    busy = start_busy(args.busy)
    stats = {k: {"ms": [], "cpus": [], "busy": [], "stacked": [], "moves": []} for k in ("on", "off")}
    old = loop._set_team_spread(1)
    try:
        time.sleep(0.2)
        for r in range(args.rounds):
            for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
                loop._set_team_spread(1 if mode == "on" else 0)
                run0 = {t: _run_ns(f"/proc/self/task/{t}/schedstat") for t in tids}
                b0 = [_run_ns(f"/proc/{b.pid}/schedstat") for b in busy]
                m0 = loop._team_spread_moves()
                member = max((t for t in tids if t != me), key=lambda t: run0[t])
                stacked = 0
                t0 = time.perf_counter()
                for a in acts:
                    v.step(a)
                    stacked += getcpu() == _last_cpu(member)
                wall = time.perf_counter() - t0
                s = stats[mode]
                s["ms"].append(1e3 * wall / args.steps)
                s["cpus"].append(sum(_run_ns(f"/proc/self/task/{t}/schedstat") - run0[t]
                                     for t in tids) * 1e-9 / wall)
                s["busy"].append(sum(_run_ns(f"/proc/{b.pid}/schedstat") - x
                                     for b, x in zip(busy, b0)) * 1e-9 / wall)
                s["stacked"].append(stacked / args.steps)
                s["moves"].append((loop._team_spread_moves() - m0) / args.steps)
    finally:
        loop._set_team_spread(old)
        stop(busy)
    print(f"PCS {g}x{g} x {E} copies, {args.threads} threads ({v.layout}), {args.busy} busy-loop "
          f"processes beside; {args.rounds} rounds of {args.steps} steps per setting; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'spreading':<10} {'ms/step':>8} {'env CPUs':>9} {'busy CPUs':>10} {'one CPU':>8} {'moves/step':>11}")
    for k, s in stats.items():
        med = {f: statistics.median(x) for f, x in s.items()}
        print(f"{k:<10} {med['ms']:>8.3f} {med['cpus']:>9.2f} {med['busy']:>10.2f} "
              f"{med['stacked']:>8.0%} {med['moves']:>11.3f}")
    print(f"spreading on over off: {paired({k: s['ms'] for k, s in stats.items()}, 'on', 'off')}")


if __name__ == "__main__":
    main()
