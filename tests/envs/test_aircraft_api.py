# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft against PettingZoo's API tests, plus what a user expects of the API."""

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test

from seer_envs import aircraft_v0
from seer_envs.aircraft import AircraftConfig

SMALL = dict(num_uavs=6)
# Small batteries: UAVs run flat within ~100 steps, so the API tests see terminations.
DYING = dict(num_uavs=6, battery_capacity=60.0, arena_size=500.0)


def test_parallel_api_with_terminations():
    env = aircraft_v0.parallel_env(num_threads=2, **DYING)
    parallel_api_test(env, num_cycles=300)
    assert env.max_cycles == 300
    assert env.agents == []                          # everyone ran flat before 300 steps
    assert env.model.alive.sum() == 0


def test_parallel_api_discrete():
    parallel_api_test(aircraft_v0.parallel_env(num_threads=1, continuous_actions=False, **SMALL),
                      num_cycles=50)


def test_aec_api():
    api_test(aircraft_v0.env(num_threads=2, **DYING), num_cycles=200)


def test_max_cycles_is_a_settable_attribute():
    env = aircraft_v0.parallel_env(max_cycles=100, **SMALL)
    env.reset(seed=0)
    env.max_cycles = 3
    for k in range(3):
        *_, trunc, _ = env.step({a: np.zeros(2, np.float32) for a in env.agents})
    assert all(trunc.values()) and env.agents == []


def test_rgb_array_shows_uavs_targets_and_motion():
    pytest.importorskip("matplotlib")

    def has(img, rgb):                                # antialiased: near the colour is enough
        return (np.abs(img.astype(int) - rgb).sum(axis=2) < 12).any()
    env = aircraft_v0.parallel_env(render_mode="rgb_array", num_uavs=16, num_threads=1)
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
    env = aircraft_v0.parallel_env(render_mode="human", **SMALL)
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


def test_spaces_are_cached_and_shaped():
    env = aircraft_v0.parallel_env(**SMALL)
    a = env.possible_agents[0]
    assert env.possible_agents == [f"uav_{i}" for i in range(6)]
    assert env.observation_space(a) is env.observation_space(a)
    assert env.action_space(a) is env.action_space(a)
    assert env.action_space(a).shape == (2,) and env.action_space(a).dtype == np.float32
    assert env.observation_space(a).shape == (25,)
    obs, _ = env.reset(seed=0)
    assert all(env.observation_space(a).contains(o) for o in obs.values())
    assert env.state().shape == env.state_space.shape == (6 * 6 + 1 * 4,)
    d = aircraft_v0.parallel_env(continuous_actions=False, **SMALL)
    assert d.action_space(a).n == 9


def test_derived_defaults():
    cfg = AircraftConfig(num_uavs=100)
    assert cfg.num_targets == 12 and cfg.arena_size == 2500.0
    assert AircraftConfig(num_uavs=3).num_targets == 1
    assert AircraftConfig(num_uavs=100, num_targets=0, arena_size=900).arena_size == 900.0
    assert AircraftConfig().num_uavs == 64 and AircraftConfig().arena_size == 2000.0


def test_infos_and_summary():
    env = aircraft_v0.parallel_env(num_uavs=24, num_threads=1, full_infos=True)
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


@pytest.mark.parametrize("bad, match", [
    ({"uav_0": np.zeros(2, np.float32)}, "missing action for agent 'uav_1'"),
    ("not a dict", "must be a dict"),
])
def test_bad_action_dicts(bad, match):
    env = aircraft_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(bad)


@pytest.mark.parametrize("value, match", [
    (np.array([1.5, 0.0], np.float32), r"must be in \[-1.0, 1.0\]"),
    (np.array([0.0, -1.01]), r"must be in \[-1.0, 1.0\]"),
    (np.array([np.nan, 0.0], np.float32), "not finite"),
    (np.array([0.0, np.inf]), "not finite"),
    (np.zeros(3, np.float32), r"shape \(2,\)"),
    (np.zeros((2, 1), np.float32), r"shape \(2,\)"),
    (0.5, "must be an array"),
    (None, "must be an array"),
    ("ab", "must be an array"),
    (np.array([True, False]), "real numbers"),
    (["a", "b"], "real numbers"),
])
def test_bad_continuous_actions_name_the_agent(value, match):
    env = aircraft_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    actions = {a: np.zeros(2, np.float32) for a in env.agents}
    actions["uav_4"] = value
    with pytest.raises(ValueError, match=match) as info:
        env.step(actions)
    assert "uav_4" in str(info.value)


@pytest.mark.parametrize("value, match", [
    (9, r"must be in \[0, 8\]"),
    (-1, r"must be in \[0, 8\]"),
    (1.0, "must be an integer"),
    (True, "must be an integer"),
    (np.array([1, 2]), "must be a scalar"),
])
def test_bad_discrete_actions_name_the_agent(value, match):
    env = aircraft_v0.parallel_env(continuous_actions=False, **SMALL)
    env.reset(seed=0)
    actions = {a: 0 for a in env.agents}
    actions["uav_2"] = value
    with pytest.raises(ValueError, match=match) as info:
        env.step(actions)
    assert "uav_2" in str(info.value)


def test_lists_and_numpy_scalars_are_accepted():
    env = aircraft_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    env.step({a: [0.5, -0.25] for a in env.agents})
    env.step({a: (1, 0) for a in env.agents})
    d = aircraft_v0.parallel_env(continuous_actions=False, **SMALL)
    d.reset(seed=0)
    d.step({a: np.int64(3) for a in d.agents})
    d.step({a: np.array(8) for a in d.agents})


def test_unknown_and_finished_agents_are_named():
    env = aircraft_v0.parallel_env(**DYING)
    env.reset(seed=0)
    actions = {a: np.zeros(2, np.float32) for a in env.agents}
    actions["uav_99"] = np.zeros(2, np.float32)
    with pytest.raises(ValueError, match="unknown agent 'uav_99'"):
        env.step(actions)
    full = np.ones(2, np.float32)
    while len(env.agents) == 6:
        _, _, term, _, _ = env.step({a: full for a in env.agents})
    dead = next(a for a, t in term.items() if t)
    actions = {a: full for a in env.agents}
    actions[dead] = full
    with pytest.raises(ValueError, match=f"finished agent '{dead}'"):
        env.step(actions)


def test_stepping_after_the_end_is_an_error():
    env = aircraft_v0.parallel_env(max_cycles=3, **SMALL)
    env.reset(seed=0)
    for _ in range(3):
        *_, trunc, _ = env.step({a: np.zeros(2, np.float32) for a in env.agents})
    assert all(trunc.values()) and env.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    with pytest.raises(RuntimeError, match="reset"):
        env.step_arrays(np.zeros((6, 2), np.float32))


def test_step_before_reset_and_after_close():
    env = aircraft_v0.parallel_env(**SMALL)
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    with pytest.raises(RuntimeError, match="reset"):
        env.step_arrays(np.zeros((6, 2), np.float32))
    with pytest.raises(RuntimeError, match="reset"):
        env.state()
    env.reset(seed=0)
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(seed=0)


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
        aircraft_v0.parallel_env(**kwargs)


def test_bad_reset_arguments():
    env = aircraft_v0.parallel_env(**SMALL)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=1.5)
    with pytest.raises(TypeError, match="options"):
        env.reset(seed=0, options=[1])
    env.reset(seed=0, options={"options": 1})


def test_bad_action_arrays():
    env = aircraft_v0.parallel_env(**SMALL)
    env.reset_arrays(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step_arrays(np.zeros((5, 2), np.float32))
    with pytest.raises(ValueError, match="shape"):
        env.step_arrays(np.zeros(6, np.float32))
    with pytest.raises(ValueError, match="float"):
        env.step_arrays(np.zeros((6, 2), bool))
    a = np.zeros((6, 2), np.float32)
    a[3, 1] = 2.0
    with pytest.raises(ValueError, match="uav_3"):
        env.step_arrays(a)
    a[3, 1] = np.nan
    with pytest.raises(ValueError, match="uav_3.*not finite"):
        env.step_arrays(a)
    d = aircraft_v0.parallel_env(continuous_actions=False, **SMALL)
    d.reset_arrays(seed=0)
    with pytest.raises(ValueError, match="integer"):
        d.step_arrays(np.zeros(6, np.float32))
    with pytest.raises(ValueError, match="shape"):
        d.step_arrays(np.zeros((6, 2), np.int64))
    b = np.zeros(6, np.int64)
    b[5] = 9
    with pytest.raises(ValueError, match="uav_5"):
        d.step_arrays(b)
    # nothing was stepped by the rejected calls
    assert env.summary()["steps"] == 0 and d.summary()["steps"] == 0


@pytest.mark.parametrize("continuous", [True, False])
def test_array_fast_path_matches_dict_api(continuous):
    kw = dict(num_uavs=12, continuous_actions=continuous, battery_capacity=40.0)
    a = aircraft_v0.parallel_env(num_threads=2, **kw)
    b = aircraft_v0.parallel_env(num_threads=1, **kw)
    obs_a, _ = a.reset(seed=5)
    obs_b = b.reset_arrays(seed=5)
    assert np.array_equal(np.stack([obs_a[ag] for ag in a.possible_agents]), obs_b)
    rng = np.random.default_rng(1)
    names = a.possible_agents
    steps = 0
    done_b = np.zeros(len(names), bool)
    while a.agents:
        act = rng.uniform(-1, 1, (12, 2)).astype(np.float32) if continuous else rng.integers(0, 9, 12)
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


def test_returned_observations_are_not_overwritten_by_later_steps():
    env = aircraft_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    first, *_ = env.step({a: np.ones(2, np.float32) for a in env.agents})
    kept = {a: o.copy() for a, o in first.items()}
    for _ in range(5):
        env.step({a: np.ones(2, np.float32) for a in env.agents})
    assert all(np.array_equal(first[a], kept[a]) for a in first)


def test_observations_stay_in_their_space_under_stress():
    """Walls, max speed, collisions and dead UAVs: every observation stays in bounds."""
    env = aircraft_v0.parallel_env(num_uavs=40, arena_size=300.0, battery_capacity=50.0,
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
