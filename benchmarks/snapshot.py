# SPDX-License-Identifier: BSD-3-Clause
"""What a snapshot costs, beside one env step of the same configuration.

    python benchmarks/snapshot.py [--repeats 5] [--small]

For PCS 64x64 and Aircraft with 4096 UAVs at 1 thread, mid-episode (after
``--warm`` steps), per round: the bytes path a user saving to a file or
pickling takes (``env.snapshot()``, ``to_bytes()``,
``Snapshot.from_bytes``, ``other.restore``, which checks the events'
checksum as it copies them), the same path with the events' checksum
checked in a pass of its own before an in-place restore (``checked
first``: as format 2 did, the reference for that fusion), the path as SEER
did it before its bytes were written in place and summed in C
(``previous_path``, NumPy checksum and joined copies, kept here as the
reference; its bytes are checked equal to SEER's), and the in-memory path
(``other.restore(env.snapshot())``).  Printed: each part's median, and the
median over rounds of each path's time over that round's step (the step
right after the path) and over the step after that (a step after a step,
the steady state of a loop).  Then the snapshot's size against the live
state it holds (the engine's pending events and per-LP arrays, the model's
arrays).  Targets (issue 25): snapshot + restore at most one step; size at
most 2x the live state.  ``--small`` runs PCS 16x16 and Aircraft 256 (a
quick check).  Code of an older commit is compared by running this command
in a checkout of it and here, one after the other (docs/guide.md).
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

import seer_envs
from seer_envs import Snapshot
from seer_envs import _snapshot as S


# --- the previous bytes path (the reference) -----------------------------------

_MASK = (1 << 64) - 1


def _np_sums(words, first=0):
    """The checksum as NumPy computed it before (512 KiB chunks, rows x columns)."""
    n, rows, block = len(words), 8, 8192
    chunk = rows * block
    if n < chunk:
        return (int(words.sum(dtype=np.uint64)),
                int((np.arange(first + 1, first + n + 1, dtype=np.uint64) * words).sum(dtype=np.uint64)))
    colw = np.arange(1, block + 1, dtype=np.uint64)
    roww = np.arange(rows, dtype=np.uint64) * np.uint64(block)
    s1 = s2 = 0
    cols = np.zeros(block, np.uint64)
    for lo in range(0, n - n % chunk, chunk):
        m = words[lo:lo + chunk].reshape(rows, block)
        rs = m.sum(axis=1, dtype=np.uint64)
        cols += m.sum(axis=0, dtype=np.uint64)
        s1 += int(rs.sum(dtype=np.uint64))
        s2 += int(((roww + np.uint64(lo)) * rs).sum(dtype=np.uint64))
    s2 += int((colw * cols).sum(dtype=np.uint64))
    tail = words[n - n % chunk:]
    if len(tail):
        s1 += int(tail.sum(dtype=np.uint64))
        s2 += int((np.arange(n - len(tail) + 1, n + 1, dtype=np.uint64) * tail).sum(dtype=np.uint64))
    s1 &= _MASK
    return s1, (s2 + first * s1) & _MASK


def _np_part_sums(part, first):
    u8 = np.frombuffer(part, np.uint8)
    whole = len(u8) - len(u8) % 8
    s1, s2 = _np_sums(u8[:whole].view(np.uint64), first)
    if whole < len(u8):
        last = int.from_bytes(bytes(u8[whole:]), "little")
        k = first + whole // 8 + 1
        s1, s2 = (s1 + last) & _MASK, (s2 + k * last) & _MASK
    return s1, s2


def previous_path(env, other):
    """snapshot, to_bytes, from_bytes, restore as they were: the arrays
    copied out into new arrays, joined into bytes with a NumPy checksum,
    summed again by NumPy when read.  The same bytes as today's (checked)."""
    b = env.unwrapped._batch
    with b.using():
        arrays = {f"engine/{k}": v for k, v in b.engine.export_state().items()}
        arrays.update({f"model/{k}": v.copy() for k, v in S._model_arrays(b.copies).items()})
        arrays.update({f"copies/{k}": v.copy() for k, v in S._copies_arrays(b.copies).items()})
        arrays.update({f"batch/{k}": np.array(getattr(b, k), copy=True) for k in S._BATCH})
        snap = Snapshot(env.unwrapped._scenario_id, env.unwrapped.core.snapshot_params(), "env", b.num_copies,
                        arrays, {"rngs": b.rng_states()})
    names, arrays, header = snap._layout()
    header += b" " * S._pad8(len(header))
    off = S._HEAD.size + len(header)
    apart = (0, 0)
    for n, a in zip(names, arrays):
        if a.size and n == S.APART:
            apart = (off, a.nbytes + S._pad8(a.nbytes))
        if a.size:
            off += a.nbytes + S._pad8(a.nbytes)
    parts, small = [], [S._HEAD.pack(S.MAGIC, S.FORMAT_VERSION, 0, len(header), *apart), header]
    sums = [0, 0, 0, 0]             # everything but the events; the events
    word = 0

    def add(part, events=False):
        nonlocal word
        t1, t2 = _np_part_sums(part, word)
        i = 2 if events else 0
        sums[i], sums[i + 1] = (sums[i] + t1) & _MASK, (sums[i + 1] + t2) & _MASK
        parts.append(part)
        word += len(part) // 8
    for n, a in zip(names, arrays):
        if not a.size:
            continue
        raw, pad = memoryview(a.reshape(-1)).cast("B"), bytes(S._pad8(a.nbytes))
        if a.nbytes < 8 * 8 * 8192 and n != S.APART:
            small += [raw, pad]
            continue
        if small:
            add(b"".join(small))
            small = []
        add(raw, n == S.APART)
        if pad:
            add(pad, n == S.APART)
    if small:
        add(b"".join(small))
    data = b"".join(parts + [S._SUM.pack(*sums)])
    view = memoryview(data)
    body = view[:-S._SUM.size]
    whole = _np_sums(np.frombuffer(body, np.uint64))
    if whole != ((sums[0] + sums[2]) & _MASK, (sums[1] + sums[3]) & _MASK):
        raise AssertionError("previous path: checksum")
    hlen = S._HEAD.unpack_from(view)[3]
    head = json.loads(bytes(body[S._HEAD.size:S._HEAD.size + hlen]))
    off, out = S._HEAD.size + hlen, {}
    for name, dtype, shape in head["arrays"]:
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        out[name] = np.frombuffer(body, dt, n, off).reshape(shape)
        if n:
            off += n * dt.itemsize + S._pad8(n * dt.itemsize)
    other.restore(Snapshot(head["scenario"], head["params"], head["kind"], head["num_copies"], out, head["meta"]))
    return data


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
    if previous_path(env, other) != env.snapshot().to_bytes():
        raise AssertionError("the reference path writes other bytes than SEER's")
    times = {k: [] for k in ("step", "steady", "snapshot", "to_bytes", "from_bytes", "restore",
                             "checked", "previous", "memory")}
    ratios = {k + s: [] for k in ("bytes", "checked", "previous", "memory") for s in ("", "_steady")}

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

    def checked_first():
        back = Snapshot.from_bytes(env.snapshot().to_bytes())
        S.check_events(back)            # a pass of its own; the restore then copies in place
        other.restore(back)

    paths = {"bytes": bytes_path, "checked": lambda: _timed(checked_first),
             "previous": lambda: _timed(previous_path, env, other),
             "memory": lambda: _timed(lambda: other.restore(env.snapshot()))}
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
            if name != "bytes":
                times[name].append(took)
    raw = env.snapshot().to_bytes()
    med = {k: statistics.median(v) for k, v in times.items()}
    med.update({f"ratio_{k}": statistics.median(v) for k, v in ratios.items()})
    return med, len(raw), live_bytes(env)


def _timed(f, *a):
    t0 = time.perf_counter()
    f(*a)
    return time.perf_counter() - t0


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
    print(f"1 thread, mid-episode (after {a.warm} steps), {a.repeats} rounds; times are medians (ms), "
          "x/step the median over rounds of the path's time over that round's step")
    print(f"{'env':<14} {'step':>7} {'snapshot':>9} {'to_bytes':>9} {'from_bytes':>11} {'restore':>8} "
          f"{'bytes path/step':>16} {'checked first/step':>19} {'previous path/step':>19} "
          f"{'in memory/step':>15} {'size MB':>8} {'size/live':>10}")
    steady = {}
    for sid, label, kw in cases:
        med, size, live = steady[label] = measure(sid, kw, a.warm, a.repeats)
        print(f"{label:<14} {1e3 * med['step']:>7.2f} {1e3 * med['snapshot']:>9.2f} {1e3 * med['to_bytes']:>9.2f} "
              f"{1e3 * med['from_bytes']:>11.2f} {1e3 * med['restore']:>8.2f} {med['ratio_bytes']:>16.2f} "
              f"{med['ratio_checked']:>19.2f} {med['ratio_previous']:>19.2f} {med['ratio_memory']:>15.2f} "
              f"{size / 1e6:>8.2f} {size / live:>10.2f}")
    print("the same paths over the next step instead (a step after a step, whose cache the path "
          "did not just take):")
    for sid, label, kw in cases:
        med = steady[label][0]
        print(f"{label:<14} steady step {1e3 * med['steady']:.2f} ms: bytes path/step "
              f"{med['ratio_bytes_steady']:.2f}, checked first/step {med['ratio_checked_steady']:.2f}, "
              f"previous path/step {med['ratio_previous_steady']:.2f}, "
              f"in memory/step {med['ratio_memory_steady']:.2f}")
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
