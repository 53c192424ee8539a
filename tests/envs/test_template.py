# SPDX-License-Identifier: BSD-3-Clause
"""What SeerParallelEnv (the template) guarantees for every registered
scenario (each at its ``test_params`` and, where it declares them, its
``test_params_stopping``, where agents leave mid-episode): the dict path
equals the array path, exact step times, Ctrl-C safety, copies and
pickling, lifecycle messages, episode statistics, single-source enums."""

import copy
import dataclasses
import pickle
import re

import numpy as np
import pytest
from seer_test_helpers import env_cases, random_actions

import seer_envs
from seer_envs.aircraft import handlers as ah
from seer_envs.aircraft.config import MAX_MESSAGES, AircraftConfig
from seer_runtime.loop import OUTBOX_CAPACITY as RUNTIME_OUTBOX
from seer_envs.pcs import handlers as ph
from seer_envs.pcs.config import PCSConfig
from seer_envs.pcs.reference import PcsReference

CASES = env_cases()
ENVS = list(seer_envs.envs())


def _make(sid, params, **kw):
    return seer_envs.make(sid, **dict(params, **kw))


def _small(sid, **over):
    return dict(seer_envs.get(sid).test_params, **over)


def _action_space(sid):
    spec = seer_envs.get(sid)
    return spec.copies.spaces(spec.build_config(spec.test_params))[1]


BOX = [s for s in ENVS if not hasattr(_action_space(s), "n")]
DISCRETE = [s for s in ENVS if hasattr(_action_space(s), "n")]
_random_actions = random_actions


# --- the dict path equals the array path -------------------------------------

@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sid, params", CASES)
def test_dict_path_identical_to_array_path(sid, params, threads):
    d, a = _make(sid, params, num_threads=threads), _make(sid, params, num_threads=1)
    obs_d, _ = d.reset(seed=9)
    obs_a = a.reset_arrays(seed=9)
    assert np.array_equal(np.stack([obs_d[ag] for ag in d.agents]), obs_a)
    rng = np.random.default_rng(threads)
    ended = set()
    steps, stopped = 0, False
    all_term = np.zeros(len(d.possible_agents), bool)
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
        assert d.agents == a.agents == [ag for ag in live if not (te[ag] or tr[ag])]
        space = d.observation_space(d.possible_agents[0])
        assert all(space.contains(o[ag]) for ag in live)
        ended |= {ag for ag in live if te[ag] or tr[ag]}
        stopped = stopped or any(te[ag] for ag in live) and bool(d.agents)
        all_term |= tea                                   # each end reported once, at its step
        steps += 1
    assert ended == set(d.possible_agents) and steps == a._cycle
    if params.get("max_cycles", 0) > steps:          # a -stopping case: every agent terminated
        assert stopped and all_term.all(), "agents left the episode one by one"
    assert np.array_equal(kept_term, first_term)              # returned arrays are the caller's
    assert d.engine.state_digest() == a.engine.state_digest()


@pytest.mark.parametrize("sid", ENVS)
def test_dict_observations_are_views_of_one_array_per_step(sid):
    env = seer_envs.make(sid, num_threads=1, **_small(sid))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    o1, *_ = env.step(dict(zip(env.possible_agents, _random_actions(env, rng))))
    base = o1[env.possible_agents[0]].base
    assert base is not None and all(v.base is base for v in o1.values())
    kept = {ag: v.copy() for ag, v in o1.items()}
    for _ in range(5):                          # later steps never write what a step returned
        env.step(dict(zip(env.possible_agents, _random_actions(env, rng))))
        assert env._batch.copies.obs is not base    # the next boundary wrote a new array
    assert all(np.array_equal(o1[ag], kept[ag]) for ag in o1)


@pytest.mark.parametrize("sid, params", CASES)
def test_returned_arrays_are_the_callers(sid, params):
    # Each boundary writes new arrays, so what a call returned is never
    # written again: not by later steps, an episode's end, or a reset.
    env = _make(sid, params, num_threads=2)
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


def _box_bad(space):
    """(bad action, what the error says) for a Box action space."""
    lo, hi = float(np.min(space.low)), float(np.max(space.high))
    ok = np.full(space.shape, (lo + hi) / 2 if np.isfinite(lo + hi) else 0.0, space.dtype)
    nan, above = ok.copy(), ok.copy()
    nan.flat[-1] = np.nan
    above.flat[-1] = hi + 0.5 if np.isfinite(hi) else np.nan
    return [(nan, "not finite"), (above, re.escape(f"must be in [{lo}, {hi}]")),
            (np.append(ok.ravel(), ok.flat[0]), "shape"), (np.full(space.shape, "a"), "real numbers")]


@pytest.mark.parametrize("sid", BOX)
@pytest.mark.parametrize("k", range(4))
def test_stacked_box_check_names_the_first_bad_agent(sid, k):
    env = seer_envs.make(sid, num_threads=1, **_small(sid))
    env.reset(seed=0)
    space = env.action_space(env.possible_agents[0])
    bad, match = _box_bad(space)[k]
    first, second = env.possible_agents[1], env.possible_agents[3]
    acts = {ag: np.zeros(space.shape, space.dtype) for ag in env.agents}
    acts[first] = bad
    acts[second] = bad
    with pytest.raises(ValueError, match=match) as info:
        env.step(acts)
    assert first in str(info.value) and second not in str(info.value)
    env.step({ag: np.zeros(space.shape, space.dtype) for ag in env.agents})     # the env is still usable


@pytest.mark.parametrize("sid", DISCRETE)
@pytest.mark.parametrize("k", range(3))
def test_stacked_discrete_check_names_the_agent(sid, k):
    env = seer_envs.make(sid, num_threads=1, **_small(sid))
    env.reset(seed=0)
    n = env.action_space(env.possible_agents[0]).n
    bad, match = [(True, "integer"), (2**70, rf"\[0, {n - 1}\]"), (np.int64(n), rf"\[0, {n - 1}\]")][k]
    acts = {ag: 1 for ag in env.agents}
    name = env.possible_agents[len(env.possible_agents) // 2]
    acts[name] = bad
    with pytest.raises(ValueError, match=match) as info:
        env.step(acts)
    assert name in str(info.value)


# --- exact step times ----------------------------------------------------------

@pytest.mark.parametrize("dt", [0.1, 0.001, 1 / 3])
def test_long_episodes_with_inexact_dt_never_drift(dt):
    """Boundaries are k * dt from the step count: 10^5 steps of a tiny PCS
    never meet "cannot inject at time ..."."""
    env = seer_envs.make("pcs_v0", grid_width=1, grid_height=1, portables_per_cell=2, dt=dt,
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


@pytest.mark.parametrize("sid, params", CASES)
def test_ctrl_c_inside_a_step_marks_the_env_interrupted(sid, params):
    env, twin = _make(sid, params, num_threads=2), _make(sid, params, num_threads=1)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step_arrays(_random_actions(env, rng))
    env.core.batch.engine = _InterruptedEngine(env.engine, env.config.dt)
    with pytest.raises(KeyboardInterrupt):
        env.step({ag: _random_actions(env, rng)[env._index[ag]] for ag in env.agents})
    for call in (lambda: env.step(dict(zip(env.agents, _random_actions(env, rng)))),
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
    env = seer_envs.make("pcs_v0", num_threads=2, **params)
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
        twin = seer_envs.make("pcs_v0", num_threads=1, **params)
        twin.reset(seed=1)
        for _ in range(env._cycle):
            twin.step_arrays(acts)
        assert env.engine.state_digest() == twin.engine.state_digest()
        env.step_arrays(acts)
    env.reset(seed=2)
    env.step_arrays(acts)


# --- copies and pickling -------------------------------------------------------------

@pytest.mark.parametrize("sid", ENVS)
def test_shallow_copy_is_refused(sid):
    env = seer_envs.make(sid, num_threads=1, **_small(sid))
    env.reset(seed=0)
    with pytest.raises(TypeError, match="share the running engine"):
        copy.copy(env)


def _rollout(env, steps, seed=3):
    rng = np.random.default_rng(seed)
    return [env.step_arrays(_random_actions(env, rng))[:2] for _ in range(steps)]


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))],
                         ids=["deepcopy", "pickle"])
@pytest.mark.parametrize("sid, params", CASES)
def test_copies_before_and_right_after_reset_are_exact(sid, params, clone):
    fresh = _make(sid, params, num_threads=1, max_cycles=50)
    fresh.max_cycles = 7                                # a settable attribute travels too
    c = clone(fresh)
    assert c.max_cycles == 7 and c.agents == [] and c.model is None
    assert np.array_equal(c.reset_arrays(seed=2), fresh.reset_arrays(seed=2))

    env = _make(sid, params, num_threads=2, max_cycles=50)
    env.reset(seed=11)
    c = clone(env)                                      # SuperSuit's case: reset, then wrapped
    assert c.seed_used == env.seed_used and c.agents == env.agents
    for (o1, r1), (o2, r2) in zip(_rollout(env, 5), _rollout(c, 5)):
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2)
    env.reset()                                         # unseeded resets continue the same sequence
    c.reset()
    assert env.seed_used == c.seed_used


@pytest.mark.parametrize("sid, params", CASES)
def test_copies_mid_episode_continue_and_closed_envs_copy_closed(sid, params):
    env = _make(sid, params, num_threads=1, max_cycles=50)
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

@pytest.mark.parametrize("sid", ENVS)
def test_lifecycle_messages(sid):
    env = seer_envs.make(sid, num_threads=1, **_small(sid))
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
    for call in (lambda: env.step({}), lambda: env.step_arrays(np.zeros(3)), env.state, env.summary):
        with pytest.raises(RuntimeError, match="closed"):
            call()


# --- episode statistics --------------------------------------------------------------------

@pytest.mark.parametrize("sid, params", CASES)
def test_episode_statistics_at_each_agents_last_step(sid, params):
    env = _make(sid, params, num_threads=2, max_cycles=min(60, params["max_cycles"] * 10))
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
    stopping = seer_envs.get(sid).test_params_stopping == params
    assert len({i["seer_episode"]["l"] for i in got.values()}) > (1 if stopping else 0)


# --- single sources --------------------------------------------------------------------------

def test_counters_and_layouts_come_from_the_enums():
    assert ph.COUNTERS[0] == "call_attempts" and len(ph.COUNTERS) == 6
    assert ah.COUNTERS[-1] == "dynamics_events" and len(ah.COUNTERS) == 6
    assert seer_envs.get("pcs_v0").env.obs_layout is ph.OBS_LAYOUT
    assert seer_envs.get("aircraft_v0").env.obs_layout is ah.OBS_LAYOUT
    env = seer_envs.make("aircraft_v0", num_uavs=12, num_threads=1)
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


@pytest.mark.parametrize("sid, params", CASES)
def test_aec_path_identical_to_array_path(sid, params):
    """The AEC wrapper hands the parallel step one dict per cycle: it takes
    the same stacked path and gives the array path's results."""
    params = dict(params, max_cycles=min(params["max_cycles"] * 10, 120))
    e = _make(sid, params, aec=True, num_threads=2)
    arr = _make(sid, params, num_threads=1)
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
