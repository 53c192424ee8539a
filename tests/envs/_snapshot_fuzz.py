# SPDX-License-Identifier: BSD-3-Clause
"""The snapshot fuzz (run by test_snapshot_fuzz.py in a subprocess, so that
a crash or a hang fails the test instead of killing the run).

    python tests/envs/_snapshot_fuzz.py SEED CASES

Each case: a scenario, a restore path (single env; vector env, whole;
vector env, per copy; into one-copy vector envs in every layout, and one
copy's snapshots into a single env: ``PATHS``), a source stepped a random
number of steps (a vector env's, in an autoreset mode drawn at random, with
masked resets now and then: taken under DISABLED, else refused), its
snapshot's bytes damaged at random: bytes overwritten, one bit, a pair of
bits (anywhere, or the sign bits of two event times an even number of words
apart, which the old sums missed), truncated, extended, two words swapped.
The damaged bytes must be refused with a ``ValueError`` and the target env
left byte for byte as it was.  Then a resealed case (defence in depth): the
arrays are altered (the events' times, targets, sources, kinds, sequence
numbers, counts, clocks) and given a fresh digest, as a hand with a file
would; the restore refuses it or takes it, and either way the next steps
neither crash nor hang (a model may still refuse an altered event with a
``ContractViolation``).  Prints one JSON line: the counts."""

import json
import os
import sys
import time

import numpy as np

import seer_envs
from seer_envs import Snapshot
from seer_envs.snapshot import whole as S
from seer_runtime import ContractViolation

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "_shared"))
from seer_test_helpers import events_place  # noqa: E402

#: Restore paths: single env into a single env; 3-copy vector env whole,
#: and per copy; and into one-copy vector envs in every layout: a single
#: env's snapshot, a one-copy vector env's whole snapshot (also into a
#: single env), its snapshot of copy 0.
PATHS = ("env", "vector", "copies", "env>1", "vector1", "copies1")
#: The targets of the one-copy paths: a layout of a one-copy vector env, or a single env.
LAYOUTS = {"team": dict(num_threads=1), "team-2": dict(num_threads=2, copy_parallel=True),
           "groups": dict(num_threads=2, copy_parallel="engines")}
TARGETS = {"env>1": ("team", "team-2", "groups"), "vector1": ("team", "team-2", "single"),
           "copies1": ("team", "team-2", "groups", "single")}
MODES = ("next_step", "same_step", "disabled")
SIDS = sorted(seer_envs.envs())
#: Masked resets the vector pairs tried, per autoreset mode: taken (DISABLED) or refused.
MASKED = {m: {"taken": 0, "refused": 0} for m in MODES}


def _acts(space, shape, rng):
    if hasattr(space, "n"):
        return rng.integers(0, space.n, shape)
    return rng.uniform(-1, 1, shape + space.shape).astype(np.float32)


class Pair:
    """A source and a target of one scenario and path, and how to step,
    snapshot and restore them."""

    def __init__(self, sid, path, target, rng):
        self.sid, self.path, self.target, self.rng = sid, path, target, rng
        p = dict(seer_envs.envs()[sid].test_params, max_cycles=12)
        mode = lambda: MODES[int(rng.integers(len(MODES)))]      # noqa: E731 - each vector env its own
        if path in ("env", "env>1"):
            self.src = seer_envs.make(sid, num_threads=1, **p)
        elif path in ("vector", "copies"):
            self.src = seer_envs.vector_env(sid, 3, num_threads=1, autoreset_mode=mode(), **p)
        else:
            self.src = seer_envs.vector_env(sid, 1, num_threads=1, autoreset_mode=mode(), **p)
        if path == "env" or target == "single":
            self.dst = seer_envs.make(sid, num_threads=2, **p)
        elif path in ("vector", "copies"):
            self.dst = seer_envs.vector_env(sid, 3, num_threads=2, copy_parallel=True, autoreset_mode=mode(), **p)
        else:
            self.dst = seer_envs.vector_env(sid, 1, autoreset_mode=mode(), **LAYOUTS[target], **p)
        self.src.reset(seed=int(rng.integers(100)))
        self.dst.reset(seed=int(rng.integers(100)))

    def step(self, env):
        if not hasattr(env, "num_envs"):
            if not env.agents:
                env.reset()
            a = _acts(env.action_space(env.possible_agents[0]), (len(env.possible_agents),), self.rng)
            env.step_arrays(a)
            return
        # a masked reset now and then (of the ended copies, under DISABLED
        # before each step that needs one): taken under DISABLED, refused
        # with a ValueError naming reset_mask under the other modes
        ended = env.core.ended
        if ended.any() or self.rng.random() < 0.2:
            mask = ended | (self.rng.random(env.num_envs) < 0.3)
            mode = env.core.autoreset_mode.name.lower()
            try:
                env.reset(options={"reset_mask": mask})
                MASKED[mode]["taken"] += 1
            except ValueError as e:
                if mode == "disabled" or "reset_mask" not in str(e):
                    raise
                MASKED[mode]["refused"] += 1
        env.step(_acts(env.single_action_space, (env.num_envs, env.num_agents), self.rng))

    def snapshot(self):
        if self.path in ("copies", "copies1"):
            return self.src.snapshot(copies=[int(self.rng.integers(self.src.num_envs))])
        return self.src.snapshot()

    def restore(self, raw):
        if self.path == "copies":
            self.dst.restore(raw, copies=[int(self.rng.integers(3))])
        elif self.path in ("env>1", "copies1") and self.target != "single" and self.rng.random() < 0.5:
            self.dst.restore(raw, copies=[0])
        else:
            self.dst.restore(raw)

    def state(self):
        return self.dst.snapshot().to_bytes()




def damage(raw, rng):
    """``(kind, damaged bytes)``, never equal to ``raw``."""
    b = bytearray(raw)
    n = len(b)
    kind = ("bytes", "bit", "bits2", "sign2", "truncate", "extend", "swap")[int(rng.integers(7))]
    if kind == "bytes":
        for _ in range(int(rng.integers(1, 5))):
            i = int(rng.integers(n))
            b[i] = (b[i] + int(rng.integers(1, 256))) % 256
    elif kind == "bit":
        i = int(rng.integers(8 * n))
        b[i // 8] ^= 1 << (i % 8)
    elif kind == "bits2":
        i, j = rng.choice(8 * n, 2, replace=False)
        for k in (int(i), int(j)):
            b[k // 8] ^= 1 << (k % 8)
    elif kind == "sign2":
        off, nb = events_place(raw)
        m = nb // S.EVENT.itemsize
        if m >= 2:
            i = int(rng.integers(m - 1))
            j = i + 1 + int(rng.integers(m - 1 - i))           # 10 words apart per event: even
            for k in (i, j):
                b[off + k * S.EVENT.itemsize + 7] ^= 0x80
        else:
            b[int(rng.integers(n))] ^= 0x80
    elif kind == "truncate":
        b = b[:int(rng.integers(n))]
    elif kind == "extend":
        b += bytes(rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8))
    else:
        i, j = rng.choice(n // 8, 2, replace=False)
        wi, wj = b[8 * i:8 * i + 8], b[8 * j:8 * j + 8]
        if wi == wj:
            wj = bytes(x ^ 1 for x in wj)
        b[8 * i:8 * i + 8], b[8 * j:8 * j + 8] = wj, wi
    return kind, bytes(b)


def reseal(snap, rng):
    """The snapshot's arrays altered at random, with a fresh digest."""
    arrays = {k: np.array(v) for k, v in snap.arrays.items()}
    pre = "0/" if snap.kind == "copies" else ""
    ev = arrays[pre + "engine/events"].view(S.EVENT)
    what = ("time", "target", "src", "kind", "seq", "counts", "cycle", "bits")[int(rng.integers(8))]
    if what == "counts":
        c = arrays[pre + "engine/counts"]
        c[int(rng.integers(len(c)))] += int(rng.choice([-1, 1, 1000]))
    elif what == "cycle":
        arrays[pre + "batch/cycle"][:] = int(rng.choice([-1, -10**9, 10**9]))
    elif what == "bits" and len(ev):
        raw = arrays[pre + "engine/events"]
        for _ in range(2):
            i = int(rng.integers(8 * raw.size))
            raw[i // 8] ^= 1 << (i % 8)
    elif len(ev):
        i = int(rng.integers(len(ev)))
        if what == "time":
            ev["time"][i] = rng.choice([-1e12, -1.0, np.nan, np.inf, -np.inf, ev["time"][i] * 0.5, 1e300])
        elif what == "target":
            ev["target"][i] = rng.choice([2**31 + int(ev["target"][i]), int(ev["target"][i]) + 1, 2**32 - 2])
        elif what == "src":
            ev["src"][i] = rng.choice([2**31, 2**32 - 2, int(ev["src"][i]) + 1])
        elif what == "kind":
            ev["kind"][i] = rng.choice([-1, 99, 2**31 - 1])
        else:
            ev["seq"][i] = (0, 2**64 - 1)[int(rng.integers(2))]
    return what, Snapshot(snap.scenario, snap.params, snap.kind, snap.num_copies, arrays, snap.meta).to_bytes()


def main(seed, cases):
    rng = np.random.default_rng(seed)
    pairs = {}
    out = {"cases": 0, "refused": 0, "accepted_corruptions": 0, "changed_on_refusal": 0, "other_errors": 0,
           "resealed": 0, "resealed_refused": 0, "resealed_taken": 0, "resealed_step_errors": 0, "kinds": {},
           "targets": {}, "masked": MASKED}
    t0 = time.monotonic()
    for _ in range(cases):
        sid, path = SIDS[int(rng.integers(len(SIDS)))], PATHS[int(rng.integers(len(PATHS)))]
        target = TARGETS[path][int(rng.integers(len(TARGETS[path])))] if path in TARGETS else None
        key = (sid, path, target)
        if key not in pairs:
            pairs[key] = Pair(sid, path, target, rng)
        pr = pairs[key]
        if target is not None:
            out["targets"][f"{path}:{target}"] = out["targets"].get(f"{path}:{target}", 0) + 1
        for _ in range(int(rng.integers(0, 3))):
            pr.step(pr.src)
        snap = pr.snapshot()
        raw = snap.to_bytes()
        kind, bad = damage(raw, rng)
        out["cases"] += 1
        out["kinds"][kind] = out["kinds"].get(kind, 0) + 1
        before = pr.state()
        try:
            pr.restore(bad)
            out["accepted_corruptions"] += 1
            print(f"accepted: {sid} {path} {kind}", file=sys.stderr)
        except ValueError:
            out["refused"] += 1
            if pr.state() != before:
                out["changed_on_refusal"] += 1
        except Exception as e:              # noqa: BLE001 - counted, named
            out["other_errors"] += 1
            print(f"error: {sid} {path} {kind}: {type(e).__name__}: {e}", file=sys.stderr)
        # resealed: checked whatever the digest says
        what, forged = reseal(snap, rng)
        pr.what = what
        out["resealed"] += 1
        before = pr.state()
        try:
            pr.restore(forged)
            out["resealed_taken"] += 1
        except ValueError:
            out["resealed_refused"] += 1
            if pr.state() != before:
                out["changed_on_refusal"] += 1
        except Exception as e:              # noqa: BLE001
            out["other_errors"] += 1
            print(f"error (resealed {what}): {sid} {path}: {type(e).__name__}: {e}", file=sys.stderr)
        try:
            for _ in range(2):
                pr.step(pr.dst)
        except (ContractViolation, RuntimeError) as e:
            out["resealed_step_errors"] += 1     # a model refusing an altered event: reported, not a crash
            if "-v" in sys.argv:
                print(f"step error (resealed {pr.what}): {sid} {path}: {type(e).__name__}: {e}", file=sys.stderr)
            pr.dst.reset()
            del e
        pr.restore(raw)                          # the good bytes always restore
    out["seconds"] = round(time.monotonic() - t0, 1)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
