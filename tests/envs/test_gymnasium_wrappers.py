# SPDX-License-Identifier: BSD-3-Clause
"""Gymnasium, all the way: every wrapper of ``gymnasium.wrappers.vector``
works on the agent-level env as its documentation says (outputs checked
against the unwrapped env stepped alike) or is refused at wrapping time; on
the multi-agent vector env every one is refused at wrapping time, naming
``seer_envs.agent_vector_env``.  ``render`` gives each row its copy's
frame (``RecordVideo`` and ``NumpyToTorch``, which need optional packages,
are tested in tests/integrations/test_gymnasium_extras.py);
``get_attr`` / ``set_attr`` / ``call`` follow ``SyncVectorEnv``;
``gymnasium.make`` names the calls that work; ``RecordEpisodeStatistics``
counts agents that stop early as a hand count does (docs/gymnasium.md)."""

import copy
import os
import pickle

import gymnasium
import gymnasium.wrappers.vector as W
import numpy as np
import pytest
from gymnasium import spaces

import seer_envs
from seer_envs.views.agent_vector import agent_vector_env
from seer_envs.views.vector import vector_env

PCS = dict(grid_width=2, grid_height=2, max_cycles=4)
AIR = dict(num_uavs=4, num_targets=2, max_cycles=4)
STEPS = 6                       # past one episode end: autoreset inside
USE_AGENT_ENV = "seer_envs.agent_vector_env"


def _agent(env_id="pcs_v0", **kw):
    return agent_vector_env(env_id, 2, num_threads=1, **(PCS if env_id == "pcs_v0" else AIR), **kw)


def _actions(env, steps=STEPS, seed=0):
    space = env.action_space
    space.seed(seed)
    return [space.sample() for _ in range(steps)]


def _run(env, actions, seed=0):
    """Reset and step ``env``; returns the list of ``(obs, rew, term, trunc, infos)``
    (the reset's ``obs, infos`` first, as a 5-tuple with Nones)."""
    obs, infos = env.reset(seed=seed)
    out = [(obs, None, None, None, infos)]
    for a in actions:
        out.append(env.step(a))
    return out


def _twin_check(make_wrapped, check, env_id="pcs_v0", actions=None, raw_actions=None):
    """Step a wrapped env and the plain env with the same seed; ``check(k,
    wrapped_out, plain_out, wrapper)`` at every step ``k`` (0 the reset)."""
    wrapper, plain = make_wrapped(_agent(env_id)), _agent(env_id)
    acts = actions if actions is not None else _actions(plain)
    raw = raw_actions if raw_actions is not None else acts
    try:
        obs, infos = wrapper.reset(seed=0)
        pobs, pinfos = plain.reset(seed=0)
        check(0, (obs, None, None, None, infos), (pobs, None, None, None, pinfos), wrapper)
        for k, (a, b) in enumerate(zip(acts, raw), 1):
            check(k, wrapper.step(a), plain.step(b), wrapper)
    finally:
        wrapper.close()
        plain.close()


def _same_flags(w, p):
    if w[1] is not None:
        for x, y in zip(w[2:4], p[2:4]):
            np.testing.assert_array_equal(x, y)


def _doubled_box(space):
    return spaces.Box(space.low * 2, space.high * 2, space.shape, space.dtype)


# --- each wrapper on the agent-level env -----------------------------------------------

def _obs_transform(fn):
    def check(k, w, p, _):
        np.testing.assert_allclose(w[0], fn(p[0]))
        if k:
            np.testing.assert_array_equal(w[1], p[1])
            _same_flags(w, p)
    return check


def _reward_transform(fn):
    def check(k, w, p, _):
        np.testing.assert_array_equal(w[0], p[0])
        if k:
            np.testing.assert_allclose(w[1], fn(p[1]))
            _same_flags(w, p)
    return check


def _identical(k, w, p, _):
    np.testing.assert_array_equal(w[0], p[0])
    if k:
        np.testing.assert_array_equal(w[1], p[1])
        _same_flags(w, p)


def test_vectorize_transform_observation():
    _twin_check(lambda e: W.VectorizeTransformObservation(
        e, wrapper=gymnasium.wrappers.TransformObservation, func=lambda o: o * 2,
        observation_space=_doubled_box(e.single_observation_space)), _obs_transform(lambda o: o * 2))


def test_vectorize_transform_action():
    # the wrapped env takes actions shifted by one; the plain env the actions they map to
    plain = _actions(_agent())
    shifted = [(a + 1) % 6 for a in plain]
    _twin_check(lambda e: W.VectorizeTransformAction(
        e, wrapper=gymnasium.wrappers.TransformAction, func=lambda a: (a - 1) % 6,
        action_space=e.single_action_space), _identical, actions=shifted, raw_actions=plain)


def test_vectorize_transform_reward():
    _twin_check(lambda e: W.VectorizeTransformReward(
        e, wrapper=gymnasium.wrappers.TransformReward, func=lambda r: 2 * r),
        _reward_transform(lambda r: 2 * r))


def test_transform_observation_and_reward():
    _twin_check(lambda e: W.TransformObservation(e, lambda o: o + 1), _obs_transform(lambda o: o + 1))
    _twin_check(lambda e: W.TransformReward(e, lambda r: r - 1), _reward_transform(lambda r: r - 1))


def test_flatten_reshape_dtype_observation():
    _twin_check(W.FlattenObservation, _obs_transform(lambda o: o))
    _twin_check(lambda e: W.DtypeObservation(e, np.float64), _obs_transform(lambda o: o.astype(np.float64)))

    def check(k, w, p, _):
        assert w[0].shape == p[0].shape + (1,)
        np.testing.assert_array_equal(w[0][..., 0], p[0])
    _twin_check(lambda e: W.ReshapeObservation(e, e.single_observation_space.shape + (1,)), check)


def test_rescale_observation_of_the_finite_bounds():
    """SEER's observation boxes have infinite bounds somewhere: Gymnasium
    refuses to rescale those (at wrapping time) and rescales the finite ones."""
    env = _agent("aircraft_v0")
    box = env.single_observation_space
    with pytest.raises(GYM_REFUSAL):
        W.RescaleObservation(env, -1.0, 1.0)
    env.close()
    lo, hi = np.where(np.isinf(box.low), box.low, -1.0), np.where(np.isinf(box.high), box.high, 1.0)
    finite = np.isfinite(box.low) & np.isfinite(box.high)
    assert finite.any() and not finite.all()

    def check(k, w, p, _):
        want = (p[0] - box.low) / (box.high - box.low) * 2 - 1
        np.testing.assert_allclose(w[0][:, finite], want[:, finite], atol=1e-6)
    _twin_check(lambda e: W.RescaleObservation(e, lo.astype(np.float32), hi.astype(np.float32)), check,
                env_id="aircraft_v0")


def test_normalize_observation():
    seen = []

    def check(k, w, p, wrapper):
        _same_flags(w, p)
        seen.append(p[0])
        rms = wrapper.obs_rms
        np.testing.assert_allclose(rms.mean, np.concatenate(seen).mean(axis=0), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(w[0], (p[0] - rms.mean) / np.sqrt(rms.var + wrapper.epsilon),
                                   rtol=1e-5, atol=1e-5)
    _twin_check(W.NormalizeObservation, check)


def test_normalize_reward():
    def check(k, w, p, wrapper):
        if k:
            _same_flags(w, p)
            np.testing.assert_allclose(w[1], p[1] / np.sqrt(wrapper.return_rms.var + wrapper.epsilon),
                                       rtol=1e-6)
    _twin_check(W.NormalizeReward, check)


def test_clip_reward():
    _twin_check(lambda e: W.ClipReward(e, -0.05, 0.05), _reward_transform(lambda r: np.clip(r, -0.05, 0.05)))


def test_actions_transform_clip_rescale_on_a_box():
    """Aircraft's actions are a Box in [-1, 1]: ClipAction clips, RescaleAction maps [0, 2] onto it."""
    env = _agent("aircraft_v0")
    acts = [np.asarray(a) * 3 for a in _actions(env)]         # out of the box
    env.close()
    _twin_check(W.ClipAction, _identical, "aircraft_v0", actions=acts,
                raw_actions=[np.clip(a, -1, 1) for a in acts])
    inside = [np.clip(a, 0, 2) for a in acts]
    _twin_check(lambda e: W.RescaleAction(e, np.float32(0.0), np.float32(2.0)), _identical, "aircraft_v0",
                actions=inside, raw_actions=[a - 1 for a in inside])
    _twin_check(lambda e: W.TransformAction(e, lambda a: -a), _identical, "aircraft_v0",
                actions=[np.clip(a, -1, 1) for a in acts], raw_actions=[-np.clip(a, -1, 1) for a in acts])


def test_dict_info_to_list():
    def check(k, w, p, _):
        infos, pinfos = w[4], p[4]
        assert isinstance(infos, list) and len(infos) == len(p[0])
        for i, row in enumerate(infos):
            assert row["mask"] == pinfos["mask"][i]
            if "_seer_episode" in pinfos and pinfos["_seer_episode"][i]:
                assert row["seer_episode"] == {"r": pinfos["seer_episode"]["r"][i],
                                               "l": pinfos["seer_episode"]["l"][i]}
            else:
                assert "seer_episode" not in row
    _twin_check(W.DictInfoToList, check)


def test_record_episode_statistics_counts_each_row():
    env = W.RecordEpisodeStatistics(_agent())
    out = _run(env, _actions(env.unwrapped, PCS["max_cycles"]))
    infos = out[-1][4]
    rewards = np.sum([o[1] for o in out[1:]], axis=0)
    assert infos["_episode"].all()
    np.testing.assert_allclose(infos["episode"]["r"], rewards, rtol=1e-6)
    np.testing.assert_array_equal(infos["episode"]["l"], PCS["max_cycles"])
    np.testing.assert_allclose(infos["episode"]["r"], infos["seer_episode"]["r"], rtol=1e-6)
    env.close()


def test_human_rendering_tiles_the_rows(monkeypatch):
    pytest.importorskip("pygame")
    pytest.importorskip("cv2")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")           # no display needed
    env = W.HumanRendering(_agent(render_mode="rgb_array"))
    _run(env, _actions(env.unwrapped, 2))
    assert env.window is not None and (env.num_rows, env.num_cols) != (None, None)
    env.close()


@pytest.mark.parametrize("name", ["JaxToNumpy", "JaxToTorch"])
def test_jax_wrappers_pass_numpy_through(name):
    """Wrappers for Jax envs; on SEER's NumPy arrays they run: JaxToNumpy
    hands them on, JaxToTorch as tensors (docs/gymnasium.md)."""
    pytest.importorskip("jax")
    to = pytest.importorskip("torch").as_tensor if name == "JaxToTorch" else np.asarray
    acts = _actions(_agent())

    def check(k, w, p, _):
        for x, y in zip(w[:4], p[:4]):
            if y is not None:
                assert type(x) is type(to(y))
                np.testing.assert_array_equal(np.asarray(x), y)
    _twin_check(getattr(W, name), check, actions=[to(a) for a in acts], raw_actions=acts)


#: What a wrapper raises when it refuses: Gymnasium 1.2 asserts, later versions raise
#: TypeError or ValueError (the CI's two steps install different versions).
GYM_REFUSAL = (AssertionError, TypeError, ValueError)


#: Wrappers Gymnasium refuses at wrapping time on the agent-level env, and why.
REFUSED = {
    "FilterObservation": (GYM_REFUSAL, dict(filter_keys=[0]), "Dict/Tuple observations"),
    "GrayscaleObservation": (GYM_REFUSAL, {}, "image observations"),
    "ResizeObservation": (GYM_REFUSAL, dict(shape=(2, 2)), "image observations"),
    "RecordVideo": (GYM_REFUSAL, dict(video_folder="unused"), "render_mode None"),
    "HumanRendering": (GYM_REFUSAL, {}, "render_mode None"),
}
#: Discrete-action scenarios (PCS): the Box action wrappers refuse at wrapping time.
REFUSED_DISCRETE = {"ClipAction": {}, "RescaleAction": dict(min_action=0.0, max_action=1.0)}


# Gymnasium's RecordVideo and HumanRendering close themselves in __del__ even when their
# __init__ refused: the AttributeError it raises there is Gymnasium's, not a failure here.
_HALF_BUILT = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@_HALF_BUILT
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_at_wrapping_time(name):
    exc, kwargs, _why = REFUSED[name]
    env = _agent()
    with pytest.raises(exc):
        getattr(W, name)(env, **kwargs)
    env.close()


@pytest.mark.parametrize("name", sorted(REFUSED_DISCRETE))
def test_box_action_wrappers_refuse_discrete_actions(name):
    env = _agent()
    with pytest.raises(GYM_REFUSAL):
        getattr(W, name)(env, **REFUSED_DISCRETE[name])
    env.close()


#: The tests above, per wrapper: every name Gymnasium exports is covered.
COVERED = {
    "VectorizeTransformObservation", "VectorizeTransformAction", "VectorizeTransformReward",
    "DictInfoToList", "TransformObservation", "FlattenObservation", "ReshapeObservation",
    "RescaleObservation", "DtypeObservation", "NormalizeObservation", "TransformAction", "ClipAction",
    "RescaleAction", "TransformReward", "ClipReward", "NormalizeReward", "RecordEpisodeStatistics",
    "RecordVideo", "HumanRendering", "ArrayConversion", "JaxToNumpy", "JaxToTorch", "NumpyToTorch",
} | set(REFUSED)


@pytest.mark.parametrize("name", W.__all__)
def test_every_vector_wrapper_is_covered_on_the_agent_env(name):
    """A wrapper a later Gymnasium adds: it works for a few steps on the
    agent-level env with its defaults, or refuses at wrapping time."""
    if name in COVERED:
        return
    try:
        cls = getattr(W, name)
    except ImportError as e:
        pytest.skip(f"{name}: {e}")
    env = _agent()
    try:
        wrapped = cls(env)
    except Exception:               # refused at wrapping time
        env.close()
        return
    _run(wrapped, _actions(env, 2))
    wrapped.close()


# --- every wrapper on the multi-agent env: refused at wrapping time ---------------------

_ARGS = {
    "VectorizeTransformObservation": dict(wrapper=gymnasium.wrappers.TransformObservation, func=lambda o: o),
    "VectorizeTransformAction": dict(wrapper=gymnasium.wrappers.TransformAction, func=lambda a: a),
    "VectorizeTransformReward": dict(wrapper=gymnasium.wrappers.TransformReward, func=lambda r: r),
    "TransformObservation": dict(func=lambda o: o), "TransformAction": dict(func=lambda a: a),
    "TransformReward": dict(func=lambda r: r), "FilterObservation": dict(filter_keys=[0]),
    "ResizeObservation": dict(shape=(2, 2)), "ReshapeObservation": dict(shape=(11, 1)),
    "RescaleObservation": dict(min_obs=-1.0, max_obs=1.0), "DtypeObservation": dict(dtype=np.float64),
    "RescaleAction": dict(min_action=0.0, max_action=1.0), "RecordVideo": dict(video_folder="unused"),
    "ArrayConversion": dict(env_xp=np, target_xp=np),
}


@_HALF_BUILT
@pytest.mark.parametrize("name", W.__all__)
def test_multi_agent_env_refused_naming_the_agent_env(name):
    try:
        cls = getattr(W, name)
    except ImportError as e:
        pytest.skip(f"{name}: {e}")
    env = vector_env("pcs_v0", 2, num_threads=1, render_mode="rgb_array", **PCS)
    try:
        with pytest.raises((AssertionError, TypeError), match=USE_AGENT_ENV.replace(".", r"\.")):
            cls(env, **_ARGS.get(name, {}))
    except TypeError as e:          # a wrapper of a later Gymnasium, with arguments unknown here
        if name in COVERED:
            raise
        pytest.skip(f"{name} needs arguments this test does not give: {e}")
    finally:
        env.close()


# --- RecordVideo -------------------------------------------------------------------------

def test_render_gives_each_row_its_copys_frame():
    env = _agent(render_mode="rgb_array")
    env.reset(seed=0)
    rows = env.render()
    copies = env.vec.render()
    A = env.agents_per_copy
    assert isinstance(rows, tuple) and len(rows) == env.num_envs
    for r, f in enumerate(rows):
        assert f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3
        np.testing.assert_array_equal(f, copies[r // A])
    assert env.metadata["render_fps"] == seer_envs.get("pcs_v0").env.metadata["render_fps"]
    env.close()
    plain = _agent()
    plain.reset(seed=0)
    assert plain.render() is None
    plain.close()


# --- get_attr / set_attr / call ----------------------------------------------------------

@pytest.mark.parametrize("level", ["copies", "agents"])
def test_get_attr_set_attr_call(level):
    agent = _agent(render_mode="rgb_array")
    env = agent.vec if level == "copies" else agent
    k = 1 if level == "copies" else agent.agents_per_copy
    N = 2 * k
    assert env.get_attr("grid_width") == (PCS["grid_width"],) * N
    assert env.get_attr("max_cycles") == (PCS["max_cycles"],) * N
    assert env.get_attr("env_id") == ("pcs_v0",) * N
    assert env.call("max_cycles") == env.get_attr("max_cycles")        # a value, as SyncVectorEnv
    env.set_attr("max_cycles", [2] * k + [3] * k)
    assert env.get_attr("max_cycles") == (2,) * k + (3,) * k
    np.testing.assert_array_equal(agent.vec.max_cycles, [2, 3])
    obs, _ = env.reset(seed=0)
    a = np.zeros(env.action_space.shape, env.action_space.dtype)
    truncs = [env.step(a)[3].reshape(2, -1).all(axis=1) for _ in range(3)]
    np.testing.assert_array_equal(truncs, [[False, False], [True, False], [False, True]])
    assert env.get_attr("cycles") == (0,) * k + (3,) * k            # copy 0 waits for its restart
    frames = env.call("render")
    copies = agent.vec.render()
    assert len(frames) == N
    for i, f in enumerate(frames):
        assert f is frames[i - i % k]                    # a copy's rows share its frame
        np.testing.assert_array_equal(f, copies[i // k])
    states = env.call("state")
    assert len(states) == N
    for i, st in enumerate(states):
        np.testing.assert_array_equal(st, agent.vec.state()[i // k])
    env.set_attr("max_cycles", 5)
    assert env.get_attr("max_cycles") == (5,) * N
    env.set_attr("max_cycles", np.array([4] * k + [6] * k))       # a 1-d array: one value per sub-env
    assert copy.deepcopy(env).get_attr("max_cycles") == (4,) * k + (6,) * k    # copies keep them
    assert pickle.loads(pickle.dumps(env)).get_attr("max_cycles") == (4,) * k + (6,) * k
    agent.close()


def test_max_cycles_set_mid_episode_truncates_at_the_next_step():
    env = vector_env("pcs_v0", 2, num_threads=1, **dict(PCS, max_cycles=10))
    env.reset(seed=0)
    a = np.zeros((2, env.num_agents), np.int64)
    for _ in range(3):
        env.step(a)
    env.set_attr("max_cycles", [2, 6])           # copy 0 is past it: it truncates at its next step
    ends = [env.step(a)[3].all(axis=1).tolist() for _ in range(3)]
    assert ends == [[True, False], [False, False], [False, True]]    # step 5: copy 0's reset step
    assert env.get_attr("cycles") == (1, 6)
    env.close()


def test_attribute_errors_name_what_is_allowed():
    agent = _agent()
    for env, n in ((agent.vec, 2), (agent, agent.num_envs)):
        with pytest.raises(AttributeError,
                           match="'nope'.*get_attr reads.*grid_width.*set_attr sets max_cycles"):
            env.get_attr("nope")
        with pytest.raises(AttributeError, match="'nope'"):
            env.call("nope")
        with pytest.raises(AttributeError, match="'nope'"):
            env.set_attr("nope", 1)
        with pytest.raises(ValueError, match="'grid_width' is a config field.*set_attr can set 'max_cycles'"):
            env.set_attr("grid_width", 3)
        with pytest.raises(ValueError, match="'cycles' is read-only"):
            env.set_attr("cycles", 3)
        with pytest.raises(ValueError, match=f"one value or {n}"):
            env.set_attr("max_cycles", [3] * (n + 1))
        with pytest.raises(ValueError, match="copy 0.*>= 1"):
            env.set_attr("max_cycles", 0)
        with pytest.raises(ValueError, match="copy 1.*int"):
            env.set_attr("max_cycles", [3] * (n // 2) + [2.5] * (n // 2))
        with pytest.raises(AttributeError, match="use call"):
            env.get_attr("render")
        with pytest.raises(TypeError, match="takes no arguments"):
            env.call("render", 1)
    with pytest.raises(ValueError, match="rows of copy 1.*different"):
        agent.set_attr("max_cycles", [3] * (agent.num_envs - 1) + [4])
    assert agent.get_attr("max_cycles") == (PCS["max_cycles"],) * agent.num_envs       # unchanged
    agent.close()


# --- gymnasium.make --------------------------------------------------------------------

@pytest.mark.parametrize("call", ["make", "sync", "async"])
def test_gymnasium_make_names_the_calls_that_work(call):
    with pytest.raises(ValueError) as e:
        if call == "make":
            gymnasium.make("seer/pcs_v0")
        else:
            gymnasium.make_vec("seer/pcs_v0", num_envs=2, vectorization_mode=call)
    msg = str(e.value)
    assert "multi-agent" in msg
    for works in ('seer_envs.make("pcs_v0")', 'gymnasium.make_vec("seer/pcs_v0", num_envs=N)',
                  'seer_envs.agent_vector_env("pcs_v0", N)'):
        assert works in msg, msg
    env = gymnasium.make_vec("seer/pcs_v0", num_envs=2, num_threads=1, **PCS)     # the call that works
    assert env.num_envs == 2
    env.close()


# --- RecordEpisodeStatistics with agents that stop early ---------------------------------

def test_record_episode_statistics_with_uavs_that_stop_early():
    """Aircraft, 4 UAVs, battery 20, max_cycles 30: UAVs 0 and 1 stop at 15,
    UAV 2 at 21, UAV 3 is truncated at 30.  Each agent's recorded episode is
    SEER's ``seer_episode`` and a hand count; each stopped agent's row then
    records its placeholder (return 0, from the step after its stop's reset
    step to its copy's end: 30 - stop - 1 steps)."""
    env = W.RecordEpisodeStatistics(agent_vector_env("aircraft_v0", 1, num_threads=1, num_uavs=4,
                                                     battery_capacity=20, max_cycles=30))
    act = np.array([[1, 0], [0, 1], [.5, 0], [0, 0]], np.float32)
    env.reset(seed=0)
    rewards, recorded, seer = [], {}, {}
    for t in range(1, 31):
        _, rew, term, trunc, infos = env.step(act)
        rewards.append(rew)
        for i in np.flatnonzero(infos.get("_episode", [])):
            recorded.setdefault(int(i), []).append(
                (t, float(infos["episode"]["r"][i]), int(infos["episode"]["l"][i]), bool(infos["mask"][i])))
        for i in np.flatnonzero(infos.get("_seer_episode", [])):
            seer[int(i)] = (t, float(infos["seer_episode"]["r"][i]), int(infos["seer_episode"]["l"][i]))
    rewards = np.array(rewards, np.float64)
    stops = {0: 15, 1: 15, 2: 21, 3: 30}
    for i, stop in stops.items():
        hand = rewards[:stop, i].sum()
        t, r, length, _ = recorded[i][0]
        assert (t, length) == (stop, stop)
        assert r == pytest.approx(hand, rel=1e-6)
        assert seer[i] == (stop, pytest.approx(hand, rel=1e-6), stop)
        np.testing.assert_array_equal(rewards[stop:, i], 0.0)         # the placeholder's rewards
        if stop < 30:
            assert recorded[i][1] == (30, 0.0, 30 - stop - 1, False)   # the placeholder, to the copy's end
        assert len(recorded[i]) == (2 if stop < 30 else 1)
    env.close()


def test_attributes_wait_for_copies_in_flight():
    env = vector_env("pcs_v0", 2, num_threads=1, **PCS)
    env.reset(seed=0)
    env.send(np.zeros((2, env.num_agents), np.int64))
    for attempt in (lambda: env.set_attr("max_cycles", 3), lambda: env.get_attr("cycles")):
        with pytest.raises(RuntimeError, match="in flight"):
            attempt()
    assert env.get_attr("grid_width") == (2, 2)           # the config is not in motion
    env.recv()
    env.set_attr("max_cycles", 3)
    assert env.get_attr("cycles") == (1, 1) and env.get_attr("max_cycles") == (3, 3)
    env.close()


@pytest.mark.parametrize("level", ["copies", "agents"])
def test_get_attr_of_a_per_copy_field_gives_each_copys_value(level):
    """A per-copy field's value differs between copies (a list, a sampler's
    draw, set_params): get_attr gives each copy's, not the base config's."""
    make = vector_env if level == "copies" else agent_vector_env
    env = make("pcs_v0", 3, num_threads=1, grid_width=2, grid_height=2,
               call_interarrival_mean=[100.0, 200.0, 300.0], param_sampler={"hotspot_amplitude": (0.0, 6.0)})
    try:
        k = 1 if level == "copies" else env.agents_per_copy
        vec = env if level == "copies" else env.vec
        env.reset(seed=0)
        assert env.get_attr("call_interarrival_mean") == tuple(v for v in (100.0, 200.0, 300.0) for _ in range(k))
        drawn = env.get_attr("hotspot_amplitude")[::k]
        assert drawn == tuple(vec.params["hotspot_amplitude"].tolist()) and len(set(drawn)) == 3
        assert all(0.0 <= a <= 6.0 for a in drawn)
        assert env.get_attr("power_control_iters") == (0,) * 3 * k        # the same in every copy, an int
        assert type(env.get_attr("power_control_iters")[0]) is int
        assert env.get_attr("grid_width") == (2,) * 3 * k                  # not per copy: the config's
        vec.set_param_sampler(None)
        vec.set_params(copies=[1], call_interarrival_mean=150.0)
        env.reset(seed=1)
        assert env.get_attr("call_interarrival_mean")[::k] == (100.0, 150.0, 300.0)
    finally:
        env.close()
