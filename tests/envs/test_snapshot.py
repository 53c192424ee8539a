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
    other_params = seer_envs.make("pcs_v0", num_threads=1, **dict(_params("pcs_v0"), handoff_penalty=2.0))
    other_params.reset(seed=0)
    gossip = seer_envs.make("gossip_v0", num_threads=1, **_params("gossip_v0"))
    gossip.reset(seed=0)
    bad_version = bytearray(good)
    bad_version[8] = 99
    cases = [
        (gossip.snapshot(), r"'gossip_v0' cannot be restored into 'pcs_v0'"),
        (other_params.snapshot(), r"parameters differ .*handoff_penalty: snapshot 2.0, env 5.0"),
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


def test_snapshot_needs_a_started_env_and_names_vector_groups():
    env = seer_envs.make("pcs_v0", num_threads=1, **_params("pcs_v0"))
    with pytest.raises(RuntimeError, match="reset"):
        env.snapshot()
    v = seer_envs.vector_env("pcs_v0", 4, num_threads=1, batch_size=2, **_params("pcs_v0"))
    v.reset(seed=0)
    with pytest.raises(NotImplementedError, match="groups"):
        v.snapshot()
