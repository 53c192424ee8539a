# SPDX-License-Identifier: BSD-3-Clause
"""What a user expects of the PCS API (PettingZoo's API tests and the generic
checks run over the registry in test_generic.py)."""

import numpy as np
import pytest

from seer_envs import pcs_v0

SMALL = dict(grid_width=4, grid_height=3)


def test_rgb_array_is_a_load_heat_map():
    env = pcs_v0.parallel_env(render_mode="rgb_array", grid_width=8, grid_height=4, num_threads=1)
    env.reset(seed=0)
    img0 = env.render()
    assert img0.dtype == np.uint8 and img0.ndim == 3 and img0.shape[2] == 3
    for _ in range(3):
        env.step({a: 0 for a in env.agents})
    img1 = env.render()
    assert img1.shape == img0.shape and (img1 != img0).any()   # same frame size, new content
    # (tests/integrations/test_render.py checks the colour scale, time and grid)


@pytest.mark.parametrize("w, h, says, lines", [(4, 3, "all 4 x 3 cells", 3),
                                                (130, 2, "the top-left 120 x 2 of 130 x 2 cells", 2)])
def test_human_map_says_which_cells_it_shows(w, h, says, lines, capsys):
    env = pcs_v0.parallel_env(render_mode="human", grid_width=w, grid_height=h, num_threads=1)
    env.reset(seed=0)                                           # human mode: reset prints a frame
    head, *rows = capsys.readouterr().out.splitlines()
    assert says in head and "60 x 120" not in head
    assert len(rows) == lines and {len(r) for r in rows} == {min(w, 120)}


def test_spaces_are_cached_and_shaped():
    env = pcs_v0.parallel_env(**SMALL)
    a = env.possible_agents[0]
    assert env.observation_space(a) is env.observation_space(a)
    assert env.action_space(a) is env.action_space(a)
    assert env.action_space(a).n == 6
    assert env.possible_agents[:2] == ["cell_0_0", "cell_1_0"]
    obs, _ = env.reset(seed=0)
    assert env.observation_space(a).contains(obs[a])
    assert env.state().shape == env.state_space.shape == (12 * 11,)


def test_infos_and_summary():
    env = pcs_v0.parallel_env(**SMALL, num_threads=1, full_infos=True)
    env.reset(seed=3)
    for _ in range(20):
        _, rew, _, _, infos = env.step({a: 0 for a in env.agents})
    s = env.summary()
    assert s["call_attempts"] == sum(i["call_attempts"] for i in infos.values())
    assert s["channel_blocks"] == sum(i["channel_blocks"] for i in infos.values())
    assert 0.0 <= s["blocking_probability"] <= 1.0
    assert s["events"] > s["call_attempts"]


@pytest.mark.parametrize("bad, match", [
    ({"cell_0_0": 0}, "missing action for agent 'cell_1_0'"),
    ("not a dict", "must be a dict"),
])
def test_bad_action_dicts(bad, match):
    env = pcs_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(bad)


@pytest.mark.parametrize("value, match", [
    (6, r"must be in \[0, 5\]"),
    (-1, r"must be in \[0, 5\]"),
    (1.5, "must be an integer"),
    (True, "must be an integer"),
    ("2", "must be an integer"),
    (np.array([1, 2]), "must be a scalar"),
    (None, "must be an integer"),
])
def test_bad_action_values_name_the_agent(value, match):
    env = pcs_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    actions = {a: 0 for a in env.agents}
    actions["cell_2_1"] = value
    with pytest.raises(ValueError, match=match) as info:
        env.step(actions)
    assert "cell_2_1" in str(info.value)


def test_numpy_scalar_actions_are_accepted():
    env = pcs_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    env.step({a: np.int64(1) for a in env.agents})
    env.step({a: np.array(2) for a in env.agents})


def test_unknown_agent_is_named():
    env = pcs_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    actions = {a: 0 for a in env.agents}
    actions["cell_9_9"] = 0
    with pytest.raises(ValueError, match="unknown agent 'cell_9_9'"):
        env.step(actions)


def test_stepping_after_the_end_is_an_error():
    env = pcs_v0.parallel_env(max_cycles=3, **SMALL)
    env.reset(seed=0)
    for _ in range(3):
        *_, trunc, _ = env.step({a: 0 for a in env.agents})
    assert all(trunc.values()) and env.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    with pytest.raises(RuntimeError, match="reset"):
        env.step_arrays(np.zeros(12, np.int64))


@pytest.mark.parametrize("kwargs, match", [
    (dict(grid_width=0), "grid_width"),
    (dict(grid_width=2.5), "grid_width"),
    (dict(channels_per_cell=-1), "channels_per_cell"),
    (dict(call_duration_mean=0.0), "call_duration_mean"),
    (dict(call_duration_mean=float("nan")), "call_duration_mean"),
    (dict(handoff_latency=0), "handoff_latency"),
    (dict(portables_per_cell=300), "portables_per_cell"),
    (dict(dt="60"), "dt"),
    (dict(max_cycles=0), "max_cycles"),
    (dict(grid_widht=4), "did you mean 'grid_width'"),
    (dict(num_threads=0), "num_threads"),
    (dict(num_threads="fast"), "num_threads"),
    (dict(render_mode="window"), "render_mode"),
])
def test_bad_config_is_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pcs_v0.parallel_env(**kwargs)


def test_bad_reset_arguments():
    env = pcs_v0.parallel_env(**SMALL)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed="abc")
    with pytest.raises(TypeError, match="options"):
        env.reset(seed=0, options=[1])


def test_bad_action_arrays():
    env = pcs_v0.parallel_env(**SMALL)
    env.reset_arrays(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step_arrays(np.zeros(11, np.int64))
    with pytest.raises(ValueError, match="integer"):
        env.step_arrays(np.zeros(12, np.float32))
    a = np.zeros(12, np.int64)
    a[7] = 9
    with pytest.raises(ValueError, match="cell_3_1"):
        env.step_arrays(a)


def test_array_fast_path_matches_dict_api():
    a = pcs_v0.parallel_env(**SMALL, num_threads=2)
    b = pcs_v0.parallel_env(**SMALL, num_threads=1)
    obs_a, _ = a.reset(seed=5)
    obs_b = b.reset_arrays(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(50):
        act = rng.integers(0, 6, 12)
        obs_a, rew_a, _, trunc_a, _ = a.step({ag: int(act[i]) for i, ag in enumerate(a.possible_agents)})
        obs_b, rew_b, _, trunc_b = b.step_arrays(act)
        assert np.array_equal(np.stack([obs_a[ag] for ag in a.possible_agents]), obs_b)
        assert np.array_equal(np.array([rew_a[ag] for ag in a.possible_agents], np.float32), rew_b)


def test_returned_observations_are_not_overwritten_by_later_steps():
    env = pcs_v0.parallel_env(**SMALL)
    env.reset(seed=0)
    first, *_ = env.step({a: 0 for a in env.agents})
    kept = {a: o.copy() for a, o in first.items()}
    for _ in range(5):
        env.step({a: 0 for a in env.agents})
    assert all(np.array_equal(first[a], kept[a]) for a in first)
