# SPDX-License-Identifier: BSD-3-Clause
"""What a snapshot costs, beside one env step of the same configuration.

    python benchmarks/snapshot.py [--repeats 5] [--small]

For PCS 64x64 and Aircraft with 4096 UAVs at 1 thread, mid-episode (after
``--warm`` steps): the median time of one ``step_arrays``, of
``env.snapshot()`` and ``other.restore(snapshot)`` (in memory), and of the
bytes' round trip (``to_bytes`` + ``Snapshot.from_bytes``), alternated; then
the snapshot's size against the live state it holds (the engine's pending
events and per-LP arrays, the model's arrays).  Targets
(issue 25): snapshot + restore at most one step; size at most 2x the live
state.  ``--small`` runs PCS 16x16 and Aircraft 256 (a quick check).
"""

import argparse
import statistics
import sys
import time

import numpy as np

import seer_envs


def live_bytes(env):
    """Bytes of the state a continuation needs: pending events, per-LP RNG and
    emission counters and times, the model's arrays."""
    from seer_envs._snapshot import _model_arrays
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
    times = {"step": [], "snapshot": [], "restore": [], "bytes": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        snap = env.snapshot()
        t1 = time.perf_counter()
        other.restore(snap)
        t2 = time.perf_counter()
        env.step_arrays(act)
        t3 = time.perf_counter()
        raw = snap.to_bytes()
        seer_envs.Snapshot.from_bytes(raw)
        t4 = time.perf_counter()
        times["snapshot"].append(t1 - t0)
        times["restore"].append(t2 - t1)
        times["step"].append(t3 - t2)
        times["bytes"].append(t4 - t3)
    med = {k: statistics.median(v) for k, v in times.items()}
    return med, len(raw), live_bytes(env)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warm", type=int, default=10, help="steps before the first snapshot")
    p.add_argument("--small", action="store_true")
    a = p.parse_args()
    cases = ([("pcs_v0", "PCS 16x16", dict(grid_width=16, grid_height=16)),
              ("aircraft_v0", "Aircraft 256", dict(num_uavs=256))] if a.small else
             [("pcs_v0", "PCS 64x64", dict(grid_width=64, grid_height=64)),
              ("aircraft_v0", "Aircraft 4096", dict(num_uavs=4096))])
    print(f"1 thread, mid-episode (after {a.warm} steps), medians of {a.repeats} alternated repeats")
    print(f"{'env':<14} {'step ms':>9} {'snapshot ms':>12} {'restore ms':>11} {'(snap+rest)/step':>17} "
          f"{'+bytes ms':>10} {'with bytes/step':>16} {'size MB':>8} {'size/live':>10}")
    for sid, label, kw in cases:
        med, size, live = measure(sid, kw, a.warm, a.repeats)
        both = med["snapshot"] + med["restore"]
        print(f"{label:<14} {1e3 * med['step']:>9.2f} {1e3 * med['snapshot']:>12.2f} "
              f"{1e3 * med['restore']:>11.2f} {both / med['step']:>17.2f} {1e3 * med['bytes']:>10.2f} "
              f"{(both + med['bytes']) / med['step']:>16.2f} {size / 1e6:>8.2f} {size / live:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
