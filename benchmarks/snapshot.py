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
import json
import statistics
import sys
import time
import zlib

import numpy as np

import seer_envs
from seer_envs import Snapshot


def v1_round_trip(snap):
    """Format 1's bytes round trip (CRC-32 over unaligned arrays): the
    reference the current format is measured against."""
    names, arrays, header = snap._layout()
    parts = [b"SEERSNAP" + (1).to_bytes(4, "little") + len(header).to_bytes(8, "little"), header]
    parts += [memoryview(a).cast("B") for a in arrays if a.size]
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    raw = b"".join(parts + [crc.to_bytes(4, "little")])
    data = memoryview(raw)
    if zlib.crc32(data[:-4]) != int.from_bytes(data[-4:], "little"):
        raise AssertionError("v1 checksum")
    head = json.loads(bytes(data[20:20 + len(header)]))
    off, out = 20 + len(header), {}
    for name, dtype, shape in head["arrays"]:
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        out[name] = np.frombuffer(data[:-4], dt, n, off).reshape(shape)
        off += n * dt.itemsize
    return Snapshot(head["scenario"], head["params"], head["kind"], head["num_copies"], out, head["meta"])


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
    times = {"step": [], "snapshot": [], "restore": [], "bytes": [], "v1": []}
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
        v1_round_trip(snap)
        t5 = time.perf_counter()
        times["snapshot"].append(t1 - t0)
        times["restore"].append(t2 - t1)
        times["step"].append(t3 - t2)
        times["bytes"].append(t4 - t3)
        times["v1"].append(t5 - t4)
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
          f"{'+bytes ms':>10} {'with bytes/step':>16} {'+v1 bytes ms':>13} {'v1 with bytes/step':>19} "
          f"{'size MB':>8} {'size/live':>10}")
    for sid, label, kw in cases:
        med, size, live = measure(sid, kw, a.warm, a.repeats)
        both = med["snapshot"] + med["restore"]
        print(f"{label:<14} {1e3 * med['step']:>9.2f} {1e3 * med['snapshot']:>12.2f} "
              f"{1e3 * med['restore']:>11.2f} {both / med['step']:>17.2f} {1e3 * med['bytes']:>10.2f} "
              f"{(both + med['bytes']) / med['step']:>16.2f} {1e3 * med['v1']:>13.2f} "
              f"{(both + med['v1']) / med['step']:>19.2f} {size / 1e6:>8.2f} {size / live:>10.2f}")
    per_copy(a.repeats)
    return 0


def per_copy(repeats, copies=16):
    """One copy of a vector env saved alone and restored into another slot."""
    kw = dict(grid_width=16, grid_height=16, max_cycles=10**6, num_threads=1)
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
    print(f"\nvector PCS 16x16 x {copies} copies: one step {1e3 * med['step']:.2f} ms; one copy "
          f"saved, to bytes and back, restored into another slot {1e3 * med['copy']:.2f} ms "
          f"({med['copy'] / med['step']:.2f}x the step)")


if __name__ == "__main__":
    sys.exit(main())
