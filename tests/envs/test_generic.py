# SPDX-License-Identifier: BSD-3-Clause
"""What every registered scenario owes, parametrised over the registry: a new
scenario registered from its own package is tested here with no edit.
(Scenario-specific tests stay in the scenario's own files.)"""

import dataclasses
import re
import types

import numpy as np
import pytest
from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, render_test
from seer_test_helpers import env_cases, random_actions, same, stopping_cases, three_values

import seer_envs
from seer.scenarios import registry as cli_registry
from seer_envs.episode.actions import resting_action
from seer_envs.scenario.copies import Copies, action_spec

SPECS = seer_envs.registry()
ENVS = [s for s in SPECS if SPECS[s].env is not None]
HEADLESS = [s for s in SPECS if SPECS[s].headless is not None]
# every form a run can take: ("pcs_v0", "env"), ("pcs_v0", "headless"), ("phold", "headless")
FORMS = [(s, "env") for s in ENVS] + [(s, "headless") for s in HEADLESS]
# (sid, params): each env at its test_params and, where declared, its test_params_stopping
CASES = env_cases()
STOPPING = stopping_cases()


def small(sid, **over):
    return dict(SPECS[sid].test_params, **over)


def test_registry_has_the_built_in_scenarios():
    assert {"pcs_v0", "phold"} <= set(SPECS)
    assert list(SPECS) == sorted(SPECS)
    assert set(seer_envs.envs()) == set(ENVS)


@pytest.mark.parametrize("sid", list(SPECS))
def test_spec_is_complete_and_frozen(sid):
    spec = SPECS[sid]
    assert spec.id == sid and spec.description
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.id = "other"
    cfg = spec.build_config()                                  # every field has a default
    assert dataclasses.is_dataclass(cfg)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(cfg, dataclasses.fields(cfg)[0].name, 1)
    assert spec.normalize(spec.test_params) == dataclasses.asdict(spec.build_config(spec.test_params))
    assert spec.kind == ("env" if spec.env is not None else "headless")
    assert spec.env is not None or spec.headless is not None, "a scenario runs in some form"


@pytest.mark.parametrize("sid", list(SPECS))
def test_unknown_and_bad_parameters_are_named(sid):
    spec = SPECS[sid]
    with pytest.raises(ValueError, match="no_such_param"):
        spec.build_config({"no_such_param": 1})
    first = dataclasses.fields(spec.config)[0].name
    with pytest.raises(ValueError, match=first):
        spec.build_config({first: "not a value"})


def test_unknown_id_names_the_registered_ones():
    with pytest.raises(ValueError, match=r"unknown scenario 'pcs_v9'.*pcs_v0"):
        seer_envs.make("pcs_v9")
    with pytest.raises(ValueError, match="headless model"):
        seer_envs.make("phold")
    for sid in set(SPECS) - set(HEADLESS):
        with pytest.raises(ValueError, match="no headless form"):
            SPECS[sid].open_run(SPECS[sid].test_params, 1, 0, headless=True)


@pytest.mark.parametrize("sid", list(SPECS))
def test_cli_registry_reads_the_spec_registry(sid):
    names = cli_registry()
    spec = SPECS[sid]
    if spec.env is not None:
        assert names[sid].kind == "env" and names[sid].config_cls is spec.config
    if spec.headless is not None:
        name = sid + ":headless" if spec.env is not None else sid
        assert names[name].kind == "headless"


# --- the env API -------------------------------------------------------------

@pytest.mark.parametrize("sid", ENVS)
def test_parallel_api(sid):
    parallel_api_test(seer_envs.make(sid, num_threads=2, **small(sid, max_cycles=60)), num_cycles=80)


@pytest.mark.parametrize("sid, params", STOPPING)
def test_parallel_api_with_agents_that_stop(sid, params):
    env = seer_envs.make(sid, num_threads=2, **params)
    parallel_api_test(env, num_cycles=300)
    assert env.max_cycles == 300 and env.agents == []
    # every agent stops on its own, at its own step, well before 300 steps
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    ends = {}
    while env.agents:
        acts = random_actions(env, rng)
        _, _, term, trunc, _ = env.step({ag: acts[env._index[ag]] for ag in env.agents})
        ends.update({ag: (env._cycle, term[ag]) for ag in term if term[ag] or trunc[ag]})
    assert set(ends) == set(env.possible_agents) and all(t for _, t in ends.values())
    assert len({k for k, _ in ends.values()}) > 1 and max(k for k, _ in ends.values()) < 300


@pytest.mark.parametrize("sid, params", CASES)
def test_aec_api(sid, params):
    cycles = max(40, params["max_cycles"])
    env = seer_envs.make(sid, aec=True, num_threads=2, **dict(params, max_cycles=cycles))
    api_test(env, num_cycles=max(60, params["max_cycles"]))


@pytest.mark.parametrize("sid", ENVS)
def test_max_cycles(sid):
    p = {k: v for k, v in small(sid).items() if k != "max_cycles"}
    mod = types.SimpleNamespace(parallel_env=lambda **kw: seer_envs.make(sid, **p, **kw),
                                env=lambda **kw: seer_envs.make(sid, aec=True, **p, **kw))
    max_cycles_test(mod)


def _modes(sid):
    """The render modes ``sid`` declares (both are optional)."""
    return seer_envs.make(sid, **small(sid)).metadata["render_modes"]


def _state_space(env):
    """The env's state space; absent (None) where the scenario declares none."""
    return getattr(env, "state_space", None)


@pytest.mark.parametrize("sid", ENVS)
def test_render(sid):
    modes = _modes(sid)
    if not modes:
        pytest.skip(f"{sid} declares no render mode")
    # PettingZoo's render_test builds its first env in "human" mode to read the metadata
    render_test(lambda render_mode=None: seer_envs.make(
        sid, aec=True, render_mode=render_mode if render_mode in modes else None, **small(sid)))


@pytest.mark.parametrize("sid", ENVS)
def test_an_undeclared_render_mode_is_refused_at_construction(sid):
    spec, modes = SPECS[sid], _modes(sid)
    for mode in {"human", "rgb_array"} - set(modes):
        with pytest.raises(ValueError, match=f"render_mode must be None or one of .*{mode}"):
            seer_envs.make(sid, render_mode=mode, **small(sid))
    if "rgb_array" not in modes:
        with pytest.raises(ValueError, match="render_mode must be None or one of .*rgb_array"):
            seer_envs.vector_env(sid, 2, render_mode="rgb_array", **small(sid))
        with pytest.raises(ValueError, match="render_mode"):
            seer_envs.agent_vector_env(sid, 2, render_mode="rgb_array", **small(sid))
        assert seer_envs.vector_env(sid, 2, **small(sid)).metadata["render_modes"] == []
    assert ("rgb_array" in modes) == (spec.copies.image is not Copies.image)
    assert ("human" in modes) == (spec.copies.print_map is not Copies.print_map)


@pytest.mark.parametrize("sid", ENVS)
def test_step_before_reset_and_after_close(sid):
    env = seer_envs.make(sid, **small(sid))
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    with pytest.raises(RuntimeError, match="reset"):
        env.step_arrays(_zeros(env))
    if _state_space(env) is not None:
        with pytest.raises(RuntimeError, match="reset"):
            env.state()
    env.reset(seed=0)
    env.close()
    env.close()                      # closing twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(seed=0)


@pytest.mark.parametrize("sid", ENVS)
@pytest.mark.parametrize("bad", [0, -1, -2, 1.5, 2.0, "two", "fast", None, True])
def test_bad_num_threads_is_named_at_construction(sid, bad):
    with pytest.raises(ValueError, match="num_threads"):
        seer_envs.make(sid, num_threads=bad, **small(sid))


@pytest.mark.parametrize("sid", ENVS)
def test_misspelled_parameters_and_render_modes_are_named(sid):
    first = dataclasses.fields(SPECS[sid].config)[0].name
    with pytest.raises(ValueError, match=f"did you mean '{first}'"):
        seer_envs.make(sid, **{first + "x": 1})
    with pytest.raises(ValueError, match="render_mode"):
        seer_envs.make(sid, render_mode="window", **small(sid))


# --- what a user expects of the API, every scenario --------------------------

def _zeros(env):
    """A valid action array (zeros, or the space's start or bound where 0
    is not an action), in possible_agents order."""
    space = env.action_space(env.possible_agents[0])
    return np.array([_zero(space)] * len(env.possible_agents), space.dtype)


def _zero(space):
    a = resting_action(action_spec(space))
    return int(a) if hasattr(space, "n") else a.astype(space.dtype)


@pytest.mark.parametrize("sid", ENVS)
def test_rgb_array_frames_keep_their_size_and_change(sid):
    if "rgb_array" not in _modes(sid):
        pytest.skip(f"{sid} declares no rgb_array frame (Copies.image)")
    env = seer_envs.make(sid, render_mode="rgb_array", num_threads=1, **small(sid, max_cycles=20))
    env.reset(seed=0)
    img0 = env.render()
    assert img0.dtype == np.uint8 and img0.ndim == 3 and img0.shape[2] == 3
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step_arrays(random_actions(env, rng))
    img1 = env.render()
    assert img1.shape == img0.shape and (img1 != img0).any()   # same frame size, new content


@pytest.mark.parametrize("sid", ENVS)
def test_human_mode_prints_a_frame_at_reset_and_render(sid, capsys):
    if "human" not in _modes(sid):
        pytest.skip(f"{sid} declares no human mode (print_map)")
    env = seer_envs.make(sid, render_mode="human", num_threads=1, **small(sid))
    env.reset(seed=0)
    assert capsys.readouterr().out.strip(), "reset draws a frame in human mode"
    assert env.render() is None
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("sid", ENVS)
def test_spaces_are_cached_and_match_the_declarations(sid):
    spec = SPECS[sid]
    env = seer_envs.make(sid, **small(sid))
    cfg = spec.build_config(small(sid))
    a = env.possible_agents[0]
    assert env.possible_agents == list(spec.copies.agent_names(cfg))
    assert env.observation_space(a) is env.observation_space(a)
    assert env.action_space(a) is env.action_space(a)
    obs_space, act_space = spec.copies.spaces(cfg)
    assert env.observation_space(a) == obs_space and env.action_space(a) == act_space
    obs, _ = env.reset(seed=0)
    assert all(env.observation_space(ag).contains(o) for ag, o in obs.items())
    if _state_space(env) is not None:
        assert env.state().shape == env.state_space.shape
        assert env.state_space == spec.copies.state_space(cfg)
    else:                                        # no global state: none declared, and none given
        assert spec.copies.state_space(cfg) is None
        with pytest.raises(NotImplementedError, match="no global state"):
            env.state()


@pytest.mark.parametrize("sid", ENVS)
def test_full_infos_and_summary(sid):
    env = seer_envs.make(sid, num_threads=1, full_infos=True, **small(sid, max_cycles=30))
    _, infos = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        live = list(env.agents)
        acts = random_actions(env, rng)
        _, _, term, trunc, infos = env.step({a: acts[env._index[a]] for a in live})
        assert list(infos) == live
        want = env._agent_infos([env._index[a] for a in live])
        for ag, w in zip(live, want):             # every step: the scenario's details of each agent
            assert {k: v for k, v in infos[ag].items() if k != "episode"} == w
            assert ("episode" in infos[ag]) == (term[ag] or trunc[ag])
    assert env.summary()["events"] == env.engine.stats()["events"] > 0


@pytest.mark.parametrize("sid", ENVS)
def test_bad_action_dicts(sid):
    env = seer_envs.make(sid, **small(sid))
    env.reset(seed=0)
    space = env.action_space(env.possible_agents[0])
    with pytest.raises(ValueError, match=f"missing action for agent '{env.possible_agents[1]}'"):
        env.step({env.possible_agents[0]: _zero(space)})
    with pytest.raises(ValueError, match="must be a dict"):
        env.step("not a dict")


def _bad_values(space):
    """(bad action for one agent, what the error says) for an action space."""
    if hasattr(space, "n"):
        start = int(space.start)
        rng_ = re.escape(f"must be in [{start}, {start + space.n - 1}]")
        return [(start + space.n, rng_), (start - 1, rng_), (1.5, "must be an integer"),
                (True, "must be an integer"), ("2", "must be an integer"), (np.array([1, 2]), "must be a scalar"),
                (None, "must be an integer")]
    _, _, low, high = action_spec(space)               # the last element's own bounds
    lo, hi = (float(np.broadcast_to(b, space.shape).flat[-1]) for b in (low, high))
    rng_ = re.escape(f"must be in [{lo}, {hi}]")
    shape = re.escape(f"shape {tuple(space.shape)}")
    ok = _zero(space)

    def at_last(v, dtype=space.dtype):
        x = ok.astype(dtype)
        x.flat[-1] = v
        return x
    return [(at_last(hi + 0.5), rng_), (at_last(lo - 0.01, np.float64), rng_),
            (at_last(np.nan), "not finite"), (at_last(np.inf, np.float64), "not finite"),
            (np.zeros(space.shape[0] + 1, space.dtype), shape),
            (np.zeros(space.shape + (1,), space.dtype), shape),
            (0.5, "must be an array"), (None, "must be an array"), ("ab", "must be an array"),
            (np.zeros(space.shape, bool), "real numbers"),
            (np.full(space.shape, "a").tolist(), "real numbers")]


@pytest.mark.parametrize("sid", ENVS)
def test_bad_action_values_name_the_agent(sid):
    env = seer_envs.make(sid, **small(sid))
    env.reset(seed=0)
    space = env.action_space(env.possible_agents[0])
    name = env.possible_agents[-2]
    for value, match in _bad_values(space):
        actions = {a: _zero(space) for a in env.agents}
        actions[name] = value
        with pytest.raises(ValueError, match=match) as info:
            env.step(actions)
        assert name in str(info.value), (value, str(info.value))
    assert env._cycle == 0                       # nothing was stepped by the rejected calls


@pytest.mark.parametrize("sid", ENVS)
def test_numpy_scalars_and_sequences_are_accepted(sid):
    env = seer_envs.make(sid, **small(sid))
    env.reset(seed=0)
    space = env.action_space(env.possible_agents[0])
    if hasattr(space, "n"):
        last = int(space.start) + space.n - 1
        forms = [np.int64(int(space.start)), np.array(last), last]
    else:
        mid = ((np.asarray(space.low, np.float64) + space.high) / 2).ravel()
        forms = [mid.tolist(), tuple(mid.tolist()), np.asarray(space.high, np.float64)]
    for v in forms:
        env.step({a: v for a in env.agents})
    assert env._cycle == len(forms)


@pytest.mark.parametrize("sid", ENVS)
def test_unknown_agent_is_named(sid):
    env = seer_envs.make(sid, **small(sid))
    env.reset(seed=0)
    space = env.action_space(env.possible_agents[0])
    actions = {a: _zero(space) for a in env.agents}
    actions["no_such_agent_99"] = _zero(space)
    with pytest.raises(ValueError, match="unknown agent 'no_such_agent_99'"):
        env.step(actions)


@pytest.mark.parametrize("sid, params", STOPPING)
def test_an_action_for_a_finished_agent_is_named(sid, params):
    env = seer_envs.make(sid, num_threads=1, **params)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    n = len(env.possible_agents)
    while len(env.agents) == n:
        acts = random_actions(env, rng)
        _, _, term, _, _ = env.step({a: acts[env._index[a]] for a in env.agents})
    assert env.agents, "some agents are still in the episode"
    dead = next(a for a, t in term.items() if t)
    acts = random_actions(env, rng)
    actions = {a: acts[env._index[a]] for a in env.agents}
    actions[dead] = acts[env._index[dead]]
    with pytest.raises(ValueError, match=f"finished agent '{dead}'"):
        env.step(actions)


@pytest.mark.parametrize("sid", ENVS)
def test_max_cycles_is_settable_and_stepping_after_the_end_is_an_error(sid):
    env = seer_envs.make(sid, **small(sid, max_cycles=100))
    env.reset(seed=0)
    env.max_cycles = 3
    space = env.action_space(env.possible_agents[0])
    for _ in range(3):
        *_, trunc, _ = env.step({a: _zero(space) for a in env.agents})
    assert all(trunc.values()) and env.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    with pytest.raises(RuntimeError, match="reset"):
        env.step_arrays(_zeros(env))


@pytest.mark.parametrize("sid", ENVS)
def test_bad_reset_arguments(sid):
    env = seer_envs.make(sid, **small(sid))
    for seed in (-1, "abc", 1.5):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
    with pytest.raises(TypeError, match="options"):
        env.reset(seed=0, options=[1])
    env.reset(seed=0, options={"options": 1})


@pytest.mark.parametrize("sid", ENVS)
def test_bad_action_arrays(sid):
    env = seer_envs.make(sid, **small(sid))
    env.reset_arrays(seed=0)
    events = env.engine.stats()["events"]
    good = _zeros(env)
    n = len(good)
    with pytest.raises(ValueError, match="shape"):
        env.step_arrays(good[:-1])
    if good.ndim == 1:                              # Discrete
        with pytest.raises(ValueError, match="integer"):
            env.step_arrays(good.astype(np.float32))
        with pytest.raises(ValueError, match="shape"):
            env.step_arrays(np.zeros((n, 2), np.int64))
        a = good.copy()
        space = env.action_space(env.possible_agents[0])
        a[n - 2] = space.start + space.n
        with pytest.raises(ValueError, match=env.possible_agents[n - 2]):
            env.step_arrays(a)
    else:                                           # Box
        with pytest.raises(ValueError, match="shape"):
            env.step_arrays(np.zeros(n, good.dtype))
        with pytest.raises(ValueError, match="float"):
            env.step_arrays(good.astype(bool))
        a = good.copy()
        a[n - 2].flat[-1] = float(np.asarray(env.action_space(env.possible_agents[0]).high).flat[-1]) + 1.0
        with pytest.raises(ValueError, match=env.possible_agents[n - 2]):
            env.step_arrays(a)
        a[n - 2].flat[-1] = np.nan
        with pytest.raises(ValueError, match=f"{env.possible_agents[n - 2]}.*not finite"):
            env.step_arrays(a)
    # nothing was stepped by the rejected calls
    assert env._cycle == 0 and env.engine.now == 0.0 and env.engine.stats()["events"] == events


@pytest.mark.parametrize("dtype", ["i1", "<i2", ">i4", "<i8", ">i8", "u1", ">u2", "<u8"])
def test_discrete_action_arrays_of_any_integer_width_and_byte_order(dtype):
    """Valid actions pass (the array itself, not copied); a too large or a
    negative one names its agent, in either byte order."""
    from seer_envs.episode.actions import check_actions
    spec, label = ("discrete", 3, 0), (lambda i: f"agent {i}")
    a = np.array([0, 1, 2, 1], dtype)
    assert check_actions(a, spec, (4,), label) is a
    a[2] = 3
    with pytest.raises(ValueError, match=r"agent 2 must be in \[0, 2\], got 3"):
        check_actions(a, spec, (4,), label)
    if np.dtype(dtype).kind == "i":
        a[2], a[1] = 2, -1
        with pytest.raises(ValueError, match=r"agent 1 must be in \[0, 2\], got -1"):
            check_actions(a, spec, (4,), label)


# --- seeds and serial equivalence over whole episodes ------------------------------

@pytest.mark.parametrize("sid, params", CASES)
def test_multi_step_seed_determinism_dict_api(sid, params):
    """PettingZoo's parallel_seed_test only compares one step; this compares
    whole episodes, through the dict API, infos and terminations included."""
    params = dict(params, max_cycles=max(params["max_cycles"], 100))

    def run(seed):
        env = seer_envs.make(sid, num_threads=2, full_infos=True, **params)
        obs, infos = env.reset(seed=seed)
        rng = np.random.default_rng(123)
        trace = [(obs, infos)]
        while env.agents:
            acts = random_actions(env, rng)
            trace.append(env.step({a: acts[env._index[a]] for a in env.agents}))
        return trace

    a, b, c = run(42), run(42), run(43)
    assert same(a, b)
    assert not same(a, c)
    steps, n = len(a) - 1, len(a[0][0])
    if SPECS[sid].test_params_stopping is not None and params == dict(SPECS[sid].test_params_stopping,
                                                                      max_cycles=params["max_cycles"]):
        dead = {ag for _, _, term, _, _ in a[1:] for ag, t in term.items() if t}
        assert steps < params["max_cycles"] and len(dead) == n      # real terminations
        assert sum(len(x[0]) for x in a[1:]) < n * steps             # the dead left `agents`
    else:
        assert steps == params["max_cycles"]


@pytest.mark.parametrize("sid", ENVS)
def test_reset_without_seed_continues_a_seeded_sequence(sid):
    env = seer_envs.make(sid, **small(sid))
    env.reset(seed=7)
    s1 = env.seed_used
    env.reset()
    s2 = env.seed_used
    env.reset(seed=7)
    assert env.seed_used == s1
    env.reset()
    assert env.seed_used == s2 != s1


def _episode(sid, params, threads, seed, steps=40):
    env = seer_envs.make(sid, num_threads=threads, **params)
    rng = np.random.default_rng(seed + 1)
    out = [env.reset_arrays(seed=seed), env._agent_infos(env._all_rows)]
    for _ in range(steps):
        out.append(env.step_arrays(random_actions(env, rng)))
        out.append(env._agent_infos(env._all_rows))
        if not env.agents:
            break
    s = env.engine.stats()
    return out + [env.summary(), s["events"], s["inbox_pushes"], env.engine.state_digest()]


@pytest.mark.parametrize("sid, params", CASES)
@pytest.mark.parametrize("seed", [0, 987654321])
def test_episodes_identical_across_thread_counts(sid, params, seed, thread_counts):
    """Whole episodes (observations, rewards, flags, every agent's details,
    the summary, events and the state digest) at 1-4 threads."""
    ref = _episode(sid, params, 1, seed)
    assert ref[-3] > 0
    for t in thread_counts[1:]:
        assert same(_episode(sid, params, t, seed), ref), f"threads={t}"


@pytest.mark.parametrize("sid", [s for s in ENVS if SPECS[s].heuristic is not None])
def test_heuristic_returns_valid_actions(sid):
    env = seer_envs.make(sid, num_threads=1, **small(sid))
    obs = env.reset_arrays(seed=0)
    acts = np.asarray(SPECS[sid].heuristic(env, obs))
    space = env.action_space(env.possible_agents[0])
    assert len(acts) == len(env.possible_agents)
    assert all(space.contains(np.asarray(a, space.dtype)) for a in acts)
    env.step_arrays(acts)


# --- serial equivalence over threads, through the spec's runs ---------------------

def _trace(sid, form, threads, seed, units=4):
    run = SPECS[sid].open_run(SPECS[sid].test_params, threads, seed, headless=form == "headless")
    out = []
    for _ in range(units):
        run.advance(1)
        s = run.engine.stats()
        out.append((s["events"], s["inbox_pushes"], run.engine.state_digest()))
    if run.owner is not None:
        out.append(run.owner._batch.copies.obs.tobytes())
    return out, run


@pytest.mark.parametrize("sid, form", FORMS, ids=[f"{s}-{f}" for s, f in FORMS])
@pytest.mark.parametrize("seed", [0, 77])
def test_runs_identical_across_thread_counts(sid, form, seed, thread_counts):
    ref, run = _trace(sid, form, 1, seed)
    assert run.units == 4 and run.n_entities >= 1
    assert run.n_agents == (len(run.owner.possible_agents) if form == "env" else 0)
    assert ref[-2][0] > 0 if run.owner is not None else ref[-1][0] > 0, "the run did something"
    for t in thread_counts[1:]:
        assert _trace(sid, form, t, seed)[0] == ref, f"threads={t}"
    assert _trace(sid, form, 1, seed + 1)[0] != ref, "the seed matters"


@pytest.mark.parametrize("sid", HEADLESS)
def test_headless_runner_identical_across_thread_counts(sid, thread_counts):
    runs = [SPECS[sid].headless(end_time=20.0, num_threads=t, seed=3, **SPECS[sid].test_params)
            for t in thread_counts]
    keys = [k for k in ("events", "rounds", "digest", "state_digest") if k in runs[0]]
    assert runs[0]["events"] > 0 and ("state_digest" in keys or "digest" in keys)
    for t, r in zip(thread_counts, runs):
        assert {k: r[k] for k in keys} == {k: runs[0][k] for k in keys}, f"threads={t}"
        assert r["num_threads"] == t


@pytest.mark.parametrize("sid", HEADLESS)
def test_headless_runner_rejects_bad_input(sid):
    h = SPECS[sid].headless
    with pytest.raises(ValueError, match="num_threads"):
        h(end_time=1.0, num_threads=0, seed=0, **SPECS[sid].test_params)
    with pytest.raises(ValueError, match="end_time"):
        h(end_time=-1.0, num_threads=1, seed=0, **SPECS[sid].test_params)
    with pytest.raises((ValueError, TypeError), match="no_such_param"):
        h(end_time=1.0, num_threads=1, seed=0, no_such_param=1, **SPECS[sid].test_params)


# --- the batch: every scenario's vector env --------------------------------------

def _actions(space, shape, rng):
    if hasattr(space, "n"):
        return rng.integers(space.start, space.start + space.n, shape)
    return rng.uniform(space.low, space.high, shape + space.shape).astype(space.dtype)


@pytest.mark.parametrize("sid", ENVS)
@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("threads, seed, layout", [(1, 0, None), (2, 5, False), (3, 9, None), (4, 12, None),
                                                   (2, 3, True), (3, 4, True), (4, 6, True),
                                                   (2, 7, "engines"), (3, 8, "engines")])
def test_vector_copies_equal_single_envs(sid, mode, threads, seed, layout):
    """Copy c of the vector env is a single env seeded seed + c and reset
    without a seed at each episode end, in every autoreset mode; copies end
    at different steps (per-copy max_cycles), so the engine runs them in
    groups of equal step count; in one engine, round by round (the team)
    or in copy groups (``layout`` True), or in groups of
    copies, an engine each, stepped concurrently (``layout`` "engines").
    Each copy has its own value of every per-copy field (its world), as
    its single env has."""
    E, mcs = 3, [2, 4, 3]
    p = {k: v for k, v in small(sid).items() if k != "max_cycles"}
    cfg = SPECS[sid].build_config(p)
    cls = SPECS[sid].copies       # agent counts per copy: tests/envs/test_per_copy.py
    worlds = {f: three_values(cfg, f) for f in cls.per_copy if f not in cls.per_copy_counts}
    v = seer_envs.vector_env(sid, E, num_threads=threads, autoreset_mode=mode, max_cycles=mcs,
                             copy_parallel=layout, **dict(p, **worlds))
    singles = [seer_envs.make(sid, num_threads=1, max_cycles=mcs[c],
                              **dict(p, **{f: vs[c] for f, vs in worlds.items()})) for c in range(E)]
    obs, infos = v.reset(seed=seed)
    want = {"engines": "groups", True: "copy_groups", False: "team",
            None: "team"}[layout]           # None: 3 copies are too few to share out
    assert set(infos) == {"mask", "seer_params"} and infos["mask"].all() and v.layout == want
    assert infos["seer_params"]["max_cycles"].tolist() == mcs
    assert v.thread_choice.layout == v.layout
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c], s.reset_arrays(seed=seed + c))
    rng = np.random.default_rng(seed)
    restarted = ended = 0
    for k in range(11):
        a = _actions(v.single_action_space, (E, v.num_agents), rng)
        obs, rew, term, trunc, infos = v.step(a)
        for c, s in enumerate(singles):
            if mode == "next_step" and not s.agents:       # this step is the copy's reset
                np.testing.assert_array_equal(obs[c], s.reset_arrays())
                assert not (rew[c].any() or term[c].any() or trunc[c].any())
                restarted += 1
                continue
            o, r, t, tr = s.step_arrays(a[c])
            for got, want in ((rew[c], r), (term[c], t), (trunc[c], tr)):
                np.testing.assert_array_equal(got, want, err_msg=f"step {k} copy {c}")
            copy_ended = (bool(infos["_final_obs"][c]) if "_final_obs" in infos
                          else not infos["mask"][c].any())
            assert copy_ended == (not s.agents)
            if not s.agents:
                ended += 1
                np.testing.assert_array_equal(infos["seer_episode"]["r"][c], s._ep_return)
                np.testing.assert_array_equal(infos["seer_episode"]["l"][c], s._ep_length)
                if mode == "same_step":
                    np.testing.assert_array_equal(infos["final_obs"][c], o)
                    o = s.reset_arrays()
            np.testing.assert_array_equal(obs[c], o, err_msg=f"step {k} copy {c}")
        if mode == "disabled" and not infos["mask"].any(axis=1).all():
            mask = ~infos["mask"].any(axis=1)
            with pytest.raises(RuntimeError, match="has ended"):
                v.step(a)
            obs, _ = v.reset(options={"reset_mask": mask})
            for c in np.flatnonzero(mask):
                np.testing.assert_array_equal(obs[c], singles[c].reset_arrays())
                restarted += 1
        np.testing.assert_array_equal(v.cycles, [s._cycle for s in singles])
    assert ended >= 4 and (mode == "same_step" or restarted >= 3)


def test_a_scenario_that_fails_to_import_is_named_not_dropped_silently(tmp_path, monkeypatch):
    from seer_runtime import spec as spec_mod
    pkg = tmp_path / "brokenpkg"
    (pkg / "typo").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "typo" / "__init__.py").write_text("")
    (pkg / "typo" / "spec.py").write_text("import no_such_module_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(spec_mod, "_SEARCH", spec_mod._SEARCH + ["brokenpkg"])
    with pytest.warns(RuntimeWarning, match=r"'brokenpkg\.typo\.spec' failed to import .*no_such_module_here"):
        reg = spec_mod.registry()
    assert "pcs_v0" in reg


def test_a_render_mode_the_env_does_not_declare_is_refused_at_construction():
    """An env whose metadata declares no "human" mode refuses it when built
    (it crashed at reset() before), naming the modes it has."""
    cls = type(seer_envs.make("pcs_v0", num_threads=1))

    class NoHuman(cls):
        metadata = dict(cls.metadata, render_modes=["rgb_array"])
    with pytest.raises(ValueError, match=r"render_mode must be None or one of .*\['rgb_array'\].*'human'"):
        NoHuman(render_mode="human", num_threads=1)
    assert NoHuman(render_mode="rgb_array", num_threads=1).render_mode == "rgb_array"
