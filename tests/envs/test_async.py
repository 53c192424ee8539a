# SPDX-License-Identifier: BSD-3-Clause
"""Asynchronous stepping of the vector env (``send`` / ``recv``): every
copy's trajectory equals the synchronous vector env's, at any batch size and
thread count; misuse gets a clear error or a clean wait, never a hang."""

import threading

import numpy as np
import pytest

import seer_envs

pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

SPECS = seer_envs.envs()
E, MCS, STEPS = 4, [2, 3, 4, 5], 9


def _plan(v, seed):
    """Per step, every copy's actions (the same for both envs)."""
    rng = np.random.default_rng(seed)
    space, A = v.single_action_space, v.num_agents
    if hasattr(space, "n"):
        return [rng.integers(0, space.n, (E, A)) for _ in range(STEPS)]
    return [rng.uniform(-1, 1, (E, A) + space.shape).astype(np.float32) for _ in range(STEPS)]


def _make(sid, threads, mode, batch_size=None):
    p = {k: v for k, v in SPECS[sid].test_params.items() if k != "max_cycles"}
    return seer_envs.vector_env(sid, E, num_threads=threads, autoreset_mode=mode, max_cycles=MCS,
                                batch_size=batch_size, **p)


@pytest.mark.parametrize("sid", sorted(SPECS))
@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("threads, batch_size", [(1, 1), (2, 2), (1, 4), (2, 3)])
def test_async_trajectories_equal_the_synchronous_env(sid, mode, threads, batch_size):
    sync = _make(sid, 1, mode)
    obs, _ = sync.reset(seed=6)
    plan = _plan(sync, 6)
    want = {}
    for k, a in enumerate(plan):
        o, r, t, tr, infos = sync.step(a)
        for c in range(E):
            want[k, c] = (o[c], r[c], t[c], tr[c], bool("_seer_episode" in infos and infos["_seer_episode"][c]))
    v = _make(sid, threads, mode, batch_size)
    v.async_reset(seed=6)
    steps = np.zeros(E, int)          # steps sent per copy
    got = {}
    first = {}
    while True:
        if not v.in_flight:
            break
        o, r, t, tr, infos = v.recv()
        ids = infos["env_id"]
        for j, c in enumerate(ids):
            k = steps[c] - 1
            if k < 0:
                first[c] = o[j]
            else:
                ended = bool("_seer_episode" in infos and infos["_seer_episode"][j])
                got[k, c] = (o[j], r[j], t[j], tr[j], ended)
        todo = ids[steps[ids] < STEPS]
        if len(todo):
            v.send(np.stack([plan[steps[c]][c] for c in todo]), todo)
            steps[todo] += 1
    for c in range(E):
        np.testing.assert_array_equal(first[c], obs[c])
    assert set(got) == set(want)
    for key in want:
        for x, y in zip(got[key], want[key]):
            np.testing.assert_array_equal(x, y, err_msg=f"step, copy {key}")
    v.close()


def test_misuse_is_refused_clearly_and_close_waits():
    kw = dict(grid_width=8, grid_height=8, power_control_iters=2000, max_cycles=10**6)
    v = seer_envs.vector_env("pcs_v0", 4, num_threads=1, batch_size=2, **kw)
    with pytest.raises(RuntimeError, match="reset"):
        v.send(np.zeros((4, 64), np.int64))
    v.reset(seed=0)
    with pytest.raises(RuntimeError, match="nothing in flight"):
        v.recv()
    a = np.zeros((2, 64), np.int64)
    v.send(a, [0, 1])
    with pytest.raises(RuntimeError, match="copy 1 is still in flight"):
        v.send(a, [1, 2])
    for call in (lambda: v.step(np.zeros((4, 64), np.int64)), lambda: v.reset(seed=1)):
        with pytest.raises(RuntimeError, match="in flight: recv"):
            call()
    with pytest.raises(ValueError, match="increasing"):
        v.send(a, [3, 2])
    with pytest.raises(ValueError, match=r"in \[0, 3\]"):
        v.send(a, [3, 4])
    with pytest.raises(ValueError, match=r"shape \(2, 64\)"):
        v.send(np.zeros((3, 64), np.int64), [2, 3])
    with pytest.raises(ValueError, match="copy 3, agent 'cell_1_0'"):
        bad = a.copy()
        bad[1, 1] = 99
        v.send(bad, [2, 3])
    v.send(a, [2, 3])
    obs, rew, term, trunc, infos = v.recv()
    assert infos["env_id"].tolist() == [0, 1] and obs.shape == (2, 64, 11)
    v.close()                                   # waits for copies 2, 3, then stops the thread
    assert v.closed and not any(t.name.startswith("seer-vector") for t in threading.enumerate())
    with pytest.raises(RuntimeError, match="closed"):
        v.recv()


def test_step_is_send_and_recv_of_all_copies():
    kw = dict(grid_width=4, grid_height=3, max_cycles=5)
    a, b = (seer_envs.vector_env("pcs_v0", 3, num_threads=1, **kw) for _ in range(2))
    a.reset(seed=2)
    b.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(7):
        acts = rng.integers(0, 6, (3, 12))
        b.send(acts)
        want, got = a.step(acts), b.recv()
        assert got[4].pop("env_id").tolist() == [0, 1, 2]
        for x, y in zip(want[:4], got[:4]):
            np.testing.assert_array_equal(x, y)
        assert want[4].keys() == got[4].keys()


def test_render_and_state_wait_for_no_copy_in_flight():
    """A frame or a state of copies whose step is still running would show
    a state in motion: both are refused until the copies are received."""
    v = seer_envs.vector_env("pcs_v0", 2, num_threads=1, batch_size=1, grid_width=4, grid_height=4,
                             render_mode="rgb_array")
    v.reset(seed=0)
    v.send(np.zeros((1, 16), np.int64), [0])
    for call in (v.render, v.state):
        with pytest.raises(RuntimeError, match="in flight: recv"):
            call()
    v.recv()
    frames = v.render()
    assert len(frames) == 2 and frames[0].ndim == 3 and v.state().shape[0] == 2
    v.close()


def _pingpong(v, plan, ids_list):
    """Send each step's actions in the groups ``ids_list``, every group sent
    before the previous ones are received (at most two in flight)."""
    got = {}
    for k, a in enumerate(plan):
        for ids in ids_list:
            if v.in_flight >= 2:
                _collect(v, got)
            v.send(a[ids].copy(), ids)
            a[ids] = -1             # the caller reuses its buffer: the step keeps what was sent
    while v.in_flight:
        _collect(v, got)
    return got


def _collect(v, got):
    o, r, t, tr, infos = v.recv()
    for j, c in enumerate(infos["env_id"]):
        got.setdefault(int(c), []).append((o[j], r[j], t[j], tr[j]))


@pytest.mark.parametrize("sid", sorted(SPECS))
@pytest.mark.parametrize("threads, batch_size, copy_parallel", [(1, None, None), (2, None, None),
                                                                (2, 2, "engines"), (2, 1, None)])
def test_groups_sharing_an_engine_keep_the_synchronous_order(sid, threads, batch_size, copy_parallel):
    """Halves sent while the other is in flight: with one engine for every
    copy (``batch_size=num_envs``) the second send finishes the first
    before it starts (the same sequence of calls as the synchronous env);
    with engines of their own the halves overlap.  Either way each copy's
    trajectory is the synchronous env's, bit for bit."""
    sync = _make(sid, 1, "next_step")
    sync.reset(seed=3)
    plan = _plan(sync, 3)
    want = {c: [] for c in range(E)}
    for a in plan:
        o, r, t, tr, _ = sync.step(a)
        for c in range(E):
            want[c].append((o[c], r[c], t[c], tr[c]))
    p = {k: v for k, v in SPECS[sid].test_params.items() if k != "max_cycles"}
    v = seer_envs.vector_env(sid, E, num_threads=threads, max_cycles=MCS, batch_size=batch_size,
                             copy_parallel=copy_parallel, **p)
    v.reset(seed=3)
    got = _pingpong(v, [a.copy() for a in plan], [np.array([0, 1]), np.array([2, 3])])
    for c in range(E):
        assert len(got[c]) == len(want[c])
        for k, (x, y) in enumerate(zip(got[c], want[c])):
            for u, w in zip(x, y):
                np.testing.assert_array_equal(u, w, err_msg=f"copy {c}, step {k}")
    v.close()


def test_an_error_in_a_sent_step_reaches_its_recv_and_later_steps_refuse():
    """The engine's thread raises nothing itself: a step's error is raised
    by its recv(), the steps sent after it refuse (the copies' state is
    incomplete), and reset() starts afresh."""
    import seer_envs.layout.batch as batch_mod
    v = seer_envs.vector_env("pcs_v0", 4, num_threads=1, batch_size=2, grid_width=4, grid_height=4,
                             max_cycles=10**6)
    v.reset(seed=0)
    a = np.zeros((2, 16), np.int64)
    bad = v._batch.groups[0]
    real_run = batch_mod.Batch.run
    sent = threading.Event()

    def run(self, plan):
        if self is bad:
            sent.wait(10.0)     # fail once both steps are sent, not before the second send
            raise MemoryError("injected failure")
        return real_run(self, plan)
    batch_mod.Batch.run = run
    try:
        v.send(a, [0, 1])
        v.send(a, [2, 3])
        sent.set()
        with pytest.raises(MemoryError, match="injected failure"):
            v.recv()
        with pytest.raises(RuntimeError, match=r"interrupted.*call reset\(\)"):
            v.recv()
        with pytest.raises(RuntimeError, match=r"interrupted.*call reset\(\)"):
            v.send(a, [2, 3])
    finally:
        batch_mod.Batch.run = real_run
    assert v.in_flight == 0
    obs, _ = v.reset(seed=0)
    twin = seer_envs.vector_env("pcs_v0", 4, num_threads=1, grid_width=4, grid_height=4, max_cycles=10**6)
    np.testing.assert_array_equal(obs, twin.reset(seed=0)[0])
    v.send(a, [0, 1])
    np.testing.assert_array_equal(v.recv()[0], twin.step(np.zeros((4, 16), np.int64))[0][:2])
    v.close()
    twin.close()


def test_an_env_dropped_without_close_leaves_no_thread():
    import gc
    before = set(threading.enumerate())     # other tests' envs may not be collected yet
    v = seer_envs.vector_env("pcs_v0", 2, num_threads=1, batch_size=1, grid_width=4, grid_height=4)
    v.reset(seed=0)
    v.send(np.zeros((1, 16), np.int64), [0])
    mine = [t for t in threading.enumerate() if t not in before and t.name.startswith("seer-vector")]
    assert mine
    del v
    gc.collect()
    assert not any(t.is_alive() for t in mine)


def test_exiting_with_steps_in_flight_does_not_hang():
    """An env never closed, with a step in flight, at interpreter exit: its
    thread finishes the step and ends (before the interpreter stops daemon
    threads), so the env's close() at collection does not wait forever."""
    import subprocess
    import sys
    code = ("import numpy as np, seer_envs\n"
            "v = seer_envs.vector_env('pcs_v0', 4, num_threads=1, batch_size=2, grid_width=8, "
            "grid_height=8, power_control_iters=2000, max_cycles=10**6)\n"
            "v.async_reset(seed=0)\n"
            "obs, *_, infos = v.recv()\n"
            "v.send(np.zeros((2, 64), np.int64), infos['env_id'])\n"
            "print('sent', flush=True)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "sent"


def _child_send_recv(v, q):
    try:
        v.send(np.ones((2, 16), np.int64), [0, 1])
        q.put(("ok", v.recv()[0].tobytes()))
    except BaseException as e:  # report, never hang the parent
        q.put(("error", repr(e)))


def test_a_forked_child_sends_on_a_thread_of_its_own():
    """A fork copies the env but not its engine's thread: the child's send
    starts a thread of its own rather than queueing for one that is not
    there (a recv that never returns)."""
    import multiprocessing as mp
    kw = dict(grid_width=4, grid_height=4, max_cycles=10**6)
    v = seer_envs.vector_env("pcs_v0", 4, num_threads=1, batch_size=2, **kw)
    v.reset(seed=1)
    v.send(np.zeros((2, 16), np.int64), [2, 3])      # the parent's thread exists
    v.recv()
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_send_recv, args=(v, q))
    p.start()
    p.join(60)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail("the forked child hung")
    status, value = q.get(timeout=5)
    assert status == "ok", value
    twin = seer_envs.vector_env("pcs_v0", 4, num_threads=1, **kw)
    twin.reset(seed=1)
    want = twin.step(np.ones((4, 16), np.int64))[0][:2]        # copies 0, 1: their first step
    assert value == want.tobytes()
    v.send(np.ones((2, 16), np.int64), [0, 1])       # the parent's own thread still works
    np.testing.assert_array_equal(v.recv()[0], want)
    v.close()
    twin.close()


@pytest.mark.parametrize("sid", sorted(SPECS))
@pytest.mark.parametrize("threads, batch_size", [(1, 2), (2, 1), (2, 3)])
def test_async_with_autoreset_disabled_equals_the_synchronous_env(sid, threads, batch_size):
    """``DISABLED``: an ended copy stays ended until ``reset(options=
    {"reset_mask": ...})``.  Asynchronously, copies that end are held back,
    reset together once nothing is in flight, and sent on; every copy's
    sequence of first observations and steps equals the synchronous env's,
    which resets its ended copies after each step."""
    def record(log, c, *xs):
        log.setdefault(c, []).append(tuple(np.copy(x) for x in xs))

    sync = _make(sid, 1, "disabled")
    obs, _ = sync.reset(seed=4)
    plan = _plan(sync, 4)
    want = {}
    for c in range(E):
        record(want, c, obs[c])
    for k in range(STEPS):
        o, r, t, tr, infos = sync.step(plan[k])
        ended = infos["_seer_episode"] if "_seer_episode" in infos else np.zeros(E, bool)
        for c in range(E):
            record(want, c, o[c], r[c], t[c], tr[c], ended[c])
        if ended.any():
            o, _ = sync.reset(options={"reset_mask": ended})
            for c in np.flatnonzero(ended):
                record(want, c, o[c])
    assert any(len(x) > STEPS + 1 for x in want.values())         # some copy was reset

    v = _make(sid, threads, "disabled", batch_size)
    got, steps, held = {}, np.zeros(E, int), np.zeros(E, bool)
    obs, _ = v.reset(seed=4)
    for c in range(E):
        record(got, c, obs[c])
    todo = np.arange(E)
    while True:
        if len(todo):
            v.send(np.stack([plan[steps[c]][c] for c in todo]), todo)
            steps[todo] += 1
        if not v.in_flight:
            if not held.any():
                break
            o, _ = v.reset(options={"reset_mask": held})
            for c in np.flatnonzero(held):
                record(got, c, o[c])
            todo, held = np.flatnonzero(held & (steps < STEPS)), np.zeros(E, bool)
            continue
        o, r, t, tr, infos = v.recv()
        ids = infos["env_id"]
        ended = infos["_seer_episode"] if "_seer_episode" in infos else np.zeros(len(ids), bool)
        for j, c in enumerate(ids):
            record(got, c, o[j], r[j], t[j], tr[j], ended[j])
        held[ids[ended]] = True
        todo = ids[~ended & (steps[ids] < STEPS)]
    assert set(got) == set(want)
    for c in range(E):
        assert len(got[c]) == len(want[c]), c
        for i, (g, w) in enumerate(zip(got[c], want[c])):
            for x, y in zip(g, w):
                np.testing.assert_array_equal(x, y, err_msg=f"copy {c} entry {i}")
    v.close()


@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_async_reset_masks_padding_rows_as_reset_does(batch_size):
    """With per-copy agent counts, each group's first ``recv()`` after
    ``async_reset`` carries the reset's mask (padding rows out of play),
    not every row in play."""
    kw = dict(num_uavs=[5, 3, 4], num_targets=[2, 1, 2], continuous_actions=True)
    v = seer_envs.vector_env("aircraft_v0", 3, num_threads=1, batch_size=batch_size, **kw)
    want = seer_envs.vector_env("aircraft_v0", 3, num_threads=1, **kw).reset(seed=1)[1]["mask"]
    assert not want.all()
    v.async_reset(seed=1)
    got = np.zeros_like(want)
    while v.in_flight:
        _, _, _, _, infos = v.recv()
        got[infos["env_id"]] = infos["mask"]
    np.testing.assert_array_equal(got, want)
