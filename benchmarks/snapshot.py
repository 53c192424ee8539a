# SPDX-License-Identifier: BSD-3-Clause
"""What a snapshot costs, beside one env step of the same configuration.

    python benchmarks/snapshot.py [--repeats 5] [--small]
    python benchmarks/snapshot.py --ab OLD_TREE [--rounds 5]

For PCS 64x64 and Aircraft with 4096 UAVs at 1 thread, mid-episode (after
``--warm`` steps), per round: the bytes path a user saving to a file or
pickling takes (``env.snapshot()``, ``to_bytes()``,
``Snapshot.from_bytes``, which checks the digest over every byte, and
``other.restore``, which checks every event as it copies it), and the
in-memory path (``other.restore(env.snapshot())``).  Printed: each part's
median, and the median over rounds of each path's time over that round's
step (the step right after the path) and over the step after that (a step
after a step, the steady state of a loop).  Then the snapshot's size
against the live state it holds (the engine's pending events and per-LP
arrays, the model's arrays), and one copy of a vector env (16 x PCS 16x16,
1024 x PCS 4x4) saved alone and restored into another slot, against one
step of the vector env.  Targets: snapshot + restore at most one step;
size at most 2x the live state.  ``--small`` runs PCS 16x16 and Aircraft
256 (a quick check).

``--ab OLD_TREE``: side by side with another checkout (its built tree):
rounds of this measurement, each in a fresh process with ``PYTHONPATH`` set
to OLD_TREE (A), this tree (B) and this tree again (A/A: the noise), in an
order that alternates from round to round; printed, per env, the median
bytes path of each and the ratios B/A and B/B'.  Only the public API is
timed, so any checkout that has snapshots runs it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import seer_envs
from seer_envs import Snapshot


def live_bytes(env):
    """Bytes of the state a continuation needs: pending events, per-LP RNG and
    emission counters and times, the model's arrays."""
    from seer_envs.snapshot.whole import _model_arrays
    eng = env.engine.export_state()
    return (eng["events"].nbytes + sum(eng[k].nbytes for k in ("rng_key", "rng_ctr", "emit_seq", "next_time"))
            + sum(a.nbytes for a in _model_arrays(env.unwrapped._batch.copies).values()))


def measure(sid, kw, warm, repeats):
    env = seer_envs.make(sid, num_threads=1, max_cycles=10**6, **kw)
    other = seer_envs.make(sid, num_threads=1, max_cycles=10**6, **kw)
    env.reset_arrays(seed=0)
    space, n = env.action_space(env.possible_agents[0]), len(env.possible_agents)
    rng = np.random.default_rng(0)
    act = (rng.integers(0, space.n, n) if hasattr(space, "n")
           else rng.uniform(-1, 1, (n,) + space.shape).astype(np.float32))
    for _ in range(warm):
        env.step_arrays(act)
    times = {k: [] for k in ("step", "steady", "snapshot", "to_bytes", "from_bytes", "restore", "bytes",
                             "memory")}
    ratios = {k + s: [] for k in ("bytes", "memory") for s in ("", "_steady")}

    def bytes_path():
        t0 = time.perf_counter()
        snap = env.snapshot()
        t1 = time.perf_counter()
        raw = snap.to_bytes()
        t2 = time.perf_counter()
        back = Snapshot.from_bytes(raw)
        t3 = time.perf_counter()
        other.restore(back)
        t4 = time.perf_counter()
        for k, v in zip(("snapshot", "to_bytes", "from_bytes", "restore"), (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            times[k].append(v)
        return t4 - t0

    paths = {"bytes": bytes_path, "memory": lambda: _timed(lambda: other.restore(env.snapshot()))}
    # Each path in its own run of rounds (warm-up rounds first), as a user's
    # loop repeats one: interleaved, one path's large allocations change where
    # the next one's come from (on this machine a fresh page costs ~8 us).
    for name, path in paths.items():
        for _ in range(3):              # the allocator settles (a fresh 6 MB costs ~1500 page faults)
            path()
            env.step_arrays(act)
        for r in range(repeats):
            took = path()
            t0 = time.perf_counter()
            env.step_arrays(act)
            t1 = time.perf_counter()
            env.step_arrays(act)         # a step after a step: the steady state of a loop
            t2 = time.perf_counter()
            step, steady = t1 - t0, t2 - t1
            times["step"].append(step)
            times["steady"].append(steady)
            ratios[name].append(took / step)
            ratios[name + "_steady"].append(took / steady)
            times[name].append(took)
    raw = env.snapshot().to_bytes()
    med = {k: statistics.median(v) for k, v in times.items()}
    med.update({f"ratio_{k}": statistics.median(v) for k, v in ratios.items()})
    return med, len(raw), live_bytes(env)


def _timed(f, *a):
    t0 = time.perf_counter()
    f(*a)
    return time.perf_counter() - t0


CASES = {"small": [("pcs_v0", "PCS 16x16", dict(grid_width=16, grid_height=16)),
                   ("aircraft_v0", "Aircraft 256", dict(num_uavs=256))],
         "large": [("pcs_v0", "PCS 64x64", dict(grid_width=64, grid_height=64)),
                   ("aircraft_v0", "Aircraft 4096", dict(num_uavs=4096))]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warm", type=int, default=10, help="steps before the first snapshot")
    p.add_argument("--small", action="store_true")
    p.add_argument("--ab", metavar="OLD_TREE", help="side by side with the checkout at OLD_TREE")
    p.add_argument("--rounds", type=int, default=5, help="--ab: rounds (a process per tree each)")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)     # one process of --ab
    a = p.parse_args()
    cases = CASES["small" if a.small else "large"]
    if a.json:
        print(json.dumps({label: measure(sid, kw, a.warm, a.repeats)[0] for sid, label, kw in cases}))
        return 0
    if a.ab:
        return side_by_side(a, cases)
    print(f"1 thread, mid-episode (after {a.warm} steps), {a.repeats} rounds; times are medians (ms), "
          "x/step the median over rounds of the path's time over that round's step")
    print(f"{'env':<14} {'step':>7} {'snapshot':>9} {'to_bytes':>9} {'from_bytes':>11} {'restore':>8} "
          f"{'bytes path/step':>16} {'in memory/step':>15} {'size MB':>8} {'size/live':>10}")
    steady = {}
    for sid, label, kw in cases:
        med, size, live = steady[label] = measure(sid, kw, a.warm, a.repeats)
        print(f"{label:<14} {1e3 * med['step']:>7.2f} {1e3 * med['snapshot']:>9.2f} {1e3 * med['to_bytes']:>9.2f} "
              f"{1e3 * med['from_bytes']:>11.2f} {1e3 * med['restore']:>8.2f} {med['ratio_bytes']:>16.2f} "
              f"{med['ratio_memory']:>15.2f} {size / 1e6:>8.2f} {size / live:>10.2f}")
    print("the same paths over the next step instead (a step after a step, whose cache the path "
          "did not just take):")
    for sid, label, kw in cases:
        med = steady[label][0]
        print(f"{label:<14} steady step {1e3 * med['steady']:.2f} ms: bytes path/step "
              f"{med['ratio_bytes_steady']:.2f}, in memory/step {med['ratio_memory_steady']:.2f}")
    print()
    for copies, grid in ((16, 16), (1024, 4)):       # a copy's restore does not grow with the copies
        per_copy(a.repeats, copies, grid)
    return 0


def side_by_side(a, cases):
    """Rounds of one process per tree (A: ``a.ab``, B and B': this tree),
    in an order that alternates; the medians of the bytes path."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = {"A": os.path.abspath(a.ab), "B": here, "B'": here}
    script = os.path.abspath(__file__)
    runs = {k: [] for k in trees}
    BB = "B'"
    orders = [("A", "B", "B'"), ("B", "B'", "A"), ("B'", "A", "B")]
    for r in range(a.rounds):
        for k in orders[r % 3]:
            cmd = [sys.executable, script, "--json", "--repeats", str(a.repeats), "--warm", str(a.warm)]
            if a.small:
                cmd.append("--small")
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=trees[k],
                                 env=dict(os.environ, PYTHONPATH=trees[k]))
            runs[k].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"A = {trees['A']}, B = B' = {here}; {a.rounds} rounds, a process per tree each, "
          f"{a.repeats} repeats a process; bytes path (snapshot, to_bytes, from_bytes, restore), "
          "medians over rounds of each process's median (ms)")
    print(f"{'env':<14} {'A':>8} {'B':>8} {'B_':>8} {'B/A':>6} {'B/B_':>6}   per round: B/A, B/B_ "
          "(B_ is B')")
    for _, label, _ in cases:
        med = {k: [run[label]["bytes"] * 1e3 for run in v] for k, v in runs.items()}
        m = {k: statistics.median(v) for k, v in med.items()}
        per = ", ".join(f"{b / x:.2f}/{b / y:.2f}" for x, b, y in zip(med["A"], med["B"], med["B'"]))
        a_, b_, bb = m["A"], m["B"], m["B'"]
        print(f"{label:<14} {a_:>8.2f} {b_:>8.2f} {bb:>8.2f} {b_ / a_:>6.3f} {b_ / bb:>6.3f}   {per}")
        lo = {k: min(v) for k, v in med.items()}
        print(f"{'  (fastest)':<14} {lo['A']:>8.2f} {lo['B']:>8.2f} {lo[BB]:>8.2f} "
              f"{lo['B'] / lo['A']:>6.3f} {lo['B'] / lo[BB]:>6.3f}   the fastest round of each "
              "(on a shared machine the least disturbed)")
    return 0


def per_copy(repeats, copies=16, grid=16):
    """One copy of a vector env saved alone and restored into another slot."""
    kw = dict(grid_width=grid, grid_height=grid, max_cycles=10**6, num_threads=1)
    venv = seer_envs.vector_env("pcs_v0", copies, **kw)
    other = seer_envs.vector_env("pcs_v0", copies, **kw)
    venv.reset(seed=0)
    other.reset(seed=1)
    acts = np.ones((copies, venv.num_agents), np.int64)
    for _ in range(10):
        venv.step(acts)
    times = {"step": [], "copy": []}
    for k in range(repeats):
        t0 = time.perf_counter()
        other.restore(Snapshot.from_bytes(venv.snapshot(copies=[k % copies]).to_bytes()),
                      copies=[(k + 5) % copies])
        t1 = time.perf_counter()
        venv.step(acts)
        t2 = time.perf_counter()
        times["copy"].append(t1 - t0)
        times["step"].append(t2 - t1)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"vector PCS {grid}x{grid} x {copies} copies: one step {1e3 * med['step']:.2f} ms; one copy "
          f"saved, to bytes and back, restored into another slot {1e3 * med['copy']:.2f} ms "
          f"({med['copy'] / med['step']:.2f}x the step)")


if __name__ == "__main__":
    sys.exit(main())
