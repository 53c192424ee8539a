# SPDX-License-Identifier: BSD-3-Clause
"""Snapshots and layouts that nothing can break: Aircraft without targets in
every layout, the PCS state right after any restore, the event tallies
after the team changed size, per-copy restores that check every engine
array, a digest that two flipped bits cannot fool, and restores that check
every event whatever the digest says (a tampered snapshot gets a
``ValueError`` naming the field, never a crash or a stalled step).  The
tampered cases run in a subprocess with a timeout: a crash or a hang is a
failure, not a dead test run.  (The bytes fuzz: test_snapshot_fuzz.py.)"""

import os
import pickle
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xxhash

import seer_envs
from seer_envs import Snapshot
from seer_envs.snapshot import whole as S
from seer_test_helpers import events_place

pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

SPECS = seer_envs.envs()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(seer_envs.__file__)))     # the tree under test


def _params(sid, **over):
    return dict(SPECS[sid].test_params, **over)


def _acts(space, shape, rng):
    if hasattr(space, "n"):
        return rng.integers(0, space.n, shape)
    return rng.uniform(-1, 1, shape + space.shape).astype(np.float32)


def _same(a, b):
    for x, y in zip(a[:4], b[:4]):
        np.testing.assert_array_equal(x, y)


# --- Aircraft without targets -----------------------------------------------------


@pytest.mark.parametrize("layout", [dict(copy_parallel=True, num_threads=2), dict(num_threads=2),
                                    dict(copy_parallel="engines", num_threads=2),
                                    dict(copy_parallel=False, num_threads=2), dict(num_threads=1)])
def test_aircraft_without_targets_runs_in_every_layout(layout):
    p = _params("aircraft_v0", num_targets=0, max_cycles=7)
    ref = seer_envs.vector_env("aircraft_v0", 8, num_threads=1, copy_parallel=False, **p)
    v = seer_envs.vector_env("aircraft_v0", 8, **layout, **p)
    rng = np.random.default_rng(0)
    _same(v.reset(seed=3)[:1], ref.reset(seed=3)[:1])
    for _ in range(9):
        a = _acts(v.single_action_space, (8, v.num_agents), rng)
        _same(v.step(a), ref.step(a))
    # and its snapshots, whole or per copy
    snap = v.snapshot(copies=[2, 5])
    w = seer_envs.vector_env("aircraft_v0", 8, **layout, **p)
    w.reset(seed=1)
    w.restore(snap.to_bytes(), copies=[0, 7])


# --- the PCS state right after a restore ----------------------------------------------


def _pcs_vec(n=4, threads=1, **kw):
    return seer_envs.vector_env("pcs_v0", n, num_threads=threads, **_params("pcs_v0", max_cycles=30), **kw)


def _stepped(v, steps, seed):
    rng = np.random.default_rng(seed)
    v.reset(seed=seed)
    for _ in range(steps):
        v.step(rng.integers(0, v.single_action_space.n, (v.num_envs, v.num_agents)))
    return v


def test_pcs_state_right_after_a_per_copy_restore():
    src = _stepped(_pcs_vec(), 4, 0)
    dst = _stepped(_pcs_vec(), 2, 1)
    dst.restore(src.snapshot(copies=[1, 3]), copies=[2, 0])
    np.testing.assert_array_equal(dst.state()[[2, 0]], src.state()[[1, 3]])


def test_pcs_state_right_after_a_single_env_restored_into_a_slot():
    env = seer_envs.make("pcs_v0", num_threads=1, **_params("pcs_v0", max_cycles=30))
    env.reset(seed=4)
    for _ in range(3):
        env.step_arrays(np.ones(len(env.possible_agents), np.int64))
    dst = _stepped(_pcs_vec(), 2, 1)
    dst.restore(env.snapshot(), copies=[1])
    np.testing.assert_array_equal(dst.state()[1], env.state())


@pytest.mark.parametrize("how", ["snapshot", "pickle"])
def test_pcs_state_right_after_a_groups_layout_restore(how):
    src = _stepped(_pcs_vec(4, 2, copy_parallel="engines"), 3, 2)
    assert src.layout == "groups"
    if how == "pickle":
        dst = pickle.loads(pickle.dumps(src))
    else:
        dst = _stepped(_pcs_vec(4, 2, copy_parallel="engines"), 1, 5)
        dst.restore(src.snapshot())
    np.testing.assert_array_equal(dst.state(), src.state())


# --- the event tallies after the team changed size ------------------------------------


def test_events_counted_once_after_a_restore_into_a_resized_team():
    p = _params("pcs_v0", max_cycles=30)
    src = seer_envs.make("pcs_v0", num_threads=1, **p)
    dst = seer_envs.make("pcs_v0", num_threads=1, **p)
    acts = np.ones(len(src.possible_agents), np.int64)
    for e in (src, dst):
        e.reset(seed=2)
        for _ in range(4):
            e.step_arrays(acts)
    dst.unwrapped._batch.engine.num_threads = 2       # as the "auto" tuner may do
    for _ in range(2):
        dst.step_arrays(acts)
    dst.restore(src.snapshot())
    assert dst.unwrapped._batch.engine.stats()["events"] == src.unwrapped._batch.engine.stats()["events"]
    assert dst.summary()["events"] == src.summary()["events"]


# --- per-copy restores check every engine array ----------------------------------------


@pytest.mark.parametrize("name, value, match", [
    ("engine/rng_key", lambda a: a.astype(np.float64), r"'engine/rng_key': float64"),
    ("engine/rng_ctr", lambda a: a.tolist(), r"'engine/rng_ctr': a list, not an array"),
    ("engine/counts", lambda a: a.astype(np.int32), r"'engine/counts': int32"),
    ("engine/emit_seq", lambda a: a[:-1], r"'engine/emit_seq': uint64 \("),
    ("engine/now", lambda a: a.astype(np.float32), r"'engine/now': float32"),
    ("engine/tallies", lambda a: a[:1], r"'engine/tallies'"),
    ("engine/event_size", lambda a: [80], r"'engine/event_size': a list"),
    ("engine/events", lambda a: a.view(np.int8), r"'engine/events': int8"),
    ("batch/cycle", lambda a: a.tolist(), r"'batch/cycle': a list"),
    ("model/counters", lambda a: a.tolist(), r"'model/counters': a list"),
])
def test_per_copy_restores_check_every_array_before_anything_changes(name, value, match):
    src = _stepped(_pcs_vec(), 3, 0)
    snap = src.snapshot(copies=[1])
    arrays = dict(snap.arrays)
    arrays["0/" + name] = value(np.array(arrays["0/" + name]))
    bad = Snapshot(snap.scenario, snap.params, snap.kind, snap.num_copies, arrays, snap.meta)
    dst, twin = _stepped(_pcs_vec(), 2, 1), _stepped(_pcs_vec(), 2, 1)
    with pytest.raises(ValueError, match=match):
        dst.restore(bad, copies=[2])
    rng = np.random.default_rng(9)
    for _ in range(3):
        a = rng.integers(0, 3, (4, dst.num_agents))
        _same(dst.step(a), twin.step(a))


# --- the digest ------------------------------------------------------------------------




def test_two_flipped_sign_bits_of_event_times_are_refused():
    """The position-weighted sums cancelled for bit 63 of two words an even
    number of words apart (two event times' signs): the digest does not."""
    env = seer_envs.make("pcs_v0", num_threads=1, **_params("pcs_v0", max_cycles=30))
    env.reset(seed=0)
    for _ in range(2):
        env.step_arrays(np.ones(len(env.possible_agents), np.int64))
    raw = env.snapshot().to_bytes()
    off, n = events_place(raw)
    assert n >= 2 * S.EVENT.itemsize
    for i, j in ((0, 1), (0, 2), (1, 3)):
        b = bytearray(raw)
        for k in (i, j):                    # the sign bit of event k's time (its first word)
            b[off + k * S.EVENT.itemsize + 7] ^= 0x80
        with pytest.raises(ValueError, match="checksum mismatch"):
            Snapshot.from_bytes(bytes(b))
        with pytest.raises(ValueError, match="checksum mismatch"):
            env.restore(bytes(b))


def test_older_formats_are_refused_with_the_version():
    env = seer_envs.make("pcs_v0", num_threads=1, **_params("pcs_v0"))
    env.reset(seed=0)
    raw = bytearray(env.snapshot().to_bytes())
    assert struct.unpack_from("<I", raw, 8)[0] == S.FORMAT_VERSION == 5
    assert struct.unpack_from("<Q", raw, len(raw) - 8)[0] == xxhash.xxh3_64_intdigest(bytes(raw[:-8]))
    for old in (1, 2, 3, 4):
        struct.pack_into("<I", raw, 8, old)
        with pytest.raises(ValueError, match=f"snapshot format version {old}; this SEER reads version 5"):
            Snapshot.from_bytes(bytes(raw))


# --- tampered snapshots: checked whatever the digest says --------------------------------

_TAMPER = textwrap.dedent("""
    import sys, faulthandler, numpy as np, seer_envs
    from seer_envs import Snapshot
    from seer_envs.snapshot import whole as S
    faulthandler.enable()
    sid, path, field, value = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    p = dict(seer_envs.envs()[sid].test_params, max_cycles=30)
    rng = np.random.default_rng(0)
    def acts(space, shape):
        return (rng.integers(0, space.n, shape) if hasattr(space, "n")
                else rng.uniform(-1, 1, shape + space.shape).astype(np.float32))
    if path == "env":
        src = seer_envs.make(sid, num_threads=1, **p); dst = seer_envs.make(sid, num_threads=2, **p)
        src.reset(seed=0); dst.reset(seed=1)
        a = acts(src.action_space(src.possible_agents[0]), (len(src.possible_agents),))
        for _ in range(3):
            src.step_arrays(a)
        snap, pre = src.snapshot(), ""
        step = lambda: dst.step_arrays(a)
    else:
        kw = dict(copy_parallel=True) if path == "groups" else {}
        src = seer_envs.vector_env(sid, 4, num_threads=2, **kw, **p)
        dst = seer_envs.vector_env(sid, 4, num_threads=2, **kw, **p)
        src.reset(seed=0); dst.reset(seed=1)
        a = acts(src.single_action_space, (4, src.num_agents))
        for _ in range(3):
            src.step(a)
        snap = src.snapshot(copies=[1, 2]) if path == "copies" else src.snapshot()
        pre = "0/" if path == "copies" else ""
        step = lambda: dst.step(a)
    arrays = {k: np.array(v) for k, v in snap.arrays.items()}
    ev = arrays[pre + "engine/events"].view(S.EVENT)
    i = len(ev) // 2
    if field == "target":
        ev["target"][i] = 2**31 + int(ev["target"][i])
    elif field == "time":
        ev["time"][i] = value
    elif field == "next_time":
        arrays[pre + "engine/next_time"][:] = value
    elif field == "cycle":
        arrays[pre + "batch/cycle"][:] = int(value)
    raw = Snapshot(snap.scenario, snap.params, snap.kind, snap.num_copies, arrays, snap.meta).to_bytes()
    try:
        if path == "copies":
            dst.restore(raw, copies=[0, 3])
        else:
            dst.restore(raw)
        print("ACCEPTED")
    except ValueError as e:
        print("REFUSED", e)
    step()
    print("STEPPED")
""")


def _tampered(sid, path, field, value=0.0):
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", _TAMPER, sid, path, field, repr(value)], capture_output=True,
                       text=True, timeout=120, env=env, cwd=ROOT)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("sid", ["aircraft_v0", "pcs_v0"])
@pytest.mark.parametrize("path", ["env", "vector", "groups", "copies"])
def test_an_event_moved_to_a_far_lp_is_refused_naming_the_events(sid, path):
    rc, out, err = _tampered(sid, path, "target")
    assert rc == 0, err[-2000:]
    assert "REFUSED" in out and "engine/events" in out and "STEPPED" in out, out + err[-2000:]


@pytest.mark.parametrize("sid, path, t", [(sid, path, -1e12) for sid in ("aircraft_v0", "pcs_v0")
                                           for path in ("env", "vector", "groups", "copies")]
                         + [("pcs_v0", path, t) for path in ("env", "copies")
                            for t in (float("nan"), float("inf"), -1.0)])
def test_an_event_before_its_clock_is_refused_not_run_for_hours(sid, path, t):
    rc, out, err = _tampered(sid, path, "time", t)
    assert rc == 0, err[-2000:]
    assert "REFUSED" in out and "engine/events" in out and "STEPPED" in out, out + err[-2000:]


@pytest.mark.parametrize("path", ["env", "vector", "copies"])
def test_a_step_count_outside_the_episode_is_refused(path):
    """A copy's clock (its step count times dt) bounds its events: a step
    count made negative would let an event far in the past through."""
    rc, out, err = _tampered("pcs_v0", path, "cycle", -1e9)
    assert rc == 0, err[-2000:]
    assert "REFUSED" in out and "batch/cycle" in out and "STEPPED" in out, out + err[-2000:]


def test_the_queues_own_next_times_are_used_not_the_snapshots():
    """``next_time`` is recomputed from the queues: a tampered one cannot
    send a run climbing from a time far below its window."""
    rc, out, err = _tampered("pcs_v0", "env", "next_time", -1e12)
    assert rc == 0, err[-2000:]
    assert "STEPPED" in out, out + err[-2000:]


# --- the engine's loop sees Ctrl-C and its budget -----------------------------------------


_LOOP = textwrap.dedent("""
    import signal, sys, time
    from seer_runtime import Engine, ContractViolation
    from seer_runtime.models import phold
    groups, budget = sys.argv[1] == "groups", sys.argv[2] == "budget"
    eng = Engine(phold.PholdModel(64, 1.0, 1.0, 0.0, 1, 0), num_threads=2, seed=3)
    if groups:
        eng.set_copy_groups([(0, 16)], 4)
    eng.init(0.0)
    if budget:
        eng.max_events_per_run = 100000
    else:
        signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
        signal.setitimer(signal.ITIMER_REAL, 0.5)
    t0 = time.monotonic()
    try:
        eng.run_until(1e15)                 # hours of events
        print("FINISHED")
    except KeyboardInterrupt:
        print("INTERRUPTED", time.monotonic() - t0)
    except ContractViolation as e:
        print("BUDGET", e.reason, time.monotonic() - t0)
""")


@pytest.mark.parametrize("groups", ["team", "groups"])
@pytest.mark.parametrize("what", ["ctrl-c", "budget"])
def test_the_engine_loop_sees_ctrl_c_and_its_budget(groups, what):
    r = subprocess.run([sys.executable, "-c", _LOOP, groups, "budget" if what == "budget" else "-"],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr[-2000:]
    word, took = r.stdout.split()[0], float(r.stdout.split()[-1])
    assert word == ("BUDGET" if what == "budget" else "INTERRUPTED") and took < 10, r.stdout


# --- item 4: a whole restore into another autoreset mode -------------------------------

@pytest.mark.parametrize("src_mode, dst_mode", [("disabled", "next_step"), ("next_step", "disabled"),
                                                ("disabled", "same_step"), ("same_step", "disabled")])
def test_a_whole_restore_into_another_autoreset_mode_follows_the_destination(src_mode, dst_mode):
    """Copies that ended in the source are set up for the destination's
    mode (NEXT_STEP: restart at their next step; DISABLED: ended until a
    reset mask; SAME_STEP: restarted now), and the result equals an env of
    the destination's mode stepped through the same actions."""
    kw = dict(grid_width=3, grid_height=3, max_cycles=[3, 5], num_threads=1)
    acts = np.zeros((2, 9), np.int64)
    src = seer_envs.vector_env("pcs_v0", 2, autoreset_mode=src_mode, **kw)
    ref = seer_envs.vector_env("pcs_v0", 2, autoreset_mode=dst_mode, **kw)
    src.reset(seed=3)
    ref.reset(seed=3)
    for _ in range(3):                  # copy 0 ends at its third step
        src.step(acts)
        ref.step(acts)
    dst = seer_envs.vector_env("pcs_v0", 2, autoreset_mode=dst_mode, **kw)
    dst.restore(src.snapshot())
    if dst_mode == "disabled":
        restart = [ref]
        if src_mode != "same_step":      # ended in the source: ended here too
            with pytest.raises(RuntimeError, match="copy 0 has ended"):
                dst.step(acts)
            restart.append(dst)          # (a same-step source restarted it already)
        for e in restart:
            e.reset(options={"reset_mask": np.array([True, False])})
    for _ in range(2):
        got, want = dst.step(acts), ref.step(acts)
        for g, w in zip(got[:4], want[:4]):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(got[4]["mask"], want[4]["mask"])
