# SPDX-License-Identifier: BSD-3-Clause
"""The vector envs keep Gymnasium's conventions: its vector wrappers give the
episode returns and lengths a hand count gives, ``make_vec`` builds every
scenario, the attributes a vector env has are there, seeds and reset masks
work, copies and pickling go through the constructor, and a second thread
gets the true error without costing the first its episode."""

import copy
import pickle
import subprocess
import sys
import threading

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import seer_envs
from seer_envs.views.agent_vector import agent_vector_env
from seer_envs.views.vector import SeerVectorEnv, vector_env

KW = dict(grid_width=3, grid_height=2, dt=30.0, move_interval_mean=20.0, call_interarrival_mean=60.0)
MCS = [2, 3]         # copies end at different steps


def _hand_counts(mode, steps, seed=3):
    """Per row, the (return, length) of every finished episode, counted from
    the raw copy-level env's rewards and step counts."""
    v = vector_env("pcs_v0", 2, num_threads=1, autoreset_mode=mode, max_cycles=MCS, **KW)
    v.reset(seed=seed)
    rng = np.random.default_rng(seed)
    acts = [rng.integers(0, 6, (2, 6)) for _ in range(steps)]
    ret = np.zeros((2, 6))
    length = np.zeros(2, int)
    waiting = np.zeros(2, bool)
    episodes = []               # (step, copy, returns (6,), length)
    for k, a in enumerate(acts):
        _, rew, term, trunc, infos = v.step(a)
        for c in range(2):
            if waiting[c]:              # NEXT_STEP: this step is the copy's reset
                waiting[c] = False
                continue
            ret[c] += rew[c]
            length[c] += 1
            if (term[c] | trunc[c]).all():
                episodes.append((k, c, ret[c].copy(), int(length[c])))
                ret[c], length[c] = 0.0, 0
                waiting[c] = mode == "next_step"
    return acts, episodes


def _supports_same_step(wrapper):
    """Gymnasium's vector wrappers learned SAME_STEP after 1.2 (they read
    ``metadata["autoreset_mode"]``); before, they assume NEXT_STEP."""
    import inspect
    return "SAME_STEP" in inspect.getsource(wrapper.step)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_record_episode_statistics_and_dict_info_to_list(mode):
    from gymnasium.wrappers.vector import DictInfoToList, RecordEpisodeStatistics
    if mode == "same_step" and not _supports_same_step(RecordEpisodeStatistics):
        pytest.skip(f"gymnasium {gymnasium.__version__}'s RecordEpisodeStatistics supports NEXT_STEP only")
    acts, episodes = _hand_counts(mode, 10)
    env = DictInfoToList(RecordEpisodeStatistics(agent_vector_env(
        "pcs_v0", 2, num_threads=2, autoreset_mode=mode, max_cycles=MCS, **KW)))
    env.reset(seed=3)
    seen = []
    for k, a in enumerate(acts):
        _, _, _, _, infos = env.step(a.reshape(12))
        assert isinstance(infos, list) and len(infos) == 12
        for row, info in enumerate(infos):
            if "episode" in info:
                c, i = divmod(row, 6)
                seen.append((k, c, i, info["episode"]["r"], info["episode"]["l"]))
                assert info["seer_episode"]["l"] == info["episode"]["l"]
    want = [(k, c, i, r[i], n) for k, c, r, n in episodes for i in range(6)]
    assert len(seen) == len(want) >= 24
    for (k, c, i, r, n), (k2, c2, i2, r2, n2) in zip(sorted(seen), sorted(want)):
        assert (k, c, i, n) == (k2, c2, i2, n2)
        assert r == pytest.approx(r2, rel=1e-6)


def test_normalize_wrappers_keep_the_episodes():
    from gymnasium.wrappers.vector import NormalizeObservation, NormalizeReward, RecordEpisodeStatistics
    acts, episodes = _hand_counts("next_step", 10)
    env = NormalizeReward(NormalizeObservation(RecordEpisodeStatistics(agent_vector_env(
        "pcs_v0", 2, num_threads=1, max_cycles=MCS, **KW))))
    obs, _ = env.reset(seed=3)
    assert obs.shape == (12, 11)
    lengths = []
    for a in acts:
        obs, rew, term, trunc, infos = env.step(a.reshape(12))
        assert np.isfinite(obs).all() and np.isfinite(rew).all()
        if "episode" in infos:
            lengths += infos["episode"]["l"][infos["_episode"]].tolist()
    assert sorted(lengths) == sorted(n for _, _, _, n in episodes for _ in range(6))


def test_agent_vector_env_attributes_and_errors():
    g = agent_vector_env("pcs_v0", 2, num_threads=1, **KW)
    assert g.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP is g.autoreset_mode
    assert g.num_envs == 12 and not g.closed
    assert g.observation_space.shape == (12, 11) and g.action_space.shape == (12,)
    obs, _ = g.reset(seed=[7] * 6 + [8] * 6)           # one seed per row: a copy takes its first row's
    ref = vector_env("pcs_v0", 2, num_threads=1, **KW)
    np.testing.assert_array_equal(obs, ref.reset(seed=7)[0].reshape(12, 11))
    with pytest.raises(ValueError, match=r"shape \(12,\)"):
        g.step(np.zeros((2, 6), np.int64))
    g.close()
    assert g.closed


def test_copy_level_env_attributes():
    v = vector_env("aircraft_v0", 3, num_threads=1, num_uavs=4, num_targets=2)
    # multi-agent arrays: not a gymnasium VectorEnv, and its wrappers say which env to use
    assert not isinstance(v, gymnasium.vector.VectorEnv)
    with pytest.raises((AssertionError, TypeError), match=r"seer_envs\.agent_vector_env"):
        # (a wrapper refused at construction closes what it was given when collected)
        gymnasium.wrappers.vector.RecordEpisodeStatistics(vector_env("aircraft_v0", 1, num_threads=1))
    assert v.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP and v.num_envs == 3
    assert v.single_observation_space.shape == (25,) and v.single_action_space.shape == (2,)
    assert v.observation_space.shape == (3, 4, 25) and v.action_space.shape == (3, 4, 2)
    obs, _ = v.reset(seed=[4, None, 9])
    assert v.observation_space.contains(obs)
    single = seer_envs.make("aircraft_v0", num_threads=1, num_uavs=4, num_targets=2)
    np.testing.assert_array_equal(obs[0], single.reset_arrays(seed=4))
    assert int(v.seeds_used[0]) == single.seed_used
    v.step(v.action_space.sample())
    assert v.render() is None                         # no render mode
    v.close()
    assert v.closed
    with pytest.raises(RuntimeError, match="closed"):
        v.reset()


def test_seed_lists_and_reset_masks():
    v = vector_env("pcs_v0", 3, num_threads=1, **KW)
    singles = [seer_envs.make("pcs_v0", num_threads=1, **KW) for _ in range(3)]
    obs, _ = v.reset(seed=[5, 11, 2])
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c], s.reset_arrays(seed=[5, 11, 2][c]))
    with pytest.raises(ValueError, match="3 seeds"):
        v.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="reset_mask.*DISABLED"):
        v.reset(options={"reset_mask": np.ones(3, bool)})
    d = vector_env("pcs_v0", 3, num_threads=1, autoreset_mode="disabled", max_cycles=[1, 3, 3], **KW)
    obs0, _ = d.reset(seed=0)
    a = np.zeros((3, 6), np.int64)
    obs1, _, _, trunc, infos = d.step(a)
    assert trunc[0].all() and infos["_seer_episode"].tolist() == [True, False, False]
    with pytest.raises(ValueError, match="bool array of shape"):
        d.reset(options={"reset_mask": [1, 0, 0]})
    # Only copy 0 restarts; the others keep the observation last returned.
    obs2, _ = d.reset(seed=[9, None, None], options={"reset_mask": np.array([True, False, False])})
    np.testing.assert_array_equal(obs2[1:], obs1[1:])
    np.testing.assert_array_equal(obs2[0], seer_envs.make("pcs_v0", num_threads=1, **KW).reset_arrays(seed=9))
    d.step(a)
    np.testing.assert_array_equal(d.cycles, [1, 2, 2])


@pytest.mark.parametrize("sid", sorted(seer_envs.envs()))
def test_make_vec_builds_every_scenario(sid):
    spec = seer_envs.get(sid)
    env = gymnasium.make_vec(f"seer/{sid}", num_envs=3, vectorization_mode="vector_entry_point",
                             num_threads=1, **spec.test_params)
    assert isinstance(env, SeerVectorEnv) and env.num_envs == 3 and env.spec.id == f"seer/{sid}"
    obs, _ = env.reset(seed=0)
    single = seer_envs.make(sid, num_threads=1, **spec.test_params)
    np.testing.assert_array_equal(obs[2], single.reset_arrays(seed=2))
    env.step(env.action_space.sample())
    env.close()


@pytest.mark.parametrize("make", [
    lambda: vector_env("pcs_v0", 2, num_threads=1, **KW),
    lambda: agent_vector_env("pcs_v0", 2, num_threads=1, **KW)], ids=["copies", "agents"])
@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_copies_before_and_right_after_reset_are_exact(make, clone):
    def roundtrip(env):
        return clone(pickle.dumps(env)) if clone is pickle.loads else clone(env)
    a = np.ones(12, np.int64)

    def steps(env):
        acts = a if env.num_envs == 12 else a.reshape(2, 6)
        return [env.step(acts)[0] for _ in range(3)]
    env = make()
    env.reset(seed=4)
    twin = roundtrip(env)                                  # right after reset: the same state
    for x, y in zip(steps(env), steps(twin)):
        np.testing.assert_array_equal(x, y)
    twin = roundtrip(env)                                  # mid-episode: through a snapshot
    for x, y in zip(steps(env), steps(twin)):
        np.testing.assert_array_equal(x, y)
    fresh = make()
    twin = roundtrip(fresh)                                # before reset: the same seed generators
    np.testing.assert_array_equal(fresh.reset()[0], twin.reset()[0])
    fresh.close()
    assert roundtrip(fresh).closed
    with pytest.raises(TypeError, match="share the running engine"):
        copy.copy(env)


def test_deepcopy_and_exit_print_nothing():
    code = ("import copy, numpy as np, seer_envs\n"
            "from seer_envs.views.agent_vector import agent_vector_env\n"
            "g = agent_vector_env('pcs_v0', 2, num_threads=1, grid_width=2, grid_height=2)\n"
            "h = copy.deepcopy(g); h.reset(seed=0); h.step(np.zeros(8, np.int64))\n"
            "v = seer_envs.vector_env('gossip_v0', 2, num_threads=1); copy.deepcopy(v)\n"
            "del g, h, v\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "" and r.stdout == "", r.stderr


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", ["single", "vector"])
def test_a_second_thread_gets_the_true_error_and_changes_nothing(kind, threads):
    """While one thread is inside a step, a step or reset from another is
    refused with "in use by another thread"; the first thread's episode
    then equals a run without the misuse."""
    kw = dict(grid_width=8, grid_height=8, power_control_iters=3000)       # steps of ~0.1 s
    if kind == "single":
        env, twin = (seer_envs.make("pcs_v0", num_threads=t, **kw) for t in (threads, 1))
        a = np.ones(64, np.int64)
        reset, step = (lambda e: e.reset_arrays(seed=2)), (lambda e: e.step_arrays(a)[:2])
    else:
        env, twin = (vector_env("pcs_v0", 2, num_threads=t, **kw) for t in (threads, 1))
        a = np.ones((2, 64), np.int64)
        reset, step = (lambda e: e.reset(seed=2)[0]), (lambda e: e.step(a)[:2])
    reset(env)
    reset(twin)
    got, errors = [], []
    for _ in range(3):
        worker = threading.Thread(target=lambda: got.append(step(env)))
        worker.start()
        while worker.is_alive() and not env._batch._lock.locked():
            pass
        for call in (lambda: step(env), lambda: reset(env)):
            if env._batch._lock.locked():          # the worker is inside its step
                with pytest.raises(RuntimeError, match="in use by another thread") as e:
                    call()
                errors.append(e)
        worker.join()
    assert errors, "the misuse never overlapped a step"
    got.append(step(env))
    for g, w in zip(got, [step(twin) for _ in range(4)]):
        for x, y in zip(g, w):
            np.testing.assert_array_equal(x, y)
