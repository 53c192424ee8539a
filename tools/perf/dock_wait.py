# SPDX-License-Identifier: BSD-3-Clause
"""The workers' dock wait (``seer_runtime.wait_policy(dock_ns=...)``: how
long a worker spins for the next run before it parks) and the
``sched_yield`` calls every wait makes between spinning and parking
(``seer_runtime.loop._set_team_yields``) against the two-process ceiling,
for the vector env at 2 threads, side by side in one run, optionally beside
busy-loop processes.

Between two env steps a worker waits for the next run while the caller runs
Python (the step's bookkeeping, the policy).  Under the ceiling it spins
through that gap and joins the next run at once; over it, it parks and the
next run must wake it (on a machine whose cores are taken, a wake-up waits
for a time slice).  Spinning longer keeps the worker on its core and costs
CPU that other processes could use.

Runners (PCS ``--grid`` x ``--grid``, ``--copies`` copies, the same random
actions): the vector env at 1 thread; at 2 threads in copy groups and in the
team (``--layouts``), once per dock ceiling and yield counts (``--yields``:
``N`` for every wait, or ``DOCK,JOIN,PHASE,GROUPS``: a member waiting for
the next run, the caller waiting for members to leave a phase, a member
waiting for a run's next phase, and the same in a run of an engine in copy
groups, whose step is one phase; both set before each of its blocks, and
restored after); and two
processes with half the copies each at 1 thread (the machine's ceiling, as
in ``vector_env.py``).  Reported: each runner over the two processes and
over 1 thread, medians of per-round ratios with their range, the
member's share of the time inside ``run_until``, the straggles (waits
for a preempted member that narrowed the team; docs/runtime.md, "Waiting")
and, on Linux, the member's time on a CPU and queued for one (runnable but
not running: /proc schedstat) per step.

    python tools/perf/dock_wait.py [--dock-us 200 1000] [--yields 2,2,2,0 2] [--busy 1]
        [--layouts cg team] [--copies 64] [--grid 8] [--steps 200] [--rounds 9]
"""

import argparse
import os
import threading

from seer_bench import interleave, load1, paired, start_busy, stop  # noqa: E402
from seer_bench.workloads import Halves, pcs_workload            # noqa: E402

import seer_runtime                                            # noqa: E402
from seer_envs.views.vector import vector_env                        # noqa: E402
from seer_runtime import loop                                  # noqa: E402


def _yields(text):
    """--yields: "N" (every wait) or "DOCK,JOIN,PHASE,GROUPS", counts 0-16."""
    try:
        counts = tuple(int(x) for x in text.split(","))
    except ValueError:
        counts = ()
    if len(counts) not in (1, 4) or not all(0 <= k <= 16 for k in counts):
        raise argparse.ArgumentTypeError(f"expected N or DOCK,JOIN,PHASE,GROUPS, counts from 0 to 16, "
                                         f"got {text!r}")
    return counts * 4 if len(counts) == 1 else counts


def _members_sched():
    """CPU time and time queued (runnable, not running), in ns, summed over
    this process's threads but the main one: the team's members, which
    every engine driven from the main thread shares (Linux schedstat;
    None elsewhere)."""
    main, run, queued = threading.get_native_id(), 0, 0
    try:
        for t in os.listdir("/proc/self/task"):
            if int(t) != main:
                with open(f"/proc/self/task/{t}/schedstat") as f:
                    r, q, _ = (int(x) for x in f.read().split())
                run, queued = run + r, queued + q
    except OSError:
        return None
    return run, queued


def _label(counts):
    return str(counts[0]) if len(set(counts)) == 1 else ",".join(map(str, counts))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dock-us", type=float, nargs="+", default=[200.0, 1000.0],
                   help="dock ceilings to compare, microseconds")
    p.add_argument("--yields", type=_yields, nargs="+", default=None,
                   help="sched_yield calls before parking to compare: N for every wait, or "
                        "DOCK,JOIN,PHASE,GROUPS (default: the current counts)")
    p.add_argument("--layouts", nargs="+", choices=("cg", "team"), default=["cg", "team"])
    p.add_argument("--busy", type=int, default=0, help="busy-loop processes beside the run")
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--steps", type=int, default=200, help="steps per runner per round")
    p.add_argument("--rounds", type=int, default=9)
    args = p.parse_args()
    E, g = args.copies, args.grid
    kw, acts = pcs_workload(E, g, args.steps)
    default = seer_runtime.wait_policy()
    yields0 = loop._set_team_yields(loop._set_team_yields(0))
    yields = args.yields if args.yields is not None else [yields0]

    runners, envs = {}, {}
    sched = {}          # per 2-thread runner, per block: the member's (run, queued) ns
    v1 = envs["vector 1 thr"] = vector_env("pcs_v0", E, num_threads=1, **kw)
    runners["vector 1 thr"] = lambda: [v1.step(a) for a in acts]
    for layout in args.layouts:
        for us in args.dock_us:
            for n in yields:
                name = f"2 thr {layout} dock {us:g} us" + (f" yields {_label(n)}" if len(yields) > 1 else "")
                v = envs[name] = vector_env("pcs_v0", E, num_threads=2, copy_parallel=layout == "cg", **kw)

                def run(v=v, ns=us * 1e3, n=n, name=name):
                    seer_runtime.wait_policy(dock_ns=ns)
                    loop._set_team_yields(n)
                    s0 = _members_sched()
                    try:
                        for a in acts:
                            v.step(a)
                    finally:
                        s1 = _members_sched()
                        seer_runtime.wait_policy(*default)
                        loop._set_team_yields(yields0)
                    if s0 is not None and s1 is not None:
                        sched.setdefault(name, []).append((s1[0] - s0[0], s1[1] - s0[1]))
                runners[name] = run
    for v in envs.values():
        v.reset(seed=0)
    busy = start_busy(args.busy)
    halves = Halves(E, kw, acts)
    runners["2 procs x half"] = halves.round
    try:
        times = interleave(runners, args.rounds)
    finally:
        halves.close()
        stop(busy)
    member = {}
    for name, v in envs.items():
        st = v.engine.stats()
        member[name] = (f"{st['busy_s'][1] / st['wall_s']:.0%}, {st['straggles']} straggles"
                        if len(st["busy_s"]) > 1 else "-")
        if name in sched:
            blocks = len(sched[name]) * args.steps
            member[name] += (f"; on a CPU {sum(r for r, _ in sched[name]) / blocks / 1e3:.0f} us, "
                             f"queued {sum(q for _, q in sched[name]) / blocks / 1e3:.0f} us a step")
        v.close()
    print(f"PCS {g}x{g}, {E} copies, {args.steps} steps x {args.rounds} interleaved rounds, "
          f"{args.busy} busy-loop processes; load average {load1():.1f}")
    print(f"{'runner':<33} {'/ two processes':>28} {'/ 1 thread':>28}  member inside run_until")
    for name in runners:
        if name == "2 procs x half":
            continue
        print(f"{name:<33} {paired(times, name, '2 procs x half'):>28} "
              f"{paired(times, name, 'vector 1 thr'):>28}  {member[name]}")


if __name__ == "__main__":
    main()
