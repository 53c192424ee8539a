# SPDX-License-Identifier: BSD-3-Clause
"""SEER envs inside SuperSuit, RLlib and the CleanRL-style examples."""

import glob
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import seer_envs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
# every registered env, at its spec's small test parameters
SMALL = {name: dict(spec.test_params, max_cycles=10) for name, spec in seer_envs.envs().items()}
ENVS = list(SMALL)


@pytest.mark.parametrize("name", ENVS)
def test_supersuit_vector_pipeline(name):
    ss = pytest.importorskip("supersuit", reason="SuperSuit is not installed (pip install -e '.[train]')")
    env = seer_envs.make(name, num_threads=1, **SMALL[name])
    n_agents = len(env.possible_agents)
    vec = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), 2, num_cpus=0,
                                base_class="gymnasium")
    obs, _ = vec.reset(seed=0)
    assert obs.shape[0] == 2 * n_agents
    for _ in range(25):      # crosses max_cycles: SuperSuit auto-resets
        acts = np.stack([vec.action_space.sample() for _ in range(vec.num_envs)])
        obs, rew, term, trunc, _ = vec.step(acts)
        assert obs.shape[0] == rew.shape[0] == 2 * n_agents
        assert np.isfinite(obs).all() and np.isfinite(rew).all()


def _rllib():
    pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install -e '.[rllib]')")
    pytest.importorskip("torch", reason="torch is not installed")
    from seer_envs.integrations import rllib
    return rllib


def test_rllib_wrapper_seeds_and_renders():
    rllib = _rllib()
    a = rllib.SeerRLlibEnv("pcs_v0", dict(SMALL["pcs_v0"], seed=5, render_mode="rgb_array", num_threads=1))
    b = rllib.SeerRLlibEnv("pcs_v0", dict(SMALL["pcs_v0"], seed=5, num_threads=1))
    acts = {ag: 1 for ag in a.par_env.agents}
    oa = a.step(acts)[0]
    ob = b.step(acts)[0]
    assert all(np.array_equal(oa[k], ob[k]) for k in oa)     # the constructor reset was seeded
    img = a.render()
    assert img.dtype == np.uint8 and img.ndim == 3
    o1, _ = a.reset(seed=11)
    o2, _ = b.reset(seed=11)
    assert all(np.array_equal(o1[k], o2[k]) for k in o1)


def test_rllib_caps_threads_at_the_runner_cpus(monkeypatch):
    rllib = _rllib()
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    env = rllib.SeerRLlibEnv("pcs_v0", dict(SMALL["pcs_v0"], num_threads=4))
    assert env.par_env.num_threads == 1
    env = rllib.SeerRLlibEnv("pcs_v0", dict(SMALL["pcs_v0"]))          # "auto": STPA honours it
    assert env.par_env.num_threads == 1


@pytest.mark.parametrize("args, env_cls", [
    (["--grid", "4", "--batch", "400"], "SyncVectorMultiAgentEnv"),
    (["--env", "aircraft_v0", "--num-uavs", "4", "--max-cycles", "20", "--batch", "160", "--vector-runner",
      "--num-envs", "2"], "SeerVectorMultiAgentEnv"),
])
@pytest.mark.heavy
def test_rllib_ppo_example_one_iteration(args, env_cls):
    _rllib()
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "rllib_ppo.py"), "--iters", "1"] + args,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"({env_cls})" in r.stdout
    assert "iteration   1: mean episode return" in r.stdout


@pytest.mark.heavy
def test_rllib_tune_save_restore_example(tmp_path):
    """Tune one iteration on a 2x2 PCS grid, restore its checkpoint, train
    one iteration (the weights move), save, restore the trial's checkpoint
    and then the save: the learner's weights come back bit for bit each time
    (the example exits 1 if not).  Ray's own start-up (its processes, the
    trial's actor importing torch and RLlib) is most of its time."""
    _rllib()
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "rllib_tune_checkpoint.py"), "--iters", "1",
                        "--grid", "2", "--max-cycles", "10", "--batch", "40", "--dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tune: 1 iterations" in r.stdout
    assert "one more iteration moved the weights" in r.stdout
    assert "weights equal to the tuned ones; restored the save: equal to the saved ones" in r.stdout
    assert os.path.isdir(tmp_path / "continued")


@pytest.mark.parametrize("script, args", [
    ("cleanrl_ippo_pcs.py", ["--updates", "2", "--num-envs", "1", "--eval-seeds", "1"]),
    ("cleanrl_ippo_pcs.py", ["--updates", "2", "--num-envs", "2", "--eval-seeds", "1", "--async", "--overlap"]),
    ("cleanrl_ppo_aircraft.py", ["--updates", "2", "--num-envs", "2", "--num-uavs", "8", "--episode", "20",
                                 "--eval-seeds", "1"]),
    ("cleanrl_ppo_aircraft.py", ["--updates", "2", "--num-envs", "2", "--num-uavs", "8", "--episode", "20",
                                 "--eval-seeds", "1", "--async", "--overlap"]),
])
@pytest.mark.heavy
def test_cleanrl_examples_run(script, args):
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    path = os.path.join(ROOT, "examples", script)
    if not os.path.exists(path):
        pytest.fail(f"missing example {script}")
    if "aircraft" in script and "aircraft_v0" not in seer_envs.registry():
        pytest.fail("aircraft_v0 is not registered")
    r = subprocess.run([sys.executable, path] + args, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "held-out evaluation" in r.stdout


def test_rllib_episode_ends_when_uavs_terminate_on_the_last_step():
    """Issue 15's reproducer: odd UAVs burn their battery and terminate at the
    last step while the rest are truncated; RLlib needs one __all__ True."""
    rllib = _rllib()
    if "aircraft_v0" not in seer_envs.registry():
        pytest.fail("aircraft_v0 is not registered")
    env = rllib.SeerRLlibEnv("aircraft_v0", dict(num_uavs=16, battery_capacity=40.0, thrust_power=1.0,
                                                 num_threads=1, max_cycles=5))
    env.reset(seed=1)
    for k in range(5):
        acts = {a: np.array([0.7, 0.7] if int(a.split("_")[-1]) % 2 else [0.0, 0.0], np.float32)
                for a in env.par_env.agents}
        _, _, term, trunc, _ = env.step(acts)
        if k < 4:
            assert not term["__all__"] and not trunc["__all__"]
    agents_term = {a for a, v in term.items() if a != "__all__" and v}
    assert agents_term and len(agents_term) < 16          # the mixed ending the reproducer makes
    assert not env.par_env.agents
    assert trunc["__all__"] and not term["__all__"]
    env.reset(seed=2)                                      # and the next episode starts
    assert len(env.par_env.agents) == 16


@pytest.mark.heavy
def test_rllib_sub_envs_of_one_runner_get_different_seeds():
    rllib = _rllib()
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    rllib.register()
    rllib._BUILT.clear()        # the process's earlier builds (other tests) would shift the offsets
    cfg = (PPOConfig().environment("seer/pcs_v0", env_config=dict(SMALL["pcs_v0"], num_threads=1, seed=7))
           .multi_agent(policies={"shared"}, policy_mapping_fn=lambda a, *x, **k: "shared")
           .env_runners(num_env_runners=0, num_envs_per_env_runner=2))
    runner = MultiAgentEnvRunner(config=cfg)
    envs = [e.unwrapped for e in runner.env.envs]
    assert [e._seed for e in envs] == [7, 8]
    trajs = []
    for e in envs:                      # RLlib resets with seed=None without .debugging(seed=...)
        e.reset(seed=None)
        obs = [e.step({a: 1 for a in e.par_env.agents})[0] for _ in range(5)]
        trajs.append(np.stack([np.concatenate([o[a] for a in sorted(o)]) for o in obs]))
    assert not np.array_equal(trajs[0], trajs[1])
    runner.stop()


def _load_example(script):
    """An example as a module (a fresh one: the tests patch its globals)."""
    import importlib.util

    from seer_bench.examples import FOLDER, _siblings, load
    for sibling in _siblings(os.path.join(FOLDER, script), FOLDER):   # e.g. the MAPPO example's IPPO one
        load(sibling)
    spec = importlib.util.spec_from_file_location(script[:-3], os.path.join(ROOT, "examples", script))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _reset_singles(envs, seed):
    """The reference loop's batch: single envs reset with seeds seed + i."""
    return np.concatenate([e.reset_arrays(seed=seed + i) for i, e in enumerate(envs)])


def _act(torch, agent, obs, *inputs):
    """The examples' policy on one batch of observations (and the critic's
    other ``inputs``, e.g. the PCS critic's time input), without gradients."""
    x = torch.from_numpy(obs)
    with torch.no_grad():
        act, logp, _, val = agent.act(x, *inputs)
    return x, act, logp, val


@pytest.mark.parametrize("threads", [1, 2])
def test_cleanrl_pcs_rollout_equals_a_loop_of_single_envs(threads):
    """The PCS example's vector-env rollout gives the batch a loop over single
    envs (seeds seed + i, the same policy draws) gives, bit for bit."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    ex = _load_example("cleanrl_ippo_pcs.py")
    import seer_envs
    E, seed = 3, 17
    kw = dict(ex.ENV_KW, grid_width=4, grid_height=3, max_cycles=12)
    T = kw["max_cycles"]
    venv = seer_envs.vector_env("pcs_v0", E, num_threads=threads, **kw)
    n = venv.num_agents
    torch.manual_seed(0)
    agent = ex.Agent(11, venv.single_action_space.n)
    torch.manual_seed(1)
    got = ex.rollout(venv, agent, seed, T)[:5]

    torch.manual_seed(1)
    envs = [seer_envs.make("pcs_v0", num_threads=1, **kw) for _ in range(E)]
    obs = _reset_singles(envs, seed)
    ref = []
    for t in range(T):
        x, act, logp, val = _act(torch, agent, obs, torch.full((len(obs),), t / T))
        acts = act.numpy()
        outs = [e.step_arrays(acts[i * n:(i + 1) * n]) for i, e in enumerate(envs)]
        obs = np.concatenate([o[0] for o in outs])
        ref.append((x.numpy(), acts, logp.numpy(), np.concatenate([o[1] for o in outs]),
                    val.numpy()))
    names = ["obs", "actions", "logp", "rewards", "values"]
    for t, row in enumerate(ref):
        for k, (name, want) in enumerate(zip(names, row)):
            np.testing.assert_array_equal(got[k][t].numpy(), want, err_msg=f"{name} at step {t}")
    assert any(r[3].any() for r in ref)          # rewards happened: the comparison has teeth


@pytest.mark.parametrize("threads", [1, 2])
def test_cleanrl_pcs_async_rollout_records_what_the_env_did(threads):
    """``--async``: the overlapped rollout's buffers (two halves in
    ping-pong) hold the observations and rewards that the synchronous env
    gives for the actions it recorded, bit for bit."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    ex = _load_example("cleanrl_ippo_pcs.py")
    E, seed = 4, 5
    kw = dict(ex.ENV_KW, grid_width=4, grid_height=3, max_cycles=12)
    T = kw["max_cycles"]
    venv = seer_envs.vector_env("pcs_v0", E, num_threads=threads, batch_size=2, **kw)
    torch.manual_seed(0)
    agent = ex.Agent(11, venv.single_action_space.n)
    obs_buf, act_buf, _, rew_buf, _, _ = ex.rollout_async(venv, agent, seed, T)
    sync = seer_envs.vector_env("pcs_v0", E, num_threads=1, **kw)
    obs = sync.reset(seed=seed)[0]
    for t in range(T):
        np.testing.assert_array_equal(obs_buf[t].numpy(), obs.reshape(-1, 11), err_msg=f"obs at {t}")
        obs, rew, _, _, _ = sync.step(act_buf[t].numpy().reshape(E, -1))
        np.testing.assert_array_equal(rew_buf[t].numpy(), rew.reshape(-1), err_msg=f"rewards at {t}")
    assert rew_buf.abs().sum() > 0


def test_cleanrl_aircraft_async_rollout_records_what_the_env_did():
    """``--async`` (Aircraft): where a UAV is alive in the overlapped
    rollout's buffers, they hold the observations and rewards the
    synchronous env gives for the recorded actions; the masks follow the
    UAVs' ends."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    ex = _load_example("cleanrl_ppo_aircraft.py")
    E, T, seed = 4, 30, 40
    mcs = [4, T, 7, T]
    kw = dict(num_uavs=5, num_targets=2, dynamics_substeps=2, battery_capacity=10.0, continuous_actions=True)
    venv = seer_envs.vector_env("aircraft_v0", E, num_threads=2, max_cycles=mcs, autoreset_mode="same_step",
                                batch_size=2, **kw)
    torch.manual_seed(0)
    agent = ex.Agent(venv.single_observation_space.shape[0], 2)
    obs_b, act_b, _, rew_b, _, alive_b, done_b = ex.rollout_async(venv, agent, seed, T)
    sync = seer_envs.vector_env("aircraft_v0", E, num_threads=1, max_cycles=mcs, autoreset_mode="same_step",
                                **kw)
    obs = sync.reset(seed=seed)[0].reshape(E * 5, -1)
    alive = np.ones(E * 5, bool)
    for t in range(len(rew_b)):
        m = alive_b[t].numpy() > 0
        np.testing.assert_array_equal(m, alive)
        np.testing.assert_array_equal(obs_b[t].numpy()[m], obs[m], err_msg=f"obs at {t}")
        a = act_b[t].clamp(-1, 1).numpy().reshape(E, 5, 2)
        obs, rew, term, trunc, _ = sync.step(a)
        obs = obs.reshape(E * 5, -1)
        np.testing.assert_array_equal(rew_b[t].numpy(), rew.reshape(-1) * alive, err_msg=f"rewards at {t}")
        ended = (term | trunc).reshape(-1)
        np.testing.assert_array_equal(done_b[t].numpy() > 0, ended & alive)
        alive &= ~ended
    assert not alive.any() and done_b.sum() == E * 5


@pytest.mark.parametrize("threads", [1, 2])
def test_cleanrl_aircraft_rollout_equals_a_loop_of_single_envs(threads):
    """The example's vector-env rollout gives the batch a loop over single
    envs (seeds seed + i, the same policy draws) gives, bit for bit, with
    UAVs that stop mid-episode and copies that end (and auto-reset) at
    different steps."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    if "aircraft_v0" not in seer_envs.registry():
        pytest.fail("aircraft_v0 is not registered")
    ex = _load_example("cleanrl_ppo_aircraft.py")
    E, T, seed = 3, 30, 40
    mcs = [4, T, 7]        # copies 0 and 2 end early and auto-reset
    kw = dict(num_uavs=5, num_targets=2, dynamics_substeps=2, battery_capacity=10.0, continuous_actions=True)
    venv = seer_envs.vector_env("aircraft_v0", E, num_threads=threads, max_cycles=mcs, **kw)
    n, obs_dim = venv.num_agents, venv.single_observation_space.shape[0]
    torch.manual_seed(0)
    agent = ex.Agent(obs_dim, 2)
    torch.manual_seed(1)
    got = ex.rollout(venv, agent, seed, T)

    # The reference: the loop over single envs the example ran before.
    torch.manual_seed(1)
    envs = [seer_envs.make("aircraft_v0", num_threads=1, max_cycles=m, **kw) for m in mcs]
    obs = _reset_singles(envs, seed)
    alive = np.ones(E * n, bool)
    ref = []
    for t in range(T):
        x, act, logp, val = _act(torch, agent, obs, torch.full((len(obs),), t / T))
        alive_t = alive.copy()
        acts = act.clamp(-1, 1).numpy()
        outs = [e.step_arrays(acts[i * n:(i + 1) * n]) if e.agents else
                (obs[i * n:(i + 1) * n], np.zeros(n, np.float32), np.ones(n, bool), np.ones(n, bool))
                for i, e in enumerate(envs)]
        obs = np.concatenate([o[0] for o in outs])
        rew = np.concatenate([o[1] for o in outs])
        ended = np.concatenate([o[2] | o[3] for o in outs])
        ref.append((x.numpy(), act.numpy(), logp.numpy(), rew * alive_t, val.numpy(), alive_t,
                    ended & alive_t))
        alive &= ~ended
        if not alive.any():
            break
    assert got[0].shape[0] == len(ref)
    names = ["obs", "actions", "logp", "rewards", "values", "alive", "done"]
    for t, row in enumerate(ref):
        live = row[5]
        for k, (name, want) in enumerate(zip(names, row)):
            have = got[k][t].numpy()
            if name in ("alive", "done"):
                np.testing.assert_array_equal(have, want.astype(np.float32), err_msg=f"{name} at step {t}")
            elif name == "rewards":
                np.testing.assert_array_equal(have, want, err_msg=f"rewards at step {t}")
            else:       # rows outside the episode see other observations: not compared
                np.testing.assert_array_equal(have[live], want[live], err_msg=f"{name} at step {t}")
    done_steps = [np.flatnonzero(r[6]) for r in ref]
    # UAVs stop at different steps, and copies end before the rollout does.
    assert len({t for t, d in enumerate(done_steps) if len(d)}) >= 3
    # At the last step some copy had already ended: the vector env had auto-reset it.
    assert not ref[-1][5].reshape(E, n).any(axis=1).all()


def _run_example(script, args, cwd):
    """Run an example as a user would, in ``cwd``."""
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, script)] + args,
                          capture_output=True, text=True, timeout=600, cwd=cwd,
                          env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")))


def _tensorboard_tags(run):
    """The scalar tags written to the TensorBoard event files in ``run``."""
    import struct

    from tensorboardX.proto import event_pb2
    files = glob.glob(os.path.join(run, "events.out.tfevents.*"))
    assert files, f"no TensorBoard event file in {run}"
    tags = set()
    for f in files:
        data = open(f, "rb").read()
        i = 0
        while i < len(data):
            n = struct.unpack("<Q", data[i:i + 8])[0]
            ev = event_pb2.Event.FromString(data[i + 12:i + 12 + n])
            tags |= {v.tag for v in ev.summary.value}
            i += 12 + n + 4
    return tags


HABIT_TAGS = {"charts/SPS", "charts/episodic_return", "charts/learning_rate", "losses/policy_loss",
              "losses/value_loss", "losses/entropy", "losses/approx_kl", "losses/clipfrac"}


@pytest.mark.parametrize("script, args, updates, frames, env_id", [
    # 96 env steps = 2 updates of 1 copy x 48 steps
    ("cleanrl_ippo_pcs.py", ["--total-timesteps", "96", "--num-envs", "1"], 2, 49, "pcs_hotspot_v1"),
    ("cleanrl_mappo_pcs.py", ["--total-timesteps", "192", "--num-envs", "2"], 2, 49, "pcs_hotspot_v1"),
    # 80 env steps = 2 updates of 2 copies x 20 steps (at most)
    ("cleanrl_ppo_aircraft.py", ["--total-timesteps", "80", "--num-envs", "2", "--num-uavs", "8",
                                 "--episode", "20"], 2, 21, "aircraft_v0"),
])
@pytest.mark.heavy
def test_cleanrl_habits_track_save_video_total_timesteps(tmp_path, script, args, updates, frames, env_id):
    """--track writes TensorBoard scalars (losses, SPS, returns), --save-model
    the weights, --capture-video a GIF of rgb_array frames, and
    --total-timesteps sets the number of updates (copies x steps each)."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    pytest.importorskip("tensorboardX", reason="tensorboardX is not installed (pip install -e '.[train]')")
    r = _run_example(script, args + ["--eval-seeds", "1", "--num-threads", "1", "--track", "--save-model",
                                     "--capture-video", "--exp-name", "t"], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"update   {updates}/{updates}:" in r.stdout and "held-out evaluation" in r.stdout
    [run] = glob.glob(str(tmp_path / "runs" / f"{env_id}__t__1__*"))
    assert HABIT_TAGS <= _tensorboard_tags(run)
    weights = torch.load(os.path.join(run, "t.cleanrl_model"))
    assert sum(w.numel() for w in weights.values()) > 1000
    from PIL import Image
    gif = Image.open(os.path.join(run, "eval_episode.gif"))
    assert gif.n_frames == frames and min(gif.size) >= 300          # the reset frame and every step


@pytest.mark.parametrize("script, flag, value", [
    ("cleanrl_ippo_pcs.py", "--num-threads", "two"), ("cleanrl_ippo_pcs.py", "--total-timesteps", "0"),
    ("cleanrl_mappo_pcs.py", "--num-envs", "0"), ("cleanrl_mappo_pcs.py", "--lr", "-1"),
    ("cleanrl_ppo_aircraft.py", "--updates", "x"), ("cleanrl_ppo_aircraft.py", "--num-threads", "0"),
    ("cleanrl_ippo_pcs.py", "--device", "tpu"), ("cleanrl_ppo_aircraft.py", "--device", "cuda:x"),
])
def test_cleanrl_examples_bad_flags_are_argparse_errors(tmp_path, script, flag, value):
    """A bad flag is one usage line naming it (exit 2), not a traceback."""
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    r = _run_example(script, [flag, value], tmp_path)
    assert r.returncode == 2, r.stderr[-3000:]
    assert f"argument {flag}" in r.stderr and "Traceback" not in r.stderr
    assert not os.path.exists(tmp_path / "runs")


@pytest.mark.parametrize("flag", ["--async", "--overlap"])
def test_cleanrl_mappo_aircraft_refuses_the_flags_it_lacks(tmp_path, flag):
    """MAPPO on Aircraft takes IPPO's parser, with ``--async`` and
    ``--overlap``, and has neither: each is a usage error naming that flag
    (``--async`` was run without it, ``--overlap`` was refused as ``--async``)."""
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    r = _run_example("cleanrl_mappo_aircraft.py", [flag, "--updates", "1"], tmp_path)
    assert r.returncode == 2, r.stderr[-3000:]
    assert f"{flag} is not supported here" in r.stderr and "Traceback" not in r.stderr
    assert not os.path.exists(tmp_path / "runs")


def test_cleanrl_mappo_critic_reads_the_copies_global_state():
    """The MAPPO rollout's critic input at each step is every copy's global
    state (a single env's ``state()`` with that copy's seed) and the time
    input, beside the per-cell observations the actor reads."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    ex = _load_example("cleanrl_mappo_pcs.py")
    import seer_envs
    E, seed = 2, 9
    kw = dict(ex.ENV_KW, grid_width=3, grid_height=3, max_cycles=6)
    venv = seer_envs.vector_env("pcs_v0", E, num_threads=2, **kw)
    torch.manual_seed(0)
    agent = ex.Agent(11, venv.single_action_space.n, venv.single_state_space.shape[0], venv.num_agents)
    obs_b, st_b, act_b, _, rew_b, val_b = ex.rollout(venv, agent, seed, 6)
    assert st_b.shape == (6, E, 9 * 11) and val_b.shape == (6, E, 9)
    envs = [seer_envs.make("pcs_v0", num_threads=1, **kw) for _ in range(E)]
    for i, e in enumerate(envs):
        e.reset_arrays(seed=seed + i)
    for t in range(6):
        for i, e in enumerate(envs):
            np.testing.assert_array_equal(st_b[t, i].numpy(), e.state(), err_msg=f"state at {t}, copy {i}")
            o, r, _, _ = e.step_arrays(act_b[t, i].numpy())
            np.testing.assert_array_equal(rew_b[t, i].numpy(), r)
            if t + 1 < 6:
                np.testing.assert_array_equal(obs_b[t + 1, i].numpy(), o)
    with torch.no_grad():
        # step 2 of 6: the critic also reads the time input 2 / 6
        np.testing.assert_allclose(val_b[2].numpy(), agent.value(st_b[2], torch.full((E,), 2 / 6)).numpy())
        assert not np.allclose(val_b[2].numpy(), agent.value(st_b[2], torch.full((E,), 0.0)).numpy())


def test_rllib_vector_multi_agent_env_equals_single_envs():
    """RLlib's multi-agent interface on SEER's vector env: each copy's dicts
    are a single env's with seed ``s * copies + c`` (the agents in play, the
    rewards, the flags and ``__all__``), across UAVs that stop at different
    steps, copies that end at different steps and their ``next_step``
    restarts (rewards 0, no flags, the next episode's first observations)."""
    rllib = _rllib()
    if "aircraft_v0" not in seer_envs.registry():
        pytest.fail("aircraft_v0 is not registered")
    E, s = 3, 4
    mcs = [4, 9, 6]
    kw = dict(num_uavs=4, num_targets=2, battery_capacity=12.0, thrust_power=1.0)
    v = rllib.SeerVectorMultiAgentEnv("aircraft_v0", E, max_cycles=mcs, num_threads=2, **kw)
    singles = [seer_envs.make("aircraft_v0", num_threads=1, max_cycles=m, **kw) for m in mcs]
    obs, _ = v.reset(seed=s)
    want = [e.reset(seed=s * E + c)[0] for c, e in enumerate(singles)]
    restart = [False] * E
    gone = [{} for _ in range(E)]
    seen = {"restart": 0, "term_all": 0, "trunc_all": 0, "partial": 0}

    def same(a, b, what):
        assert a.keys() == b.keys(), what
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{what} {k}")

    for t in range(14):
        for c in range(E):
            same(obs[c], want[c], f"obs of copy {c} at step {t}")
        # odd UAVs (all in copy 1) burn their battery: they stop before the
        # others; agents whose episode ended get no action (as RLlib does)
        acts = [{a: np.array([0.9, 0.9] if int(a.split("_")[1]) % 2 or c == 1 else [0.0, 0.1], np.float32)
                 for a in o if not (gone[c].get(a) and not restart[c])} for c, o in enumerate(obs)]
        obs, rew, term, trunc, _ = v.step(acts)
        gone = [{a: te[a] or tr[a] for a in te if a != "__all__"} for te, tr in zip(term, trunc)]
        want = []
        for c, e in enumerate(singles):
            if restart[c]:
                o, _ = e.reset()
                want.append(o)
                assert set(rew[c].values()) == {0.0} and not any(term[c].values()) and not any(trunc[c].values())
                seen["restart"] += 1
                restart[c] = False
                continue
            o, r, te, tr, _ = e.step(acts[c])
            want.append(o)
            assert rew[c] == r and {k: term[c][k] for k in te} == te and {k: trunc[c][k] for k in tr} == tr
            ended = not e.agents
            assert term[c]["__all__"] == (ended and all(te.values()))
            assert trunc[c]["__all__"] == (ended and not all(te.values()))
            seen["term_all"] += term[c]["__all__"]
            seen["trunc_all"] += trunc[c]["__all__"]
            seen["partial"] += (not ended) and any(te.values())
            restart[c] = ended
    assert all(seen.values()), seen          # every case happened: the comparison has teeth
    v.close()


def test_rllib_multi_agent_runner_on_the_vector_env():
    """``SeerMultiAgentEnvRunner``: RLlib's multi-agent runner samples from
    copies of one vector env (not a loop of single envs), every copy of
    every runner on its own seed stream, with or without RLlib's seed."""
    rllib = _rllib()
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    rllib.register()
    seeds = {}
    for rllib_seed in (None, 5):
        for worker in (1, 2):
            cfg = (PPOConfig()
                   .environment("seer/pcs_v0", env_config=dict(SMALL["pcs_v0"], max_cycles=6, num_threads=1, seed=7))
                   .multi_agent(policies={"shared"}, policy_mapping_fn=lambda a, *x, **k: "shared")
                   .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec()}))
                   .env_runners(num_env_runners=2, num_envs_per_env_runner=4,
                                env_runner_cls=rllib.SeerMultiAgentEnvRunner)
                   .debugging(seed=rllib_seed))
            runner = rllib.SeerMultiAgentEnvRunner(config=cfg, worker_index=worker)
            assert isinstance(runner.env, rllib.SeerVectorMultiAgentEnv)
            episodes = runner.sample(num_timesteps=4 * 7, random_actions=False)
            assert sum(ep.env_steps() for ep in episodes) >= 4 * 7
            assert any(ep.is_done for ep in episodes)        # copies ended and restarted
            n_agents = len(runner.env.possible_agents)
            assert all(len(ep.agent_episodes) == n_agents for ep in episodes)
            seeds[(rllib_seed, worker)] = runner.env.vec.seeds_used.tolist()
            runner.stop()
    for rllib_seed in (None, 5):
        both = seeds[(rllib_seed, 1)] + seeds[(rllib_seed, 2)]
        assert len(set(both)) == 8, seeds


def test_rllib_vector_env_names_the_copy_and_agent_of_a_bad_action_dict():
    """RLlib's vector view goes through the one validator of the dict views:
    a missing, unknown or out-of-range action is a ValueError naming the copy
    and the agent, and the env steps on after it (nothing was stepped)."""
    rllib = _rllib()
    v = rllib.SeerVectorMultiAgentEnv("pcs_v0", 2, num_threads=1)
    obs, _ = v.reset(seed=0)
    good = [{a: 0 for a in o} for o in obs]
    name = next(iter(obs[1]))
    for acts, match in ((
            [good[0], {a: 0 for a in list(obs[1])[1:]}], f"copy 1: missing action for agent {name!r}"),
            ([dict(good[0], nobody=0), good[1]], "copy 0: action for unknown agent 'nobody'"),
            ([good[0], dict(good[1], **{name: 99})], f"copy 1: action for agent {name!r} must be in"),
            ([good[0], [0]], "copy 1: actions must be a dict")):
        with pytest.raises(ValueError, match=re.escape(match)):
            v.step(acts)
    obs2, rew, *_ = v.step(good)
    assert [o.keys() for o in obs2] == [o.keys() for o in obs] and len(rew) == 2


@pytest.mark.parametrize("overlap, update", [(False, 0), (True, 1)])
def test_aircraft_ippo_update_normalises_its_batch_once(monkeypatch, overlap, update):
    """The Aircraft IPPO update runs its batch through the observation
    normaliser once (its statistics hold through the epochs), not each
    minibatch at every epoch, and learns bit for bit what normalising each
    minibatch learned (the decoupled objective's proximal pass included)."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    import copy

    from seer_bench import ppo
    ex = _load_example("cleanrl_ppo_aircraft.py")
    T, N, d = 6, 10, 9
    torch.manual_seed(0)
    agent0 = ex.Agent(d, 2)
    agent0.obs_norm.update(torch.randn(50, d) * 3)
    obs, rew, logp = torch.randn(T, N, d) * 3, torch.randn(T, N), torch.randn(T, N)
    act, alive, done = torch.rand(T, N, 2) * 2 - 1, torch.ones(T, N), torch.zeros(T, N)
    done[-1] = 1.0
    a = ex.make_parser().parse_args(["--episode", str(T), "--minibatches", "3", "--no-reward-scaling"]
                                    + (["--overlap"] if overlap else []))
    learned = []
    for once in (True, False):
        agent = copy.deepcopy(agent0)
        calls = []
        norm = agent.obs_norm.forward
        monkeypatch.setattr(agent.obs_norm, "forward", lambda x, calls=calls, norm=norm: calls.append(len(x)) or norm(x))
        if not once:                  # the per-minibatch path: ppo_epochs' own forward on raw rows
            monkeypatch.setattr(ex, "ppo_epochs", lambda *args: ppo.ppo_epochs(*args[:10]))
        opt = torch.optim.Adam(agent.parameters(), lr=1e-3, eps=1e-5)
        ex._update(a, agent, opt, None, (obs, act, logp, rew, obs[..., 0] * 0, alive, done), update, d)
        if once:                      # the batch once (and the learner's values under overlap)
            assert calls == [T * N] * (2 if overlap else 1), calls
        else:
            assert len(calls) > a.epochs * a.minibatches
        learned.append(agent.state_dict())
    for k in learned[0]:
        assert torch.equal(learned[0][k], learned[1][k]), k
