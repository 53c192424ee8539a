# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft's own tests (the API, template and equivalence tests every
scenario gets run over the registry in test_generic.py and test_template.py):
its discrete action mode, frames and text map, layout, derived defaults,
infos and summary, its parameters' bounds, observations under stress, serial
equivalence at corners of its parameter space, the pure-Python oracle and
physics sanity."""

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test
from seer_test_helpers import same

import seer_envs
from seer_envs.aircraft import AircraftConfig
from seer_envs.aircraft.reference import AircraftReference

SMALL = dict(num_uavs=6)


def test_parallel_api_discrete():
    parallel_api_test(seer_envs.make("aircraft_v0", num_threads=1, continuous_actions=False, **SMALL),
                      num_cycles=50)


def test_discrete_array_fast_path_matches_dict_api_while_uavs_stop():
    kw = dict(num_uavs=12, continuous_actions=False, battery_capacity=40.0)
    a = seer_envs.make("aircraft_v0", num_threads=2, **kw)
    b = seer_envs.make("aircraft_v0", num_threads=1, **kw)
    obs_a, _ = a.reset(seed=5)
    obs_b = b.reset_arrays(seed=5)
    assert np.array_equal(np.stack([obs_a[ag] for ag in a.possible_agents]), obs_b)
    rng = np.random.default_rng(1)
    names = a.possible_agents
    steps = 0
    done_b = np.zeros(len(names), bool)
    while a.agents:
        act = rng.integers(0, 9, 12)
        live = list(a.agents)
        obs_a, rew_a, term_a, trunc_a, _ = a.step({ag: act[names.index(ag)] for ag in live})
        obs_b, rew_b, term_b, trunc_b = b.step_arrays(act)
        idx = [names.index(ag) for ag in live]
        assert np.array_equal(np.stack([obs_a[ag] for ag in live]), obs_b[idx])
        assert np.array_equal(np.array([rew_a[ag] for ag in live], np.float32), rew_b[idx])
        assert [term_a[ag] for ag in live] == term_b[idx].tolist()
        done_b |= term_b | trunc_b              # each end reported once, at its step
        assert set(a.agents) == {n for n, d in zip(names, done_b) if not d}
        steps += 1
    assert 10 < steps < 200 and done_b.all()


@pytest.mark.parametrize("value, match", [
    (9, r"must be in \[0, 8\]"),
    (-1, r"must be in \[0, 8\]"),
    (1.0, "must be an integer"),
    (True, "must be an integer"),
    (np.array([1, 2]), "must be a scalar"),
])
def test_discrete_mode_checks_actions_as_discrete_9(value, match):
    """The discrete mode's own space (the checks themselves run on every
    scenario in test_generic.py)."""
    d = seer_envs.make("aircraft_v0", continuous_actions=False, **SMALL)
    d.reset(seed=0)
    d.step({a: np.int64(3) for a in d.agents})
    d.step({a: np.array(8) for a in d.agents})
    actions = {a: 0 for a in d.agents}
    actions["uav_2"] = value
    with pytest.raises(ValueError, match=match) as info:
        d.step(actions)
    assert "uav_2" in str(info.value)
    b = np.zeros(6, np.int64)
    b[5] = 9
    with pytest.raises(ValueError, match="uav_5"):
        d.step_arrays(b)
    with pytest.raises(ValueError, match="integer"):
        d.step_arrays(np.zeros(6, np.float32))
    with pytest.raises(ValueError, match="shape"):
        d.step_arrays(np.zeros((6, 2), np.int64))
    assert d.summary()["steps"] == 2


def test_rgb_array_shows_uavs_targets_and_motion():
    pytest.importorskip("matplotlib")

    def has(img, rgb):                                # antialiased: near the colour is enough
        return (np.abs(img.astype(int) - rgb).sum(axis=2) < 12).any()
    env = seer_envs.make("aircraft_v0", render_mode="rgb_array", num_uavs=16, num_threads=1)
    env.reset(seed=0)
    img0 = env.render()
    assert img0.dtype == np.uint8 and img0.shape[2] == 3
    assert has(img0, (31, 119, 180))                  # UAVs (tab:blue)
    assert has(img0, (214, 39, 40))                   # targets (tab:red)
    assert not has(img0, (0, 0, 128))                 # nobody moves yet: no headings (navy)
    for _ in range(3):
        env.step({a: np.array([1.0, 0.0], np.float32) for a in env.agents})
    img = env.render()
    assert img.shape == img0.shape and has(img, (0, 0, 128))
    # (tests/integrations/test_render.py checks legend, time, border and scale)


def test_human_render_prints_a_text_map(capsys):
    env = seer_envs.make("aircraft_v0", render_mode="human", **SMALL)
    env.reset(seed=0)
    capsys.readouterr()                                  # the frame reset drew (human mode)
    assert env.render() is None
    header, top, *rows, bottom = capsys.readouterr().out.splitlines()
    assert header.startswith("Aircraft step 0/") and "t=0 s" in header and "flying 6/6" in header
    assert top == bottom == "+" + "-" * 64 + "+"                 # the arena border
    assert len(rows) == 32 and all(len(r) == 66 and r[0] == r[-1] == "|" for r in rows)
    rows = [r[1:-1] for r in rows]
    text = "".join(rows)
    assert text.count("T") == 1 and 1 <= text.count("o") <= 6    # UAVs at rest: no heading yet
    env.step({a: np.array([1.0, 0.0], np.float32) for a in env.agents})
    capsys.readouterr()                                  # the frame the step drew
    env.render()
    text = "".join(capsys.readouterr().out.splitlines()[1:])
    assert ">" in text and "o" not in text


def test_agents_spaces_and_state_of_a_swarm():
    env = seer_envs.make("aircraft_v0", **SMALL)
    a = env.possible_agents[0]
    assert env.possible_agents == [f"uav_{i}" for i in range(6)]
    assert env.action_space(a).shape == (2,) and env.action_space(a).dtype == np.float32
    assert env.observation_space(a).shape == (25,)
    env.reset(seed=0)
    assert env.state().shape == env.state_space.shape == (6 * 6 + 1 * 4,)
    d = seer_envs.make("aircraft_v0", continuous_actions=False, **SMALL)
    assert d.action_space(a).n == 9


def test_derived_defaults():
    cfg = AircraftConfig(num_uavs=100)
    assert cfg.num_targets == 12 and cfg.arena_size == 2500.0
    assert AircraftConfig(num_uavs=3).num_targets == 1
    assert AircraftConfig(num_uavs=100, num_targets=0, arena_size=900).arena_size == 900.0
    assert AircraftConfig().num_uavs == 64 and AircraftConfig().arena_size == 2000.0


def test_infos_and_summary():
    env = seer_envs.make("aircraft_v0", num_uavs=24, num_threads=1, full_infos=True)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        _, rew, _, _, infos = env.step({a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents})
    s = env.summary()
    assert s["messages_sent"] == sum(i["messages_received"] for i in infos.values()) > 0
    assert s["dynamics_events"] == 20 * 24 * 4
    assert s["alive"] == 24 and all(i["alive"] for i in infos.values())
    assert s["targets_in_range"] == sum(i["targets_in_range"] for i in infos.values())
    assert all(0 < i["energy"] < 600.0 for i in infos.values())
    assert all(i["belief_age"] == -1.0 or i["belief_age"] >= 1.0 for i in infos.values())
    assert s["events"] > s["messages_sent"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_uavs=0), "num_uavs"),
    (dict(num_uavs=2.5), "num_uavs"),
    (dict(num_uavs="8"), "num_uavs"),
    (dict(num_targets=-1), "num_targets"),
    (dict(arena_size=0.0), "arena_size"),
    (dict(arena_size=float("inf")), "arena_size"),
    (dict(dt=float("nan")), "dt"),
    (dict(control_period=0), "control_period"),
    (dict(dynamics_substeps=0), "dynamics_substeps"),
    (dict(dynamics_substeps=2.0), "dynamics_substeps"),
    (dict(sense_period=-0.5), "sense_period"),
    (dict(sensor_range=-1), "sensor_range"),
    (dict(comm_range=0), "comm_range"),
    (dict(max_messages=65), "max_messages"),
    (dict(comm_latency=0.0), "comm_latency"),
    (dict(collision_radius=-5), "collision_radius"),
    (dict(max_speed=0), "max_speed"),
    (dict(max_accel=-1), "max_accel"),
    (dict(drag=-0.1), "drag"),
    (dict(wind_sigma="1"), "wind_sigma"),
    (dict(continuous_actions="yes"), "continuous_actions"),
    (dict(continuous_actions=1), "continuous_actions"),
    (dict(max_cycles=0), "max_cycles"),
    (dict(wind_tau=0), "wind_tau"),
    (dict(battery_capacity=0), "battery_capacity"),
    (dict(dt=1000.0, control_period=1e-4), "control_period"),
    (dict(num_uav=8), "did you mean 'num_uavs'"),
    (dict(comm_rnage=8), "did you mean 'comm_range'"),
    (dict(num_threads=0), "num_threads"),
    (dict(num_threads=-2), "num_threads"),
    (dict(num_threads="fast"), "num_threads"),
    (dict(num_threads=2.0), "num_threads"),
    (dict(num_threads=True), "num_threads"),
    (dict(render_mode="window"), "render_mode"),
])
def test_bad_config_is_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        seer_envs.make("aircraft_v0", **kwargs)


def test_observations_stay_in_their_space_under_stress():
    """Walls, max speed, collisions and dead UAVs: every observation stays in bounds."""
    env = seer_envs.make("aircraft_v0", num_uavs=40, arena_size=300.0, battery_capacity=50.0,
                                   max_accel=20.0, max_speed=25.0, comm_range=80.0, num_threads=2,
                                   full_infos=True)
    obs, _ = env.reset(seed=11)
    space = env.observation_space("uav_0")
    rng = np.random.default_rng(0)
    collisions, top_speed = 0, 0.0
    while env.agents:
        obs, _, _, _, infos = env.step({a: np.sign(rng.uniform(-1, 1, 2)).astype(np.float32)
                                        for a in env.agents})
        assert all(space.contains(o) for o in obs.values())
        collisions = max([collisions] + [i["collisions"] for i in infos.values()])
        m = env.model
        assert (m.px >= 0).all() and (m.px <= 300.0).all() and (m.py >= 0).all() and (m.py <= 300.0).all()
        top_speed = max(top_speed, float(np.hypot(m.vx, m.vy).max()))
    assert collisions > 0
    assert 20.0 < top_speed <= 25.0 * (1 + 1e-12)


def _actions(env, rng):
    n = env.config.num_uavs
    if env.config.continuous_actions:
        return rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    return rng.integers(0, 9, n)


def _rollout(steps, seed, num_threads, action_seed=0, **params):
    env = seer_envs.make("aircraft_v0", num_threads=num_threads, **params)
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
        assert same(run, runs[0]), f"threads={t} differs from threads={thread_counts[0]}"
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
    env = seer_envs.make("aircraft_v0", num_threads=threads, **params)
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
    env = seer_envs.make("aircraft_v0", num_threads=1, **REF_PARAMS[3])
    env.reset_arrays(seed=21)
    rng = np.random.default_rng(4)
    for _ in range(100):
        env.step_arrays(_actions(env, rng))
    s = env.summary()
    assert s["messages_sent"] > 0 and s["belief_updates"] > 0 and s["detections"] > 0
    assert s["collisions"] > 0
    dying = seer_envs.make("aircraft_v0", num_threads=1, **REF_PARAMS[2])
    dying.reset_arrays(seed=21)
    while dying.agents:
        dying.step_arrays(_actions(dying, rng))
    assert dying.summary()["alive"] == 0


def test_straight_line_at_constant_speed_without_forces():
    env = seer_envs.make("aircraft_v0", num_uavs=2, num_targets=1, arena_size=1e5, wind_sigma=0.0,
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
    env = seer_envs.make("aircraft_v0", num_uavs=30, battery_capacity=50.0, arena_size=800.0,
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
    env = seer_envs.make("aircraft_v0", num_uavs=2, num_targets=1, arena_size=100.0, battery_capacity=20.0,
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
