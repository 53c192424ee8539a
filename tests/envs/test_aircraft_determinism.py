# SPDX-License-Identifier: BSD-3-Clause
"""Seeds, serial equivalence across thread counts, the pure-Python oracle and
physics sanity."""

import numpy as np
import pytest

from seer_envs import aircraft_v0
from seer_envs.aircraft.reference import AircraftReference


def _actions(env, rng):
    n = env.config.num_uavs
    if env.config.continuous_actions:
        return rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    return rng.integers(0, 9, n)


def _rollout(steps, seed, num_threads, action_seed=0, **params):
    env = aircraft_v0.parallel_env(num_threads=num_threads, **params)
    rng = np.random.default_rng(action_seed)
    obs, rews, terms = [env.reset_arrays(seed=seed)], [], []
    infos = [env._agent_infos(env._all_rows)]
    for _ in range(steps):
        o, r, te, tr = env.step_arrays(_actions(env, rng))
        obs.append(o)
        rews.append(r)
        terms.append(te)
        infos.append(env._agent_infos(env._all_rows))
        if not env.agents:
            break
    m = env.model
    state = (m.counters.copy(), m.energy.copy(), m.px.copy(), m.vy.copy(), m.wx.copy(),
             m.bel_t.copy(), m.bel_id.copy(), m.tx.copy())
    return (np.stack(obs), np.stack(rews), np.stack(terms), infos, state,
            env.engine.state_digest(), env.engine.stats()["events"])


def _same(x, y):
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, (tuple, list)):
        return len(x) == len(y) and all(_same(p, q) for p, q in zip(x, y))
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and np.array_equal(x, y)
    return x == y


def test_multi_step_seed_determinism_dict_api():
    """PettingZoo's parallel_seed_test only compares one step; this compares
    hundreds, through the dict API, infos and terminations included."""
    def run(seed):
        env = aircraft_v0.parallel_env(num_uavs=10, num_threads=2, max_cycles=300,
                                       battery_capacity=200.0, arena_size=600.0, full_infos=True)
        obs, infos = env.reset(seed=seed)
        rng = np.random.default_rng(123)
        trace = [(obs, infos)]
        while env.agents:
            acts = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents}
            trace.append(env.step(acts))
        return trace

    a, b, c = run(42), run(42), run(43)
    assert _same(a, b)
    assert not _same(a, c)
    steps = len(a) - 1
    dead = {ag for _, _, term, _, _ in a[1:] for ag, t in term.items() if t}
    assert 100 < steps <= 300 and len(dead) >= 5          # hundreds of steps, real terminations
    assert sum(len(x[0]) for x in a[1:]) < 10 * steps     # the dead left `agents`


def test_reset_without_seed_continues_a_seeded_sequence():
    env = aircraft_v0.parallel_env(num_uavs=3)
    env.reset(seed=7)
    s1 = env.seed_used
    env.reset()
    s2 = env.seed_used
    env.reset(seed=7)
    assert env.seed_used == s1
    env.reset()
    assert env.seed_used == s2 != s1


PARAMS = [
    (40, dict(num_uavs=1)),
    (40, dict(num_uavs=7, battery_capacity=30.0, arena_size=200.0)),
    (30, dict(num_uavs=64)),
    (30, dict(num_uavs=64, dynamics_substeps=1, continuous_actions=False)),
    (20, dict(num_uavs=96, dynamics_substeps=24, comm_latency=0.2, sense_period=0.3)),
    (20, dict(num_uavs=200, arena_size=1500.0, collision_radius=40.0, max_messages=9,
              control_period=0.3)),
    (15, dict(num_uavs=300, sensor_range=400.0, comm_range=120.0, num_targets=0, dt=0.5)),
    (3, dict(num_uavs=4096)),
    (2, dict(num_uavs=4096, dynamics_substeps=2, continuous_actions=False)),
]


@pytest.mark.parametrize("steps, params", PARAMS, ids=[f"p{i}" for i in range(len(PARAMS))])
@pytest.mark.parametrize("seed", [0, 987654321])
def test_env_identical_across_thread_counts(steps, params, seed, thread_counts):
    runs = [_rollout(steps, seed, t, **params) for t in thread_counts]
    for t, run in zip(thread_counts, runs):
        assert _same(run, runs[0]), f"threads={t} differs from threads={thread_counts[0]}"
    assert runs[0][6] > 0


REF_PARAMS = [
    dict(num_uavs=8),
    dict(num_uavs=16, continuous_actions=False, dynamics_substeps=3),
    dict(num_uavs=12, battery_capacity=40.0, control_period=0.3, sense_period=0.2, arena_size=400.0),
    dict(num_uavs=10, arena_size=600.0, collision_radius=60.0, max_messages=2, comm_latency=0.3,
         sensor_range=120.0, comm_range=400.0, num_targets=3, drag=0.1, wind_sigma=3.0),
    dict(num_uavs=5, num_targets=0, max_messages=0, arena_size=150.0, max_accel=30.0),
]


@pytest.mark.parametrize("params", REF_PARAMS, ids=[f"r{i}" for i in range(len(REF_PARAMS))])
@pytest.mark.parametrize("threads", [1, 3])
def test_matches_pure_python_reference_exactly(params, threads):
    env = aircraft_v0.parallel_env(num_threads=threads, **params)
    ref = AircraftReference(env.config)
    assert np.array_equal(env.reset_arrays(seed=21), ref.reset(env.seed_used))
    rng = np.random.default_rng(4)
    for step in range(100):
        a = _actions(env, rng)
        o, r, te, tr = env.step_arrays(a)
        ro, rr, rte, rtr = ref.step(a)
        assert np.array_equal(o, ro), f"observations differ at step {step}"
        assert np.array_equal(r, rr), f"rewards differ at step {step}"
        assert np.array_equal(te, rte) and np.array_equal(tr, rtr), f"done flags differ at step {step}"
        if not env.agents:
            break
    m = env.model
    assert np.array_equal(m.counters, np.array(ref.counters))
    assert np.array_equal(m.energy, np.array(ref.energy))
    assert np.array_equal(m.px, np.array(ref.px)) and np.array_equal(m.wy, np.array(ref.wy))
    assert np.array_equal(m.tx[:env.config.num_targets], np.array(ref.tx))
    assert env.engine.stats()["events"] == ref.events


def test_reference_sees_what_matters():
    """The oracle comparison above is only as strong as the traffic it sees:
    messages, fusions, detections, collisions and terminations all happen."""
    env = aircraft_v0.parallel_env(num_threads=1, **REF_PARAMS[3])
    env.reset_arrays(seed=21)
    rng = np.random.default_rng(4)
    for _ in range(100):
        env.step_arrays(_actions(env, rng))
    s = env.summary()
    assert s["messages_sent"] > 0 and s["belief_updates"] > 0 and s["detections"] > 0
    assert s["collisions"] > 0
    dying = aircraft_v0.parallel_env(num_threads=1, **REF_PARAMS[2])
    dying.reset_arrays(seed=21)
    while dying.agents:
        dying.step_arrays(_actions(dying, rng))
    assert dying.summary()["alive"] == 0


def test_straight_line_at_constant_speed_without_forces():
    env = aircraft_v0.parallel_env(num_uavs=2, num_targets=1, arena_size=1e5, wind_sigma=0.0,
                                   drag=0.0, num_threads=1)
    env.reset_arrays(seed=5)
    m = env.model
    env.step_arrays(np.array([[0.5, 0.25], [-0.375, 0.75]], np.float32))   # 1 s of thrust
    v0 = np.stack([m.vx.copy(), m.vy.copy()], axis=1)
    assert np.allclose(v0, [[2.5, 1.25], [-1.875, 3.75]], rtol=1e-12)
    pos = [np.stack([m.px.copy(), m.py.copy()], axis=1)]
    for _ in range(30):
        env.step_arrays(np.zeros((2, 2), np.float32))
        pos.append(np.stack([m.px.copy(), m.py.copy()], axis=1))
        assert np.array_equal(np.stack([m.vx, m.vy], axis=1), v0)      # exactly constant
    pos = np.stack(pos)
    assert (pos > 1000).all() and (pos < 1e5 - 1000).all()              # away from the walls
    k = np.arange(31)[:, None, None]
    assert np.allclose(pos, pos[0] + k * v0[None] * env.config.dt, rtol=0, atol=1e-9)
    # energy at zero command falls by idle_power per second, exactly linearly up to rounding
    e_expected = 600.0 - 0.5 * 31 - 0.1 * np.array([np.hypot(2.5, 1.25), np.hypot(1.875, 3.75)])
    assert np.allclose(m.energy, e_expected, rtol=1e-12)


def test_energy_never_increases_and_stopped_uavs_stay_stopped():
    env = aircraft_v0.parallel_env(num_uavs=30, battery_capacity=50.0, arena_size=800.0,
                                   num_threads=2)
    env.reset_arrays(seed=9)
    m = env.model
    rng = np.random.default_rng(2)
    prev = m.energy.copy()
    frozen = {}
    while env.agents:
        _, rew, term, _ = env.step_arrays(rng.uniform(-1, 1, (30, 2)).astype(np.float32))
        assert (m.energy <= prev).all() and (m.energy >= 0).all()
        prev = m.energy.copy()
        for i in np.flatnonzero(term):
            state = (m.px[i], m.py[i], m.vx[i], m.vy[i], tuple(m.counters[i]), m.energy[i])
            if i in frozen:
                assert frozen[i] == state and rew[i] == 0.0      # nothing happens to it any more
            else:
                assert m.energy[i] == 0.0 and m.vx[i] == 0.0 and m.vy[i] == 0.0
                frozen[i] = state
    assert len(frozen) == 30


def test_a_stopped_uav_is_invisible_to_the_others():
    # Two UAVs always within comm_range and collision_radius of each other;
    # uav_0 thrusts hard and runs flat first, uav_1 idles on.
    env = aircraft_v0.parallel_env(num_uavs=2, num_targets=1, arena_size=100.0, battery_capacity=20.0,
                                   collision_radius=200.0, num_threads=1)
    obs = env.reset_arrays(seed=3)
    assert obs[1, 5:9].any()                        # uav_0 is uav_1's neighbour
    act = np.array([[1.0, 1.0], [0.0, 0.0]], np.float32)
    while "uav_0" in env.agents:
        obs, rew, term, _ = env.step_arrays(act)
        assert obs[1, 5:7].any() or term[0]
    coll = env.model.counters[1, 0]
    assert coll > 0 and "uav_1" in env.agents
    for _ in range(5):
        obs, rew, term, _ = env.step_arrays(act)
        assert not obs[1, 5:9].any()                # no neighbour any more
        assert not obs[0, 5:9].any()                # and the stopped one sees nobody
    assert env.model.counters[1, 0] == coll         # no more collisions counted
