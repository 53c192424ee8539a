# SPDX-License-Identifier: BSD-3-Clause
"""PCS's own tests (the API, template and equivalence tests every scenario
gets run over the registry in test_generic.py and test_template.py): its
text map, layout and summary, its parameters' bounds, serial equivalence at
corners of its parameter space, the headless run, and the pure-Python
oracle."""

import numpy as np
import pytest

import seer_envs
from seer_envs.pcs.reference import PcsReference

SMALL = dict(grid_width=4, grid_height=3)


@pytest.mark.parametrize("w, h, says, lines", [(4, 3, "all 4 x 3 cells", 3),
                                                (130, 2, "the top-left 120 x 2 of 130 x 2 cells", 2)])
def test_human_map_says_which_cells_it_shows(w, h, says, lines, capsys):
    env = seer_envs.make("pcs_v0", render_mode="human", grid_width=w, grid_height=h, num_threads=1)
    env.reset(seed=0)                                           # human mode: reset prints a frame
    head, *rows = capsys.readouterr().out.splitlines()
    assert says in head and "60 x 120" not in head
    assert len(rows) == lines and {len(r) for r in rows} == {min(w, 120)}


def test_agents_spaces_and_state_of_a_grid():
    env = seer_envs.make("pcs_v0", **SMALL)
    a = env.possible_agents[0]
    assert env.action_space(a).n == 6
    assert env.possible_agents[:2] == ["cell_0_0", "cell_1_0"]
    env.reset(seed=0)
    assert env.state().shape == env.state_space.shape == (12 * 11,)


def test_infos_and_summary():
    env = seer_envs.make("pcs_v0", **SMALL, num_threads=1, full_infos=True)
    env.reset(seed=3)
    for _ in range(20):
        _, rew, _, _, infos = env.step({a: 0 for a in env.agents})
    s = env.summary()
    assert s["call_attempts"] == sum(i["call_attempts"] for i in infos.values())
    assert s["channel_blocks"] == sum(i["channel_blocks"] for i in infos.values())
    assert 0.0 <= s["blocking_probability"] <= 1.0
    assert s["events"] > s["call_attempts"]


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
        seer_envs.make("pcs_v0", **kwargs)


def _rollout(steps, seed, num_threads, action_seed=0, **params):
    env = seer_envs.make("pcs_v0", num_threads=num_threads, **params)
    rng = np.random.default_rng(action_seed)
    obs = [env.reset_arrays(seed=seed)]
    rews = []
    n = env.config.num_cells
    for _ in range(steps):
        o, r, _, trunc = env.step_arrays(rng.integers(0, env.config.num_guard_actions, n))
        obs.append(o)
        rews.append(r)
        if trunc[0]:
            break
    return np.stack(obs), np.stack(rews), env.model.counters.copy(), env.engine.state_digest()


PARAMS = [
    dict(grid_width=4, grid_height=4),
    dict(grid_width=16, grid_height=16),
    dict(grid_width=48, grid_height=40, portables_per_cell=8),
    dict(grid_width=8, grid_height=8, handoff_latency=0.2, move_interval_mean=200.0),
    dict(grid_width=8, grid_height=8, handoff_latency=30.0, dt=120.0),
    dict(grid_width=10, grid_height=6, power_control_iters=25, channels_per_cell=4),
    dict(grid_width=1, grid_height=1, portables_per_cell=40),
    dict(grid_width=5, grid_height=2, move_interval_mean=float("inf")),
]


@pytest.mark.parametrize("params", PARAMS, ids=[f"p{i}" for i in range(len(PARAMS))])
@pytest.mark.parametrize("seed", [0, 12345])
def test_env_identical_across_thread_counts(params, seed, thread_counts):
    runs = [_rollout(60, seed, t, **params) for t in thread_counts]
    obs0, rew0, cnt0, dig0 = runs[0]
    for t, (obs, rew, cnt, dig) in zip(thread_counts, runs):
        assert np.array_equal(obs, obs0), f"threads={t}"
        assert np.array_equal(rew, rew0), f"threads={t}"
        assert np.array_equal(cnt, cnt0), f"threads={t}"
        assert dig == dig0, f"threads={t}"


@pytest.mark.parametrize("params", [
    dict(grid_width=64, grid_height=64, end_time=200.0),
    dict(grid_width=32, grid_height=16, end_time=500.0, handoff_latency=0.1, move_interval_mean=100.0),
    dict(grid_width=20, grid_height=20, end_time=300.0, power_control_iters=40),
])
def test_headless_identical_across_thread_counts(params, thread_counts):
    runs = [seer_envs.get("pcs_v0").headless(num_threads=t, seed=9, **params) for t in thread_counts]
    keys = ["events", "call_attempts", "busy_lines", "channel_blocks", "handoff_blocks",
            "handoffs", "handoffs_in", "blocking_probability", "state_digest", "rounds"]
    for r in runs[1:]:
        assert {k: r[k] for k in keys} == {k: runs[0][k] for k in keys}
    assert runs[0]["events"] > 0


@pytest.mark.parametrize("params", [
    dict(grid_width=4, grid_height=3),
    dict(grid_width=5, grid_height=5, power_control_iters=7, handoff_latency=0.3, move_interval_mean=300.0),
    dict(grid_width=3, grid_height=7, channels_per_cell=3, portables_per_cell=12, dt=30.0),
    dict(grid_width=2, grid_height=2, move_interval_mean=float("inf")),
])
@pytest.mark.parametrize("threads", [1, 3])
def test_matches_pure_python_reference(params, threads):
    env = seer_envs.make("pcs_v0", num_threads=threads, max_cycles=150, **params)
    ref = PcsReference(env.config)
    assert np.array_equal(env.reset_arrays(seed=21), ref.reset(env.seed_used))
    rng = np.random.default_rng(4)
    for step in range(150):
        a = rng.integers(0, env.config.num_guard_actions, env.config.num_cells)
        o, r, _, trunc = env.step_arrays(a)
        ro, rr, rterm, rtrunc = ref.step(a)
        assert np.array_equal(o, ro), f"observations differ at step {step}"
        assert np.array_equal(r, rr), f"rewards differ at step {step}"
        assert np.array_equal(trunc, rtrunc) and not rterm.any()
    assert np.array_equal(env.model.counters, np.array(ref.counters))
    assert env.engine.stats()["events"] == ref.events
