# SPDX-License-Identifier: BSD-3-Clause
"""What SeerParallelEnv (the template) guarantees for every scenario: the
dict path equals the array path, exact step times, Ctrl-C safety, copies
and pickling, lifecycle messages, episode statistics, single-source enums."""

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from seer_envs import aircraft_v0, pcs_v0
from seer_envs.aircraft import handlers as ah
from seer_envs.aircraft.config import MAX_MESSAGES, AircraftConfig
from seer_runtime.loop import OUTBOX_CAPACITY as RUNTIME_OUTBOX
from seer_envs.pcs import handlers as ph
from seer_envs.pcs.config import PCSConfig
from seer_envs.pcs.reference import PcsReference

ENVS = {
    "pcs": lambda **kw: pcs_v0.parallel_env(grid_width=5, grid_height=4, **kw),
    # small batteries: UAVs stop at different steps, so agents leave mid-episode
    "aircraft": lambda **kw: aircraft_v0.parallel_env(num_uavs=12, battery_capacity=45.0,
                                                      arena_size=500.0, **kw),
    "aircraft_discrete": lambda **kw: aircraft_v0.parallel_env(
        num_uavs=9, battery_capacity=45.0, continuous_actions=False, **kw),
}


def _random_actions(env, rng):
    """An action for every possible agent, in possible_agents order."""
    n = len(env.possible_agents)
    spec = env._action_spec
    if spec[0] == "discrete":
        return rng.integers(0, spec[1], n)
    return rng.uniform(-1, 1, (n,) + spec[1]).astype(np.float32)


# --- the dict path equals the array path -------------------------------------

@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(ENVS))
def test_dict_path_identical_to_array_path(name, threads):
    d, a = ENVS[name](num_threads=threads), ENVS[name](num_threads=1)
    obs_d, _ = d.reset(seed=9)
    obs_a = a.reset_arrays(seed=9)
    assert np.array_equal(np.stack([obs_d[ag] for ag in d.agents]), obs_a)
    rng = np.random.default_rng(threads)
    ended = set()
    steps = 0
    while d.agents:
        acts = _random_actions(d, rng)
        live = list(d.agents)
        rows = [d._index[ag] for ag in live]
        # a dict in a shuffled order half of the time (the slow key path)
        order = rng.permutation(len(live)) if steps % 2 else range(len(live))
        as_dict = {live[k]: acts[rows[k]] for k in order}
        o, r, te, tr, infos = d.step(as_dict)
        oa, ra, tea, tra = a.step_arrays(acts)
        if steps == 0:
            first_term, kept_term = tea, tea.copy()
        assert list(o) == live and list(r) == live and list(infos) == live
        assert np.array_equal(np.stack([o[ag] for ag in live]), oa[rows])
        assert [r[ag] for ag in live] == ra[rows].tolist()
        assert all(type(r[ag]) is float and type(te[ag]) is bool for ag in live)
        assert [te[ag] for ag in live] == tea[rows].tolist()
        assert [tr[ag] for ag in live] == tra[rows].tolist()
        assert d.agents == a.agents
        ended |= {ag for ag in live if te[ag] or tr[ag]}
        steps += 1
    assert ended == set(d.possible_agents) and steps == a._cycle
    assert np.array_equal(kept_term, first_term)              # returned arrays are the caller's
    assert d.engine.state_digest() == a.engine.state_digest()


def test_dict_observations_are_views_of_one_array_per_step():
    env = ENVS["pcs"](num_threads=1)
    env.reset(seed=0)
    o1, *_ = env.step({ag: 0 for ag in env.agents})
    base = o1["cell_0_0"].base
    assert base is not None and all(v.base is base for v in o1.values())
    kept = {ag: v.copy() for ag, v in o1.items()}
    env.step({ag: 1 for ag in env.agents})
    assert env._batch.copies.obs is not base    # the next boundary wrote a new array
    assert all(np.array_equal(o1[ag], kept[ag]) for ag in o1)


@pytest.mark.parametrize("name", sorted(ENVS))
def test_returned_arrays_are_the_callers(name):
    # Each boundary writes new arrays, so what a call returned is never
    # written again: not by later steps, an episode's end, or a reset.
    env = ENVS[name](num_threads=2)
    rng = np.random.default_rng(5)
    o = env.reset_arrays(seed=3)
    kept = [(o, o.copy())]
    while env.agents:
        out = env.step_arrays(_random_actions(env, rng))
        kept += [(x, x.copy()) for x in out]
    o = env.reset_arrays(seed=4)
    kept += [(o, o.copy())] + [(x, x.copy()) for x in env.step_arrays(_random_actions(env, rng))]
    env.step_arrays(_random_actions(env, rng))
    for k, (x, snapshot) in enumerate(kept):
        np.testing.assert_array_equal(x, snapshot, err_msg=f"returned array {k} changed")


@pytest.mark.parametrize("bad, match", [
    (np.array([0.5, np.nan], np.float32), "not finite"),
    (np.array([0.5, 1.5], np.float32), r"must be in \[-1.0, 1.0\]"),
    (np.array([0.5, 0.5, 0.5], np.float32), "shape"),
    (np.array(["a", "b"]), "real numbers"),
])
def test_stacked_box_check_names_the_first_bad_agent(bad, match):
    env = ENVS["aircraft"](num_threads=1)
    env.reset(seed=0)
    acts = {ag: np.zeros(2, np.float32) for ag in env.agents}
    acts["uav_7"] = bad
    acts["uav_9"] = bad
    with pytest.raises(ValueError, match=match) as info:
        env.step(acts)
    assert "uav_7" in str(info.value) and "uav_9" not in str(info.value)
    env.step({ag: np.zeros(2, np.float32) for ag in env.agents})     # the env is still usable


@pytest.mark.parametrize("bad, match", [(True, "integer"), (2**70, r"\[0, 5\]"), (np.int64(6), r"\[0, 5\]")])
def test_stacked_discrete_check_names_the_agent(bad, match):
    env = ENVS["pcs"](num_threads=1)
    env.reset(seed=0)
    acts = {ag: 1 for ag in env.agents}
    acts["cell_3_2"] = bad
    with pytest.raises(ValueError, match=match) as info:
        env.step(acts)
    assert "cell_3_2" in str(info.value)


# --- exact step times ----------------------------------------------------------

@pytest.mark.parametrize("dt", [0.1, 0.001, 1 / 3])
def test_long_episodes_with_inexact_dt_never_drift(dt):
    """Boundaries are k * dt from the step count: 10^5 steps of a tiny PCS
    never meet "cannot inject at time ..."."""
    env = pcs_v0.parallel_env(grid_width=1, grid_height=1, portables_per_cell=2, dt=dt,
                              call_interarrival_mean=dt * 3, call_duration_mean=dt * 2,
                              move_interval_mean=dt * 5, handoff_latency=dt,
                              max_cycles=100_000, num_threads=1)
    env.reset_arrays(seed=1)
    a = np.zeros(1, np.int64)
    for _ in range(100_000):
        env.step_arrays(a)
    assert env.agents == [] and env.engine.now == 100_000 * dt
    assert env.summary()["call_attempts"] > 10_000


def test_reference_step_times_are_exact():
    cfg = PCSConfig(grid_width=2, grid_height=1, dt=0.1, portables_per_cell=1, max_cycles=10**6)
    ref = PcsReference(cfg)
    ref.reset(3)
    seen = []
    ref.inject = lambda t, lps, kind, _inj=ref.inject: (seen.append(t), _inj(t, lps, kind))
    for _ in range(40):
        ref.step(np.zeros(2, np.int64))
    assert seen == [k * 0.1 for k in range(40)]


# --- Ctrl-C ------------------------------------------------------------------------

class _InterruptedEngine:
    """Runs half of the step, then raises KeyboardInterrupt (what a Ctrl-C
    inside Engine.run_until does)."""

    def __init__(self, engine, dt):
        self._engine, self._dt = engine, dt

    def __getattr__(self, name):
        return getattr(self._engine, name)

    def run_until(self, t, copy_end=None):
        self._engine.run_until(t - self._dt / 2)
        raise KeyboardInterrupt


@pytest.mark.parametrize("name", ["pcs", "aircraft"])
def test_ctrl_c_inside_a_step_marks_the_env_interrupted(name):
    env, twin = ENVS[name](num_threads=2), ENVS[name](num_threads=1)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step_arrays(_random_actions(env, rng))
    env.core.batch.engine = _InterruptedEngine(env.engine, env.config.dt)
    with pytest.raises(KeyboardInterrupt):
        env.step({ag: _random_actions(env, rng)[env._index[ag]] for ag in env.agents})
    for call in (lambda: env.step({ag: 0 for ag in env.agents}),
                 lambda: env.step_arrays(_random_actions(env, rng))):
        with pytest.raises(RuntimeError, match=r"interrupted.*call reset\(\)"):
            call()
    with pytest.raises(TypeError, match="interrupted"):
        copy.deepcopy(env)
    # reset() gives a fresh episode, the same as a twin that was never interrupted
    assert np.array_equal(env.reset_arrays(seed=5), twin.reset_arrays(seed=5))
    acts = _random_actions(env, rng)
    assert np.array_equal(env.step_arrays(acts)[0], twin.step_arrays(acts)[0])


def test_a_real_ctrl_c_never_leaves_a_silently_diverging_env(ctrl_c_after):
    """SIGINT while stepping: wherever it lands, the env either refuses the
    next step with the clear error or equals a twin that ran the same
    completed steps."""
    params = dict(grid_width=16, grid_height=16, power_control_iters=3_000)    # steps of ~0.1-0.5 s
    env = pcs_v0.parallel_env(num_threads=2, **params)
    env.reset(seed=1)
    acts = np.ones(256, np.int64)
    done = 0
    with ctrl_c_after(0.3):
        for _ in range(10_000):
            env.step_arrays(acts)
            done += 1
    if env._interrupted is not None:
        with pytest.raises(RuntimeError, match=r"interrupted.*call reset\(\)"):
            env.step_arrays(acts)
    else:       # it landed between steps: the env must be exactly where a twin is
        twin = pcs_v0.parallel_env(num_threads=1, **params)
        twin.reset(seed=1)
        for _ in range(env._cycle):
            twin.step_arrays(acts)
        assert env.engine.state_digest() == twin.engine.state_digest()
        env.step_arrays(acts)
    env.reset(seed=2)
    env.step_arrays(acts)


# --- copies and pickling -------------------------------------------------------------

@pytest.mark.parametrize("name", ["pcs", "aircraft"])
def test_shallow_copy_is_refused(name):
    env = ENVS[name](num_threads=1)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="share the running engine"):
        copy.copy(env)


def _rollout(env, steps, seed=3):
    rng = np.random.default_rng(seed)
    return [env.step_arrays(_random_actions(env, rng))[:2] for _ in range(steps)]


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))],
                         ids=["deepcopy", "pickle"])
@pytest.mark.parametrize("name", ["pcs", "aircraft"])
def test_copies_before_and_right_after_reset_are_exact(name, clone):
    fresh = ENVS[name](num_threads=1, max_cycles=50)
    fresh.max_cycles = 7                                # a settable attribute travels too
    c = clone(fresh)
    assert c.max_cycles == 7 and c.agents == [] and c.model is None
    assert np.array_equal(c.reset_arrays(seed=2), fresh.reset_arrays(seed=2))

    env = ENVS[name](num_threads=2)
    env.reset(seed=11)
    c = clone(env)                                      # SuperSuit's case: reset, then wrapped
    assert c.seed_used == env.seed_used and c.agents == env.agents
    for (o1, r1), (o2, r2) in zip(_rollout(env, 5), _rollout(c, 5)):
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2)
    env.reset()                                         # unseeded resets continue the same sequence
    c.reset()
    assert env.seed_used == c.seed_used


@pytest.mark.parametrize("name", ["pcs", "aircraft"])
def test_copies_mid_episode_continue_and_closed_envs_copy_closed(name):
    env = ENVS[name](num_threads=1)
    env.reset(seed=0)
    _rollout(env, 1)
    rng = np.random.default_rng(2)
    acts = [_random_actions(env, rng) for _ in range(3)]
    for clone in (copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))):
        twin = clone(env)                 # through a snapshot: the same episode, bit for bit
        assert twin._cycle == env._cycle and twin.agents == env.agents
        for x in acts:
            for u, v in zip(twin.step_arrays(x), env.step_arrays(x)):
                np.testing.assert_array_equal(u, v)
    env.close()
    c = pickle.loads(pickle.dumps(env))
    with pytest.raises(RuntimeError, match="closed"):
        c.reset(seed=0)


# --- lifecycle messages ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pcs", "aircraft"])
def test_lifecycle_messages(name):
    env = ENVS[name](num_threads=1)
    for call in (lambda: env.step({}), lambda: env.step_arrays(np.zeros(3))):
        with pytest.raises(RuntimeError, match=r"call reset\(\) first") as info:
            call()
        assert "ended" not in str(info.value)
    for space in (env.observation_space, env.action_space):
        with pytest.raises(KeyError, match="unknown agent 'nope'"):
            space("nope")
        with pytest.raises(ValueError, match=env.possible_agents[0]):
            space("nope")
    env.reset(seed=0)
    env.close()
    for call in (lambda: env.step({}), lambda: env.step_arrays(np.zeros(3)), env.state):
        with pytest.raises(RuntimeError, match="closed"):
            call()


# --- episode statistics --------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ENVS))
def test_episode_statistics_at_each_agents_last_step(name):
    env = ENVS[name](num_threads=2, max_cycles=60)
    obs, infos = env.reset(seed=6)
    assert all(i == {} for i in infos.values())
    rng = np.random.default_rng(2)
    ret = dict.fromkeys(env.agents, 0.0)
    length = dict.fromkeys(env.agents, 0)
    got = {}
    while env.agents:
        acts = _random_actions(env, rng)
        _, rew, term, trunc, infos = env.step({ag: acts[env._index[ag]] for ag in env.agents})
        for ag, r in rew.items():
            ret[ag] += np.float64(r)
            length[ag] += 1
            if term[ag] or trunc[ag]:
                got[ag] = infos[ag]
            else:
                assert infos[ag] == {}
    assert set(got) == set(env.possible_agents)
    for ag, info in got.items():
        assert info["seer_episode"]["l"] == length[ag]
        assert info["seer_episode"]["r"] == pytest.approx(ret[ag], rel=1e-12, abs=1e-9)
        assert set(env._agent_infos([env._index[ag]])[0]) <= set(info)
    assert len({i["seer_episode"]["l"] for i in got.values()}) > (1 if name != "pcs" else 0)


# --- single sources --------------------------------------------------------------------------

def test_counters_and_layouts_come_from_the_enums():
    assert ph.COUNTERS[0] == "call_attempts" and len(ph.COUNTERS) == 6
    assert ah.COUNTERS[-1] == "dynamics_events" and len(ah.COUNTERS) == 6
    assert pcs_v0.PcsEnv.obs_layout is ph.OBS_LAYOUT
    assert aircraft_v0.AircraftEnv.obs_layout is ah.OBS_LAYOUT
    env = ENVS["aircraft"](num_threads=1)
    space = env.observation_space("uav_0")
    nb = ah.OBS_LAYOUT["neighbours"]
    assert space.shape == (ah.OBS_SIZE_PY,) and nb.stop - nb.start == 4 * ah.N_NEIGHBOURS_PY
    assert space.low[ah.OBS_LAYOUT["energy"]] == 0.0 and space.high[ah.OBS_LAYOUT["target_age"]] == np.inf


def test_buffer_sizes_are_checked_against_parameters():
    assert MAX_MESSAGES == ah.TOPK_CAP_PY
    assert RUNTIME_OUTBOX == ah.OUTBOX_CAPACITY_PY == ph.OUTBOX_CAPACITY_PY
    cfg = AircraftConfig(num_uavs=4)
    object.__setattr__(cfg, "max_messages", ah.TOPK_CAP_PY + 1)   # past the config's own check
    with pytest.raises(ValueError, match="max_messages"):
        ah.AircraftModel(cfg)
    pcfg = dataclasses.replace(PCSConfig(grid_width=2, grid_height=2))
    object.__setattr__(pcfg, "portables_per_cell", ph.OUTBOX_CAPACITY_PY + 1)
    with pytest.raises(ValueError, match="portables_per_cell"):
        ph.PcsModel(pcfg)


@pytest.mark.parametrize("name", ["pcs", "aircraft"])
def test_aec_path_identical_to_array_path(name):
    """The AEC wrapper hands the parallel step one dict per cycle: it takes
    the same stacked path and gives the array path's results."""
    aec = pcs_v0.env if name == "pcs" else aircraft_v0.env
    params = (dict(grid_width=3, grid_height=2, max_cycles=40) if name == "pcs"
              else dict(num_uavs=5, battery_capacity=45.0, max_cycles=120))
    e = aec(num_threads=2, **params)
    arr = (pcs_v0.parallel_env if name == "pcs" else aircraft_v0.parallel_env)(num_threads=1, **params)
    e.reset(seed=3)
    arr.reset_arrays(seed=3)
    par = e.unwrapped
    rng = np.random.default_rng(0)
    steps = 0
    while arr.agents:
        acts = _random_actions(arr, rng)
        start = par._cycle
        while par._cycle == start:
            ag = e.agent_selection
            done = e.terminations[ag] or e.truncations[ag]
            e.step(None if done else acts[arr._index[ag]])
        o, r, *_ = arr.step_arrays(acts)
        assert set(e.rewards) and set(e.rewards) <= set(arr.possible_agents)
        for ag in e.rewards:
            assert np.array_equal(e.observe(ag), o[arr._index[ag]])
            assert e.rewards[ag] == r[arr._index[ag]]
        steps += 1
    assert steps == par._cycle > 5
