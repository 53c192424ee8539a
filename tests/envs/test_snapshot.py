# SPDX-License-Identifier: BSD-3-Clause
"""Snapshots: k steps, snapshot, m steps; the snapshot restored into a fresh
env at another thread count (or unpickled) runs the same m steps to the same
outputs, bit for bit, for every scenario, the vector env and PHOLD through
the engine.  Bad snapshots (another scenario, other parameters, another
format version, corrupted or truncated bytes) raise ValueError and leave the
env as it was."""

import copy
import pickle

import numpy as np
import pytest

import seer_envs
from seer_envs import Snapshot

pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

SPECS = seer_envs.envs()


def _params(sid):
    p = dict(SPECS[sid].test_params, max_cycles=9)        # episodes end inside the m steps
    if sid == "aircraft_v0":
        p["battery_capacity"] = 8.0                       # UAVs stop at different steps
    return p


def _actions(space, shape, rng):
    if hasattr(space, "n"):
        return rng.integers(0, space.n, shape)
    return rng.uniform(-1, 1, shape + space.shape).astype(np.float32)


def _run(env, acts):
    """Step through ``acts`` (resetting at each episode end); every output."""
    out = []
    for a in acts:
        if not env.agents:
            out.append(env.reset_arrays())
        out.extend(np.array(x, copy=True) for x in env.step_arrays(a))
        out.append(env.summary() if hasattr(env, "summary") else None)
    return out


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y


@pytest.mark.parametrize("sid", sorted(SPECS))
@pytest.mark.parametrize("k, threads", [(3, 2), (5, 3), (0, 4)])
def test_single_env_continues_bit_for_bit(sid, k, threads):
    p = _params(sid)
    env = seer_envs.make(sid, num_threads=1, **p)
    env.reset(seed=11)
    space, n = env.action_space(env.possible_agents[0]), len(env.possible_agents)
    rng = np.random.default_rng(k)
    acts = [_actions(space, (n,), rng) for _ in range(k + 12)]
    _run(env, acts[:k])
    raw = env.snapshot().to_bytes()
    want = _run(env, acts[k:])
    other = seer_envs.make(sid, num_threads=threads, **p)       # never reset
    other.restore(Snapshot.from_bytes(raw))
    assert other.num_threads == threads
    _same(_run(other, acts[k:]), want)
    # pickling and deepcopy mid-episode go through snapshots
    env2 = seer_envs.make(sid, num_threads=2, **p)
    env2.reset(seed=11)
    _run(env2, acts[:k])
    for clone in (pickle.loads(pickle.dumps(env2)), copy.deepcopy(env2)):
        _same(_run(clone, acts[k:]), want)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_vector_env_copies_at_different_steps_continue(mode):
    kw = dict(grid_width=4, grid_height=3, dt=30.0, move_interval_mean=20.0, max_cycles=[3, 5, 4])
    v = seer_envs.vector_env("pcs_v0", 3, num_threads=1, autoreset_mode=mode, **kw)
    v.reset(seed=2)
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, 6, (3, 12)) for _ in range(14)]
    for a in acts[:4]:
        v.step(a)                          # copy 0 ended at step 3: waiting (NEXT_STEP) or restarted
    assert len(set(v.cycles.tolist())) > 1
    snap = v.snapshot()
    want = [v.step(a) for a in acts[4:]]
    other = seer_envs.vector_env("pcs_v0", 3, num_threads=2, autoreset_mode=mode, **kw)
    other.restore(snap)
    for a, w in zip(acts[4:], want):
        got = other.step(a)
        for x, y in zip(got[:4], w[:4]):
            np.testing.assert_array_equal(x, y)
        assert got[4].keys() == w[4].keys()


def test_pickled_vector_env_mid_episode_continues():
    kw = dict(grid_width=3, grid_height=3, max_cycles=[4, 6])
    v = seer_envs.vector_env("pcs_v0", 2, num_threads=1, **kw)
    v.reset(seed=5)
    a = np.ones((2, 9), np.int64)
    for _ in range(5):
        v.step(a)
    twin = pickle.loads(pickle.dumps(v))
    for _ in range(6):
        for x, y in zip(v.step(a)[:4], twin.step(a)[:4]):
            np.testing.assert_array_equal(x, y)


def test_phold_through_the_engine():
    from seer_runtime import Engine
    from seer_runtime.models import phold
    m1 = phold.PholdModel(64, 1.0, 1.0, 0.5, 1, 0)
    e1 = Engine(m1, num_threads=1, seed=3)
    e1.init(0.0)
    e1.run_until(20.0)
    state = e1.export_state()
    m2 = phold.PholdModel(64, 1.0, 1.0, 0.5, 1, 0)
    e2 = Engine(m2, num_threads=3, seed=99)
    e2.init(0.0)
    e2.import_state(state)
    assert e2.state_digest() == e1.state_digest() and e2.now == e1.now
    e1.run_until(60.0)
    e2.run_until(60.0)
    assert e2.state_digest() == e1.state_digest() and e2.stats()["events"] == e1.stats()["events"]
    with pytest.raises(ValueError, match="64 LPs, this engine has 32"):
        e3 = Engine(phold.PholdModel(32, 1.0, 1.0, 0.5, 1, 0), num_threads=1, seed=0)
        e3.init(0.0)
        e3.import_state(state)


def test_phold_lps_through_the_engine():
    """export_lps / import_lps: some LPs' state into another engine (the
    rest untouched), checked before anything changes."""
    from seer_runtime import Engine
    from seer_runtime.models import phold

    def engine(threads, seed):
        e = Engine(phold.PholdModel(32, 1.0, 1.0, 0.0, 1, 0), num_threads=threads, seed=seed)
        e.init(0.0)
        e.run_until(10.0)
        return e
    e1, e2 = engine(1, 3), engine(3, 3)
    other = engine(2, 8)
    lps = np.arange(32)
    other.import_lps(lps, e1.export_lps(lps), now=e1.now)       # every LP: the same state
    assert other.state_digest() == e1.state_digest() and other.now == e1.now
    before = e2.state_digest()
    part = e1.export_lps([5, 2])
    bad = [({**part, "counts": part["counts"][:1]}, "a state of"),
           ({**part, "events": part["events"][:-8]}, "do not match the counts"),
           ({k: v for k, v in part.items() if k != "rng_key"}, "not an LP state")]
    for state, match in bad:
        with pytest.raises(ValueError, match=match):
            e2.import_lps([5, 2], state)
    with pytest.raises(ValueError, match="repeat"):
        e2.import_lps([5, 5], part)
    with pytest.raises(ValueError, match=r"in \[0, 32\)"):
        e2.export_lps([40])
    assert e2.state_digest() == before
    e2.import_lps([5, 2], part)                 # the same seed: the same state, so nothing moves
    assert e2.state_digest() == before
    mixed = engine(1, 99)
    mixed.import_lps([5, 2], part)
    got = mixed.export_lps([5, 2, 7])
    want = e1.export_lps([5, 2])
    for k in ("counts", "events", "rng_key", "rng_ctr", "emit_seq"):
        np.testing.assert_array_equal(got[k][:len(want[k])] if k == "events" else got[k][:2], want[k])
    assert got["rng_key"][2] == mixed.export_lps([7])["rng_key"][0] != e1.export_lps([7])["rng_key"][0]


def _twins(sid="pcs_v0", **over):
    p = dict(_params(sid), **over)
    a, b = seer_envs.make(sid, num_threads=1, **p), seer_envs.make(sid, num_threads=1, **p)
    a.reset(seed=4)
    b.reset(seed=4)
    return a, b


def test_bad_snapshots_are_named_and_change_nothing():
    env, twin = _twins()
    acts = np.ones(len(env.possible_agents), np.int64)
    env.step_arrays(acts)
    twin.step_arrays(acts)
    good = env.snapshot().to_bytes()
    other_params = seer_envs.make("pcs_v0", num_threads=1, **dict(_params("pcs_v0"), handoff_latency=2.0))
    other_params.reset(seed=0)
    gossip = seer_envs.make("gossip_v0", num_threads=1, **_params("gossip_v0"))
    gossip.reset(seed=0)
    bad_version = bytearray(good)
    bad_version[8] = 99
    cases = [
        (gossip.snapshot(), r"'gossip_v0' cannot be restored into 'pcs_v0'"),
        (other_params.snapshot(), r"parameters differ .*handoff_latency: snapshot 2.0, env 1.0"),
        (bytes(bad_version), "format version 99"),
        (good[:-40], "checksum mismatch"),
        (good[:10], "not a SEER snapshot"),
        (b"not a snapshot at all, just bytes here", "not a SEER snapshot"),
    ]
    rng = np.random.default_rng(0)
    for _ in range(25):                     # random flips and truncations
        b = bytearray(good)
        b[int(rng.integers(0, len(b)))] ^= 1 << int(rng.integers(0, 8))
        cases.append((bytes(b), "checksum|format version|SEER snapshot|malformed"))
        cases.append((good[:int(rng.integers(0, len(good)))], "checksum|SEER snapshot"))
    for bad, match in cases:
        with pytest.raises(ValueError, match=match):
            env.restore(bad)
        # the env steps on exactly like its twin
    for _ in range(3):
        for x, y in zip(env.step_arrays(acts), twin.step_arrays(acts)):
            np.testing.assert_array_equal(x, y)
    with pytest.raises(TypeError, match="takes a Snapshot"):
        env.restore({"not": "a snapshot"})
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.restore(good)


def test_snapshot_needs_a_started_env():
    env = seer_envs.make("pcs_v0", num_threads=1, **_params("pcs_v0"))
    with pytest.raises(RuntimeError, match="reset"):
        env.snapshot()
    v = seer_envs.vector_env("pcs_v0", 4, num_threads=1, batch_size=2, **_params("pcs_v0"))
    with pytest.raises(RuntimeError, match="reset"):
        v.snapshot(copies=[1])


# --- single copies of the vector env ------------------------------------------------


def _vec(sid, n, threads, mcs, mode="next_step", **kw):
    p = dict(_params(sid), max_cycles=list(mcs))
    return seer_envs.vector_env(sid, n, num_threads=threads, autoreset_mode=mode, **dict(p, **kw))


def _vec_actions(v, steps, seed):
    rng = np.random.default_rng(seed)
    return [_actions(v.single_action_space, (v.num_envs, v.num_agents), rng) for _ in range(steps)]


def _rows_of(out, rows):
    """A vector step's outputs and episode statistics at ``rows``."""
    obs, rew, term, trunc, infos = out
    res = [obs[rows], rew[rows], term[rows], trunc[rows]]
    if "_seer_episode" in infos:
        m = infos["_seer_episode"][rows]
        res += [m, np.where(m[:, None], infos["seer_episode"]["r"][rows], 0),
                np.where(m[:, None], infos["seer_episode"]["l"][rows], 0)]
    else:
        res += [np.zeros(len(rows), bool)] * 1 + [np.zeros((len(rows), out[1].shape[1]))] * 2
    return res


def _same_rows(got, want):
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)


def _move_actions(src_acts, dst_acts, src, dst):
    """``dst_acts`` with slot ``dst[i]`` taking source copy ``src[i]``'s actions."""
    out = [a.copy() for a in dst_acts]
    for o, a in zip(out, src_acts):
        o[dst] = a[src]
    return out


@pytest.mark.parametrize("sid", sorted(SPECS))
@pytest.mark.parametrize("mode, threads", [("next_step", 2), ("same_step", 3), ("disabled", 4)])
def test_vector_copies_restore_into_other_slots_bit_for_bit(sid, mode, threads):
    """k steps, snapshot of copies [2, 0, 3], m steps; restored into slots
    [4, 1, 0] of another env (other copies, seeds, thread count), the slots
    give the source copies' outputs, including copies at different step
    counts and episodes ending inside the m steps; slots 2 and 3 go on like
    their twin's."""
    k, m = 4, 11
    src = _vec(sid, 4, 1, [9, 4, 7, 3], mode)
    src.reset(seed=3)
    acts = _vec_actions(src, k + m, 1)
    for a in acts[:k]:
        if mode == "disabled" and src.core.ended.any():
            src.reset(options={"reset_mask": src.core.ended.copy()})
        src.step(a)
    assert len(set(src.cycles.tolist())) > 1
    picked, slots = [2, 0, 3], [4, 1, 0]
    raw = src.snapshot(copies=picked).to_bytes()
    dst, twin = (_vec(sid, 5, threads, [5, 6, 7, 8, 9], mode) for _ in range(2))
    for e in (dst, twin):
        e.reset(seed=40)
    dacts = _vec_actions(dst, k + m, 2)
    for a in dacts[:2]:
        dst.step(a)
        twin.step(a)
    dst.restore(Snapshot.from_bytes(raw), copies=slots)
    assert dst.max_cycles[slots].tolist() == [7, 9, 3]         # a copy keeps its own
    moved = _move_actions(acts[k:], dacts[k:], picked, slots)
    for a, b in zip(acts[k:], moved):
        if mode == "disabled":                 # ended copies restart by mask, from their own seeds
            np.testing.assert_array_equal(dst.core.ended[slots], src.core.ended[picked])
            for e in (src, dst, twin):
                if e.core.ended.any():
                    e.reset(options={"reset_mask": e.core.ended.copy()})
        want, got, tw = src.step(a), dst.step(b), twin.step(b)
        _same_rows(_rows_of(got, slots), _rows_of(want, picked))
        _same_rows(_rows_of(got, [2, 3]), _rows_of(tw, [2, 3]))


def test_restoring_one_copy_builds_only_its_worlds(monkeypatch):
    """Restoring one copy checks and configures that copy's world alone:
    the configs it builds and the agent counts it reads do not grow with
    the number of copies (they were 3 configs a copy of the env)."""
    from seer_envs.episode.worlds import Worlds
    calls = {"config_for": 0, "agent_count": 0}

    def counted(cls, name):
        fn = getattr(cls, name)

        def wrapper(*a, **kw):
            calls[name] += 1
            return fn(*a, **kw)
        monkeypatch.setattr(cls, name, wrapper)
    got = []
    for n in (4, 64):
        v = _vec("pcs_v0", n, 1, [9] * n)
        v.reset(seed=1)
        for a in _vec_actions(v, 2, 1):
            v.step(a)
        snap = v.snapshot(copies=[1])
        if not got:
            counted(Worlds, "config_for")
            counted(type(v.core.batch.copies), "agent_count")
        calls.update(config_for=0, agent_count=0)
        v.restore(snap, copies=[2])
        got.append(dict(calls))
    assert got[0] == got[1] and 0 < got[1]["config_for"] <= 8, got


@pytest.mark.parametrize("sid", sorted(SPECS))
def test_vector_copy_into_its_own_slot_and_a_single_env(sid):
    """A copy restored into a slot of a vector env and into a single env (a
    batch of one), and a single env's snapshot into a vector slot."""
    k, m = 3, 9
    v = _vec(sid, 3, 2, [9, 8, 9])
    v.reset(seed=5)
    acts = _vec_actions(v, k + m, 3)
    for a in acts[:k]:
        v.step(a)
    snap = v.snapshot(copies=[1])
    want = [v.step(a) for a in acts[k:]]
    single = seer_envs.make(sid, num_threads=3, **_params(sid))       # never reset
    single.restore(snap.to_bytes())
    assert single.max_cycles == 8
    for a, w in zip(acts[k:], want):
        if not single.agents:
            break
        got = single.step_arrays(a[1])
        for x, y in zip(got, w[:4]):
            np.testing.assert_array_equal(x, y[1])
    # a single env's snapshot into slot 2 of a vector env
    env = seer_envs.make(sid, num_threads=1, **_params(sid))
    env.reset(seed=8)
    sacts = [a[0] for a in _vec_actions(v, k + m, 4)]
    for a in sacts[:k]:
        env.step_arrays(a)
    s2 = env.snapshot()
    swant = []
    for a in sacts[k:]:
        if not env.agents:
            break
        swant.append(env.step_arrays(a))
    w = _vec(sid, 3, 2, [9, 9, 9])
    w.reset(seed=1)
    w.restore(s2, copies=[2])
    for a, sw in zip(sacts[k:], swant):
        full = np.stack([a, a, a])
        got = w.step(full)
        for x, y in zip(got[:4], sw):
            np.testing.assert_array_equal(x[2], y)


@pytest.mark.parametrize("sid", sorted(SPECS))
def test_groups_layout_snapshots_and_between_layouts(sid):
    """Groups of engines (copy_parallel="engines", batch_size < num_envs):
    whole and per-copy snapshots, restored into the other layouts (the
    team, copy groups) and back."""
    k, m = 3, 10
    mcs = [9, 5, 7, 9, 6, 8]
    groups = _vec(sid, 6, 2, mcs, copy_parallel="engines")
    team = _vec(sid, 6, 1, mcs, copy_parallel=False)
    cg = _vec(sid, 6, 2, mcs, copy_parallel=True)
    assert (groups.layout, team.layout, cg.layout) == ("groups", "team", "copy_groups")
    groups.reset(seed=9)
    acts = _vec_actions(groups, k + m, 5)
    for a in acts[:k]:
        groups.step(a)
    whole = groups.snapshot()
    assert whole.kind == "copies" and whole.num_copies == 6
    part = groups.snapshot(copies=[5, 1])
    want = [groups.step(a) for a in acts[k:]]
    team.restore(whole.to_bytes())
    cg.restore(whole)
    batched = _vec(sid, 6, 3, mcs, batch_size=4)
    assert batched.layout == "groups"
    batched.restore(whole)
    for a, w in zip(acts[k:], want):
        for e in (team, cg, batched):
            _same_rows(_rows_of(e.step(a), list(range(6))), _rows_of(w, list(range(6))))
    # team -> groups, per copy, into other slots
    t2 = _vec(sid, 6, 1, mcs, copy_parallel=False)
    t2.reset(seed=9)
    for a in acts[:k]:
        t2.step(a)
    tpart = t2.snapshot(copies=[5, 1])
    for snap, layout in ((part, "engines"), (tpart, "engines"), (part, True)):
        g2 = _vec(sid, 4, 2, [9, 9, 9, 9], copy_parallel=layout)
        g2.reset(seed=0)
        g2.restore(snap, copies=[0, 3])
        moved = _move_actions(acts[k:], _vec_actions(g2, m, 6), [5, 1], [0, 3])
        for a, w in zip(moved, want):
            _same_rows(_rows_of(g2.step(a), [0, 3]), _rows_of(w, [5, 1]))


@pytest.mark.parametrize("mode", ["same_step", "next_step", "disabled"])
def test_ended_single_env_into_a_vector_slot(mode):
    """A single env whose episode ended, restored into a slot: it restarts
    at once (SAME_STEP), at its next step (NEXT_STEP) or when reset by mask
    (DISABLED), from its own seed generator, as the single env's reset()."""
    sid = "pcs_v0"
    env = seer_envs.make(sid, num_threads=1, **_params(sid))
    env.reset(seed=6)
    acts = _vec_actions(_vec(sid, 2, 1, [9, 9]), 20, 8)
    k = 0
    while env.agents:
        env.step_arrays(acts[k][0])
        k += 1
    snap = env.snapshot()
    first = env.reset_arrays()
    want = [env.step_arrays(a[0]) for a in acts[k:k + 4]]
    v = _vec(sid, 2, 2, [9, 9], mode)
    v.reset(seed=0)
    v.restore(snap.to_bytes(), copies=[1])
    if mode == "same_step":
        np.testing.assert_array_equal(v.core.last_obs[1], first)
    elif mode == "next_step":
        np.testing.assert_array_equal(v.step(acts[k - 1])[0][1], first)
    else:
        assert v.core.ended.tolist() == [False, True]
        np.testing.assert_array_equal(v.reset(options={"reset_mask": np.array([False, True])})[0][1], first)
    for a, w in zip(acts[k:k + 4], want):
        got = v.step(a[[0, 0]])                  # slot 1 takes the single env's actions
        for x, y in zip(got[:4], w):
            np.testing.assert_array_equal(x[1], y)


def test_pickled_groups_mid_episode_continue():
    """Pickling copies in groups goes through a snapshot of single copies."""
    v = _vec("gossip_v0", 5, 2, [9, 4, 9, 6, 9], batch_size=2)
    v.reset(seed=5)
    acts = _vec_actions(v, 12, 7)
    for a in acts[:5]:
        v.step(a)
    twin = pickle.loads(pickle.dumps(v))
    assert twin.layout == "groups"
    for a in acts[5:]:
        _same_rows(_rows_of(twin.step(a), list(range(5))), _rows_of(v.step(a), list(range(5))))


def test_bad_copy_restores_are_named_and_change_nothing():
    sid = "pcs_v0"
    mk = lambda: _vec(sid, 4, 1, [9, 9, 9, 9])       # noqa: E731
    src, env, twin = mk(), mk(), mk()
    for e in (src, env, twin):
        e.reset(seed=2)
    acts = _vec_actions(env, 8, 0)
    for a in acts[:2]:
        for e in (src, env, twin):
            e.step(a)
    src.step(acts[2])
    good = src.snapshot(copies=[1, 2])
    raw = good.to_bytes()
    other = _vec(sid, 2, 1, [9, 9], handoff_latency=2.0)
    other.reset(seed=0)
    gossip = _vec("gossip_v0", 2, 1, [9, 9])
    gossip.reset(seed=0)
    cases = [
        ((good, [0, 4]), ValueError, r"copies must be in \[0, 3\]"),
        ((good, [-1, 2]), ValueError, r"copies must be in"),
        ((good, [2, 2]), ValueError, "duplicates"),
        ((good, [1]), ValueError, "1 slots for a snapshot of 2 copies"),
        ((good, None), ValueError, "pass copies="),
        ((good, [0.5, 1.0]), ValueError, "int copy ids"),
        ((good, "01"), TypeError, "sequence of copy ids"),
        ((other.snapshot(copies=[0, 1]), [0, 1]), ValueError, "handoff_latency: snapshot 2.0"),
        ((gossip.snapshot(copies=[0, 1]), [0, 1]), ValueError, "'gossip_v0' cannot be restored"),
        ((src.snapshot(), [0, 1]), ValueError, "engine-wide"),
        ((raw[:-9], [0, 1]), ValueError, "checksum|SEER snapshot"),
    ]
    rng = np.random.default_rng(1)
    for _ in range(15):
        b = bytearray(raw)
        b[int(rng.integers(0, len(b)))] ^= 1 << int(rng.integers(0, 8))
        cases.append(((bytes(b), [0, 1]), ValueError, "checksum|format version|SEER snapshot|malformed"))
    # a consistent snapshot whose arrays do not fit (checked before anything changes)
    broken = Snapshot(good.scenario, good.params, "copies", 2,
                      dict(good.arrays, **{"1/model/counters": good.arrays["1/model/counters"][:3]}),
                      good.meta)
    cases.append(((broken, [0, 1]), ValueError, r"copy 1 \(into slot 1\).*model/counters"))
    events = good.arrays["1/engine/events"].copy()
    events.view(seer_envs.snapshot.whole.EVENT)["target"][0] = 10**6
    cases.append(((Snapshot(good.scenario, good.params, "copies", 2,
                            dict(good.arrays, **{"1/engine/events": events}), good.meta), [0, 1]),
                  ValueError, "outside its copy"))
    for (snap, slots), exc, match in cases:
        with pytest.raises(exc, match=match):
            env.restore(snap, copies=slots)
    for a in acts[2:6]:
        for x, y in zip(env.step(a)[:4], twin.step(a)[:4]):
            np.testing.assert_array_equal(x, y)
    # a send() in flight: the usual error, nothing changed
    env.send(acts[6])
    with pytest.raises(RuntimeError, match="in flight"):
        env.restore(good, copies=[0, 1])
    with pytest.raises(RuntimeError, match="in flight"):
        env.snapshot(copies=[0])
    env.recv()
    twin.step(acts[6])
    for x, y in zip(env.step(acts[7])[:4], twin.step(acts[7])[:4]):
        np.testing.assert_array_equal(x, y)
    for copies, exc, match in (([4], ValueError, "in \\[0, 3\\]"), ([1, 1], ValueError, "duplicates"),
                               ([], ValueError, "non-empty"), (3, TypeError, "sequence")):
        with pytest.raises(exc, match=match):
            env.snapshot(copies=copies)
    # some copies into an env never reset: the others start episodes as reset() does
    fresh = mk()
    fresh.restore(good, copies=[3, 0])
    want = src.step(acts[3])
    _same_rows(_rows_of(fresh.step(acts[3][[2, 0, 0, 1]]), [3, 0]), _rows_of(want, [1, 2]))
    assert fresh.cycles[[1, 2]].tolist() == [1, 1]
    with pytest.raises(ValueError, match="2 copies cannot be restored into a single env"):
        seer_envs.make(sid, num_threads=1, **_params(sid)).restore(good)


def test_payload_lp_ids_move_with_their_copy():
    """Payload words declared as LP ids move like sources and targets."""
    from seer_envs.snapshot.whole import EVENT, ENV_SOURCE
    from seer_envs.snapshot.copies import move_events
    ev = np.zeros(3, EVENT)
    ev["src"] = [5, ENV_SOURCE, 6]
    ev["target"] = [6, 5, 5]
    ev["kind"] = [1, 2, 1]
    ev["data"][:, 2] = [6, 99, 5]
    raw = ev.view(np.uint8).copy()
    out = move_events(raw, [(4, 8, 100)], {1: (2,)}).view(EVENT)
    assert out["src"].tolist() == [101, ENV_SOURCE, 102]
    assert out["target"].tolist() == [102, 101, 101]
    assert out["data"][:, 2].tolist() == [102, 99, 101]       # kind 2's word is not an LP id
    with pytest.raises(ValueError, match="outside its copy"):
        move_events(ev.view(np.uint8).copy(), [(4, 6, 0)], {})
