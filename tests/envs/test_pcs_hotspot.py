# SPDX-License-Identifier: BSD-3-Clause
"""The pcs_hotspot_v0 task: varying load and neighbours' drops, their
validation, pcs_v0 left as it was, serial equivalence, the reference, and
the adaptive rule's headroom over every constant guard."""

import hashlib

import numpy as np
import pytest

import seer_envs
import seer_envs.pcs.rewards
import seer_envs.views.vector
from seer_envs.pcs.config import HOTSPOT_DEFAULTS, PCSConfig, PCSHotspotConfig
from seer_envs.pcs.heuristic import adaptive_guard
from seer_envs.pcs.reference import PcsReference


def test_pcs_v0_unchanged_bit_for_bit():
    """A pcs_v0 rollout hashes as it did before the new fields existed (the
    digest was taken from the code without them)."""
    env = seer_envs.make("pcs_v0", grid_width=6, grid_height=5, num_threads=1, max_cycles=40,
                              move_interval_mean=60.0, call_interarrival_mean=200.0)
    h = hashlib.sha256()
    h.update(env.reset_arrays(seed=5).tobytes())
    rng = np.random.default_rng(1)
    for _ in range(40):
        o, r, _, _ = env.step_arrays(rng.integers(0, 6, 30))
        h.update(o.tobytes())
        h.update(r.tobytes())
    h.update(env.model.counters.tobytes())
    assert env.engine.stats()["events"] == 22457
    assert h.hexdigest() == "2eb099e178128ff4ec023dda4c39cc459d7f70da9b4b217e47da668f4d1d0d78"
    assert not env.config.load_varies and env.config.peak_load == 1.0


def test_task_defaults_and_registry():
    cfg = PCSHotspotConfig()
    for k, v in HOTSPOT_DEFAULTS.items():
        assert getattr(cfg, k) == v
    assert cfg.load_varies and isinstance(cfg, PCSConfig)
    env = seer_envs.make("pcs_hotspot_v0")
    assert env.metadata["name"] == "pcs_hotspot_v0" and env.config == cfg
    assert "pcs_hotspot_v0" in seer_envs.views.vector.supported()
    # every pcs_v0 parameter is accepted; pcs_v0's defaults are unchanged
    assert seer_envs.make("pcs_hotspot_v0", grid_width=3, hotspot_count=0).config.grid_width == 3
    assert PCSConfig().hotspot_count == 0 and PCSConfig().neighbour_drop_share == 0.0


@pytest.mark.parametrize("field, bad", [
    ("hotspot_count", -1), ("hotspot_count", 65), ("hotspot_count", 1.5),
    ("hotspot_amplitude", -0.1), ("hotspot_amplitude", float("nan")), ("hotspot_amplitude", 1e4),
    ("hotspot_radius", 0.0), ("hotspot_radius", float("inf")),
    ("hotspot_speed", -1.0), ("hotspot_speed", "fast"),
    ("diurnal_amplitude", 1.0), ("diurnal_amplitude", -0.5),
    ("diurnal_period", 0.0), ("diurnal_period", float("inf")),
    ("neighbour_drop_share", 1.5), ("neighbour_drop_share", -0.1), ("neighbour_drop_share", True),
])
def test_new_parameters_validated(field, bad):
    for cls in (PCSConfig, PCSHotspotConfig):
        with pytest.raises(ValueError, match=field):
            cls(**{field: bad})


def test_model_derived_bounds_see_the_load():
    # the peak load multiplies the call rate in the step's work budget
    ok = dict(grid_width=64, grid_height=64, call_interarrival_mean=1.0, dt=60.0)
    PCSConfig(**ok)
    with pytest.raises(ValueError, match="call_interarrival_mean"):
        PCSConfig(**ok, hotspot_count=64, hotspot_amplitude=1000.0)
    # the daily period must advance time over the horizon
    with pytest.raises(ValueError, match="diurnal_period"):
        PCSConfig(diurnal_amplitude=0.5, diurnal_period=1e-20)


def test_load_is_the_documented_function():
    env = seer_envs.make("pcs_hotspot_v0", num_threads=1, grid_width=5, grid_height=4, hotspot_speed=0.3)
    env.reset_arrays(seed=0)
    cfg = env.config
    ref = PcsReference(cfg)
    ref.reset(0)
    cells = list(range(cfg.num_cells))
    for t in (0.0, 17.5, 600.0, 2879.0):
        got = env.model.load(cells, t)
        assert np.array_equal(got, [ref.load(c, t) for c in cells])
        assert np.all(got >= 1.0 - cfg.diurnal_amplitude - 1e-12) and np.all(got <= cfg.peak_load)
    # the hot spots move: the loads change over cells and over time
    assert np.ptp(env.model.load(cells, 0.0)) > 0.5
    assert not np.array_equal(env.model.load(cells, 0.0), env.model.load(cells, 120.0))
    plain = seer_envs.make("pcs_v0", grid_width=5, grid_height=4)
    plain.reset_arrays(seed=0)
    assert np.all(plain.model.load(cells, 123.0) == 1.0)


def _rollout(steps, seed, threads, **params):
    env = seer_envs.make("pcs_hotspot_v0", num_threads=threads, **params)
    rng = np.random.default_rng(3)
    obs = [env.reset_arrays(seed=seed)]
    rews = []
    for _ in range(steps):
        o, r, _, trunc = env.step_arrays(rng.integers(0, env.config.num_guard_actions, env.config.num_cells))
        obs.append(o)
        rews.append(r)
        if trunc[0]:
            break
    return np.stack(obs), np.stack(rews), env.model.counters.copy(), env.engine.state_digest()


@pytest.mark.parametrize("params", [
    {},
    dict(grid_width=7, grid_height=5, hotspot_count=3, hotspot_speed=0.2, diurnal_period=300.0,
         handoff_latency=0.3, team_reward_share=0.5),
    dict(grid_width=12, grid_height=10, max_cycles=30, power_control_iters=5, neighbour_drop_share=0.3),
    dict(grid_width=6, grid_height=5, rush_fraction=0.4, rush_move_interval_mean=3.0, rush_period=500.0,
         team_reward_share=1.0, neighbour_drop_share=0.0),
])
def test_identical_across_thread_counts(params, thread_counts):
    runs = [_rollout(48, 11, t, **params) for t in thread_counts]
    for t, run in zip(thread_counts, runs):
        for x, y in zip(run, runs[0]):
            assert np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y, f"threads={t}"
    assert runs[0][1].min() < 0          # something happens


def test_vector_env_copies_equal_single_envs(thread_counts):
    """Each copy of the vector env equals a single env with its seed, at 1-4 threads."""
    E, T = 3, 20
    kw = dict(max_cycles=T, grid_width=6, grid_height=4)
    singles = []
    for i in range(E):
        env = seer_envs.make("pcs_hotspot_v0", num_threads=1, **kw)
        rng = np.random.default_rng(i)
        obs, rews = [env.reset_arrays(seed=40 + i)], []
        for _ in range(T):
            o, r, _, _ = env.step_arrays(rng.integers(0, 6, 24))
            obs.append(o)
            rews.append(r)
        singles.append((np.stack(obs), np.stack(rews)))
    for threads in thread_counts:
        venv = seer_envs.vector_env("pcs_hotspot_v0", E, num_threads=threads, autoreset_mode="same_step", **kw)
        rngs = [np.random.default_rng(i) for i in range(E)]
        obs, rews = [venv.reset(seed=40)[0]], []
        for t in range(T):
            o, r, term, trunc, _ = venv.step(np.stack([g.integers(0, 6, 24) for g in rngs]))
            rews.append(r)
            if t < T - 1:
                obs.append(o)
        obs, rews = np.stack(obs), np.stack(rews)
        for i in range(E):
            assert np.array_equal(obs[:, i], singles[i][0][:T]), f"threads={threads} copy {i}"
            assert np.array_equal(rews[:, i], singles[i][1]), f"threads={threads} copy {i}"


@pytest.mark.parametrize("params", [
    dict(grid_width=5, grid_height=4),
    dict(grid_width=3, grid_height=6, hotspot_count=3, hotspot_speed=0.3, diurnal_period=100.0,
         channels_per_cell=4, dt=30.0, neighbour_drop_share=0.7),
    dict(grid_width=5, grid_height=4, rush_fraction=0.5, rush_move_interval_mean=5.0, move_interval_mean=300.0,
         rush_period=700.0),
    dict(grid_width=4, grid_height=4, rush_fraction=0.3, rush_move_interval_mean=float("inf"),
         move_interval_mean=20.0, rush_period=250.0, dt=30.0),
])
@pytest.mark.parametrize("threads", [1, 3])
def test_matches_pure_python_reference(params, threads):
    env = seer_envs.make("pcs_hotspot_v0", num_threads=threads, max_cycles=40, **params)
    ref = PcsReference(env.config)
    assert np.array_equal(env.reset_arrays(seed=21), ref.reset(env.seed_used))
    rng = np.random.default_rng(4)
    for step in range(40):
        a = rng.integers(0, env.config.num_guard_actions, env.config.num_cells)
        o, r, _, _ = env.step_arrays(a)
        ro, rr, _, _ = ref.step(a)
        assert np.array_equal(o, ro), f"observations differ at step {step}"
        assert np.array_equal(r, rr), f"rewards differ at step {step}"
    assert np.array_equal(env.model.counters, np.array(ref.counters))
    assert env.engine.stats()["events"] == ref.events


def test_neighbour_share_charges_the_neighbours_drops():
    kw = dict(grid_width=4, grid_height=4, max_cycles=12)
    a = seer_envs.make("pcs_hotspot_v0", num_threads=1, neighbour_drop_share=0.0, **kw)
    b = seer_envs.make("pcs_hotspot_v0", num_threads=1, neighbour_drop_share=1.0, **kw)
    a.reset_arrays(seed=2)
    b.reset_arrays(seed=2)
    zeros = np.zeros(16, np.int64)
    for _ in range(12):
        oa, ra, _, _ = a.step_arrays(zeros)
        ob, rb, _, _ = b.step_arrays(zeros)
        assert np.array_equal(oa, ob)        # the same dynamics
        drops = np.rint(oa[:, 5] * a.config.portables_per_cell)
        nb = seer_envs.pcs.rewards.neighbour_table(4, 4)
        want = ra.astype(np.float64) - 0.25 * a.config.handoff_penalty * drops[nb].sum(1)
        assert np.array_equal(rb, want.astype(np.float32))


def test_adaptive_rule_beats_every_constant_guard():
    """The headroom, on a small held-out set (docs/baselines.md has 32+ seeds
    with confidence intervals): the adaptive rule's mean return is above
    every constant guard's on the same seeds."""
    seeds = range(20_000, 20_012)

    def run(policy):
        out = []
        for s in seeds:
            env = seer_envs.make("pcs_hotspot_v0", num_threads=1)
            obs = env.reset_arrays(seed=s)
            ret = 0.0
            while env.agents:
                obs, rew, _, _ = env.step_arrays(policy(env, obs))
                ret += float(rew.mean(dtype=np.float64))
            out.append(ret)
        return np.mean(out)
    adaptive = run(adaptive_guard)
    constants = {g: run(lambda e, o, g=g: np.full(len(o), g, np.int64)) for g in range(6)}
    assert adaptive > max(constants.values()), (adaptive, constants)


def test_observations_within_the_finite_bounds():
    env = seer_envs.make("pcs_hotspot_v0", num_threads=1, power_control_iters=30, hotspot_amplitude=20.0,
                                      grid_width=4, grid_height=4, max_cycles=30)
    space = env.observation_space(env.possible_agents[0])
    assert np.isfinite(space.high[[0, 1, 6, 7, 8, 9, 10]]).all()
    obs = env.reset_arrays(seed=1)
    rng = np.random.default_rng(0)
    top = np.zeros(11, np.float32)
    while env.agents:
        assert all(space.contains(row) for row in obs)
        top = np.maximum(top, obs.max(0))
        obs = env.step_arrays(rng.integers(0, 6, 16))[0]
    assert top[10] > 0 and top[0] == 1.0 and top[1] == 0.5      # the bounded slots were exercised
