# SPDX-License-Identifier: BSD-3-Clause
"""Per-copy worlds through the RL libraries: copy ``c`` of a TorchRL env or
of RLlib's vector env with per-copy values equals a single env built with
``c``'s values and seed, bit for bit; ``set_params`` reaches a copy at its
next reset (TorchRL's ``"_reset"``, RLlib's autoreset, BenchMARL's envs);
samplers draw distinct worlds per copy and per RLlib runner, the same ones
for the same seeds at any batch size; bad values are refused with the
config's own errors.  CI's RL step runs these with no skip allowed."""

import numpy as np
import pytest

import seer_envs

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
pytest.importorskip("torchrl", reason="torchrl is not installed (pip install -e '.[torchrl]')")

from seer_envs.integrations import torchrl as seer_torchrl  # noqa: E402
from seer_test_helpers import benchmarl_config  # noqa: E402

SMALL = {
    "pcs_v0": dict(grid_width=4, grid_height=3, dt=30.0, move_interval_mean=20.0, call_interarrival_mean=60.0),
    "aircraft_v0": dict(num_uavs=5, num_targets=2, dynamics_substeps=2),
}
# One per-copy field per scenario and three values of it, one per copy.
VARY = {
    "pcs_v0": ("call_interarrival_mean", [30.0, 60.0, 240.0]),
    "aircraft_v0": ("wind_sigma", [0.0, 0.6, 2.0]),
}


def _varied(env_id):
    field, values = VARY[env_id]
    spec = seer_envs.get(env_id)
    assert field in spec.copies.per_copy, f"{env_id} does not declare {field} per copy"
    return field, values


def _single(env_id, **kw):
    return seer_envs.make(env_id, num_threads=1, **kw)


@pytest.mark.parametrize("env_id", sorted(VARY))
@pytest.mark.parametrize("threads,seed", [(1, 0), (2, 7), (4, 31)])
def test_torchrl_copy_equals_a_single_env_with_its_values(env_id, threads, seed):
    """A rollout with copies ending at different steps (TorchRL resets them
    with ``"_reset"``): copy ``c``'s observations and rewards are a single
    env's with ``c``'s values, seed ``seed + c`` and the same actions.  A
    scenario that declares no field of ``VARY`` varies ``max_cycles`` only."""
    field, values = VARY[env_id]
    if field not in seer_envs.get(env_id).copies.per_copy:
        assert env_id != "pcs_v0"
        field, values = "max_cycles", [4, 6, 5]
    mcs = [4, 6, 5]
    env = seer_torchrl.torchrl_env(env_id, 3, num_threads=threads, **dict({"max_cycles": mcs, field: values}),
                                   **{k: v for k, v in SMALL[env_id].items() if k != field})
    np.testing.assert_array_equal(env.params[field], values)
    env.set_seed(seed)
    torch.manual_seed(seed)
    td = env.rollout(11, break_when_any_done=False)
    env.close()
    acts = td["agents", "action"].numpy()
    for c in range(3):
        kw = dict({k: v for k, v in SMALL[env_id].items() if k != field}, **{"max_cycles": mcs[c], field: values[c]})
        single = _single(env_id, **kw)
        obs = single.reset_arrays(seed=seed + c)
        ends = 0
        for t in range(11):
            np.testing.assert_array_equal(td["agents", "observation"][c, t].numpy(), obs, err_msg=f"copy {c} step {t}")
            obs, rew, term, trunc = single.step_arrays(acts[c, t])
            np.testing.assert_array_equal(td["next", "agents", "reward"][c, t, :, 0].numpy(), rew,
                                          err_msg=f"copy {c} step {t}")
            np.testing.assert_array_equal(td["next", "agents", "observation"][c, t].numpy(), obs)
            if not single.agents:
                assert td["next", "done"][c, t, 0]
                ends += 1
                obs = single.reset_arrays()                  # the copy's next seed, from its generator
        assert ends >= 1
        single.close()


def test_torchrl_set_params_reaches_a_copy_at_its_reset():
    field, values = _varied("pcs_v0")
    kw = {k: v for k, v in SMALL["pcs_v0"].items() if k != field}
    env = seer_torchrl.torchrl_env("pcs_v0", 3, num_threads=2, **{field: values}, **kw)
    env.set_seed(4)
    env.reset()
    env.set_params(copies=[1], **{field: 500.0})
    np.testing.assert_array_equal(env.params[field], values)          # pending until copy 1 resets
    with pytest.raises(ValueError, match=f"PCSConfig.{field} must be"):
        env.set_params(**{field: -1.0})
    with pytest.raises(ValueError, match="cannot differ between copies"):
        env.set_params(grid_width=5)
    from tensordict import TensorDict
    td = env.reset(TensorDict({"_reset": torch.tensor([[False], [True], [False]])}, batch_size=(3,)))
    np.testing.assert_array_equal(env.params[field], [values[0], 500.0, values[2]])
    # copy 1's new episode is a single env's next episode with the new value
    single = _single("pcs_v0", **kw, **{field: values[1]})
    single.reset_arrays(seed=4 + 1)
    want = single.reset_arrays(options={"params": {field: 500.0}})
    np.testing.assert_array_equal(td["agents", "observation"][1].numpy(), want)
    single.close()
    env.close()


def test_torchrl_sampler_draws_by_seed_at_any_batch_size():
    """Copy ``c`` of a batch seeded ``s`` draws the world a one-copy env
    seeded ``s + c`` draws, and a single env with that seed."""
    field, _ = _varied("pcs_v0")
    kw = {k: v for k, v in SMALL["pcs_v0"].items() if k != field}
    sampler = {field: {"uniform": [40.0, 400.0]}, "max_cycles": [5, 9]}
    env = seer_torchrl.torchrl_env("pcs_v0", 4, num_threads=1, param_sampler=sampler, **kw)
    env.set_seed(3)
    env.reset()
    drawn = env.params
    assert len(set(drawn[field].tolist())) == 4 and ((40.0 <= drawn[field]) & (drawn[field] <= 400.0)).all()
    assert set(drawn["max_cycles"].tolist()) <= {5, 9}
    one = seer_torchrl.torchrl_env("pcs_v0", 1, num_threads=1, param_sampler=sampler, **kw)
    one.set_seed(3 + 2)
    one.reset()
    assert one.params[field][0] == drawn[field][2]
    single = _single("pcs_v0", param_sampler=sampler, **kw)
    single.reset(seed=3 + 2)
    assert single.params[field] == drawn[field][2]
    for e in (env, one, single):
        e.close()


def _rllib():
    pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install -e '.[rllib]')")
    from seer_envs.integrations import rllib
    return rllib


def test_rllib_vector_copy_equals_a_single_env_with_its_values():
    """``SeerVectorMultiAgentEnv`` with per-copy values: copy ``c``'s dicts
    are a single env's with ``c``'s values and seed ``s * copies + c``,
    across ``next_step`` restarts."""
    rllib = _rllib()
    field, values = _varied("pcs_v0")
    kw = {k: v for k, v in SMALL["pcs_v0"].items() if k != field}
    E, s, mcs = 3, 2, [3, 5, 4]
    v = rllib.SeerVectorMultiAgentEnv("pcs_v0", E, num_threads=2, max_cycles=mcs, **{field: values}, **kw)
    singles = [_single("pcs_v0", max_cycles=mcs[c], **kw, **{field: values[c]}) for c in range(E)]
    obs, _ = v.reset(seed=s)
    want = [e.reset(seed=s * E + c)[0] for c, e in enumerate(singles)]
    restart = [False] * E
    rng = np.random.default_rng(0)
    for t in range(12):
        for c in range(E):
            assert obs[c].keys() == want[c].keys()
            for a in obs[c]:
                np.testing.assert_array_equal(obs[c][a], want[c][a], err_msg=f"copy {c} step {t} {a}")
        acts = [{a: int(rng.integers(0, 6)) for a in o} for o in obs]
        obs, rew, term, trunc, _ = v.step(acts)
        want = []
        for c, e in enumerate(singles):
            if restart[c]:
                want.append(e.reset()[0])
                restart[c] = False
                continue
            o, r, _, _, _ = e.step(acts[c])
            assert rew[c] == r, f"copy {c} step {t}"
            want.append(o)
            restart[c] = not e.agents
    np.testing.assert_array_equal(v.params[field], values)
    v.close()
    for e in singles:
        e.close()


@pytest.mark.heavy
def test_rllib_runners_draw_distinct_worlds_and_set_params_reaches_autoresets():
    """2 runners x 4 copies of ``SeerMultiAgentEnvRunner`` with a sampler
    in ``env_config``: 8 distinct worlds, the same ones again for the same
    seed; ``set_params`` on an algorithm reaches every copy at its next
    autoreset while the runner samples."""
    rllib = _rllib()
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    rllib.register()
    field, _ = _varied("pcs_v0")
    kw = {k: v for k, v in SMALL["pcs_v0"].items() if k != field}

    def config(runners, **extra):
        return (PPOConfig()
                .environment("seer/pcs_v0", env_config=dict(kw, max_cycles=4, num_threads=1, seed=7, **extra))
                .multi_agent(policies={"shared"}, policy_mapping_fn=lambda a, *x, **k: "shared")
                .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec()}))
                .env_runners(num_env_runners=runners, num_envs_per_env_runner=4,
                             env_runner_cls=rllib.SeerMultiAgentEnvRunner)
                .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1))

    sampler = {field: {"uniform": [40.0, 400.0]}}

    def draws():
        out = []
        for worker in (1, 2):
            runner = rllib.SeerMultiAgentEnvRunner(config=config(2, param_sampler=sampler), worker_index=worker)
            runner.sample(num_timesteps=4, random_actions=True)
            out += runner.env.params[field].tolist()
            runner.stop()
        return out
    first = draws()
    assert len(set(first)) == 8 and first == draws()

    # per-copy lists: copy c of every runner takes value c
    runner = rllib.SeerMultiAgentEnvRunner(config=config(2, **{field: [50.0, 100.0, 150.0, 200.0]}),
                                           worker_index=1)
    np.testing.assert_array_equal(runner.env.params[field], [50.0, 100.0, 150.0, 200.0])
    runner.set_params(copies=[0], **{field: 75.0})
    runner.sample(num_timesteps=4 * 6, random_actions=True)          # every copy ends (max_cycles 4)
    assert runner.env.params[field].tolist() == [75.0, 100.0, 150.0, 200.0]
    runner.stop()

    algo = config(0).build_algo()
    try:
        assert rllib.set_params(algo, **{field: 333.0}) == [4]
        with pytest.raises(ValueError, match=f"PCSConfig.{field} must be"):
            rllib.set_params(algo, **{field: -1.0})
        algo.env_runner.sample(num_timesteps=4 * 6, random_actions=True)    # autoresets apply it
        assert (algo.env_runner.env.params[field] == 333.0).all()
    finally:
        algo.stop()


@pytest.mark.heavy
def test_rllib_single_envs_take_a_sampler_and_set_params():
    """RLlib's default runner (single envs): a sampler in ``env_config``
    draws per sub-env (their seeds differ), ``set_params`` applies at the
    next reset, and a per-copy list is refused with the runner to use."""
    rllib = _rllib()
    from ray.rllib.env.env_context import EnvContext
    field, _ = _varied("pcs_v0")
    kw = {k: v for k, v in SMALL["pcs_v0"].items() if k != field}
    cfg = dict(kw, num_threads=1, seed=3, param_sampler={field: {"uniform": [40.0, 400.0]}})
    envs = [rllib.SeerRLlibEnv("pcs_v0", EnvContext(cfg, worker_index=w, vector_index=0)) for w in (1, 2)]
    assert envs[0].params[field] != envs[1].params[field]
    envs[0].set_params(**{field: 123.0})
    envs[0].reset()
    assert envs[0].params[field] != 123.0                 # the sampler draws over it at every reset
    plain = rllib.SeerRLlibEnv("pcs_v0", dict(kw, num_threads=1))
    before = plain.params[field]
    plain.set_params(**{field: 123.0})
    assert plain.params[field] == before != 123.0          # pending until the next reset
    plain.reset()
    assert plain.params[field] == 123.0
    with pytest.raises(ValueError, match="SeerMultiAgentEnvRunner"):
        rllib.SeerRLlibEnv("pcs_v0", dict(kw, **{field: [50.0, 60.0]}))
    for e in envs + [plain]:
        e.close()
    # through RLlib's own multi-agent runner (a loop of these single envs): copies are its sub-envs
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    rllib.register()
    cfg = (PPOConfig().environment("seer/pcs_v0", env_config=dict(kw, max_cycles=3, num_threads=1))
           .multi_agent(policies={"shared"}, policy_mapping_fn=lambda a, *x, **k: "shared")
           .env_runners(num_env_runners=0, num_envs_per_env_runner=3))
    runner = MultiAgentEnvRunner(config=cfg)

    class Group:                   # an algorithm's env_runner_group, with this runner only
        def foreach_env_runner(self, func, local_env_runner=True):
            return [func(runner)]
    assert rllib.set_params(Group(), copies=[1], **{field: 222.0}) == [3]
    with pytest.raises(ValueError, match=r"copies must name sub-envs in \[0, 2\]"):
        rllib.set_params(Group(), copies=[3], **{field: 222.0})
    runner.sample(num_timesteps=3 * 5, random_actions=True)           # every sub-env ended and reset
    got = [e.unwrapped.params[field] for e in runner.env.envs]
    assert got[1] == 222.0 and got[0] != 222.0 and got[2] != 222.0
    runner.stop()


def test_rllib_agent_vector_creator_takes_per_copy_values():
    rllib = _rllib()
    field, values = _varied("pcs_v0")
    kw = {k: v for k, v in SMALL["pcs_v0"].items() if k != field}
    env = rllib.rllib_env_creator("pcs_v0")(dict(kw, num_envs=3 * 12, num_threads=1, **{field: values},
                                                 param_sampler={"max_cycles": [4, 8]}))
    env.reset(seed=1)
    np.testing.assert_array_equal(env.vec.params[field], values)
    assert set(env.vec.params["max_cycles"].tolist()) <= {4, 8}
    env.close()


def _benchmarl():
    import importlib.util
    if importlib.util.find_spec("benchmarl") is None:    # found, not imported: SEER's module goes first
        pytest.skip("benchmarl is not installed (pip install hydra-core && pip install --no-deps benchmarl==1.5.2)")
    from seer_envs.integrations import benchmarl
    return benchmarl


def test_benchmarl_task_with_per_copy_values_and_a_sampler():
    bm = _benchmarl()
    field, _ = _varied("pcs_v0")
    kw = {k: v for k, v in SMALL["pcs_v0"].items() if k != field}
    task = bm.SeerTask.PCS_V0.get_task(dict(kw, **{field: [50.0, 90.0]}, max_cycles=[6, 9],
                                            param_sampler={"team_reward_share": {"choice": [0.0, 0.5]}}))
    assert task.max_steps(None) == 9
    train = task.get_env_fun(3, False, 0, "cpu")()
    test = task.get_env_fun(5, False, 0, "cpu")()
    for env, n in ((train, 3), (test, 5)):
        env.reset()
        np.testing.assert_array_equal(env.params[field], [[50.0, 90.0][c % 2] for c in range(n)])
        np.testing.assert_array_equal(env.params["max_cycles"], [[6, 9][c % 2] for c in range(n)])
        assert set(env.params["team_reward_share"].tolist()) <= {0.0, 0.5}
    assert task.set_params(copies=[0, 2], **{field: 300.0}) == 2
    with pytest.raises(ValueError, match=r"copies must be in \[0, 2\]"):
        task.set_params(copies=[4], **{field: 300.0})
    with pytest.raises(ValueError, match=f"PCSConfig.{field} must be"):
        task.set_params(**{field: -5.0})
    for env in (train, test):
        env.reset()
        assert env.params[field][0] == env.params[field][2] == 300.0 and env.params[field][1] == 90.0
        env.close()
    with pytest.raises(ValueError, match="cannot differ between copies"):
        bm.SeerTask.PCS_V0.get_task(dict(kw, grid_width=[4, 5]))
    with pytest.raises(ValueError, match=f"PCSConfig.{field} must be"):
        bm.SeerTask.PCS_V0.get_task(dict(kw, **{field: [50.0, -1.0]}))
    with pytest.raises(ValueError, match="param_sampler"):
        bm.SeerTask.PCS_V0.get_task(dict(kw, param_sampler={"grid_width": [4, 5]}))


@pytest.mark.heavy
def test_benchmarl_callback_curriculum_reaches_the_collector(tmp_path):
    """A BenchMARL experiment with a sampler in its task config and a
    ``Callback`` that calls ``self.experiment.task.set_params`` after each
    batch: the collector's env (through BenchMARL's transforms) restarts
    its copies with the new value at their next reset."""
    bm = _benchmarl()
    from benchmarl.algorithms import MappoConfig
    from benchmarl.experiment.callback import Callback
    from benchmarl.models.mlp import MlpConfig
    torch.set_num_threads(1)
    field, _ = _varied("pcs_v0")

    class Curriculum(Callback):
        def __init__(self):
            super().__init__()
            self.seen = []

        def on_batch_collected(self, batch):
            self.seen.append(self.experiment.collector.env.params[field].copy())
            self.experiment.task.set_params(**{field: 500.0 + 100.0 * len(self.seen)})
    # BenchMARL pickles its callbacks with the experiment's config: a module-level name
    Curriculum.__qualname__ = "_Curriculum"
    globals()["_Curriculum"] = Curriculum
    curriculum = Curriculum()

    cfg = benchmarl_config(tmp_path, iters=3)
    task = bm.SeerTask.PCS_V0.get_task(dict(grid_width=2, grid_height=2, max_cycles=6,
                                            param_sampler={"team_reward_share": {"choice": [0.0, 0.5]}}))
    exp = bm.Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(), model_config=MlpConfig.get_from_yaml(),
                        critic_model_config=MlpConfig.get_from_yaml(), seed=0, config=cfg, callbacks=[curriculum])
    exp.run()
    seen = curriculum.seen
    assert exp.n_iters_performed == 3 and len(seen) == 3
    # 6-step episodes, 6 steps a batch: each batch's copies ran the value set after the one before
    base = seer_envs.get("pcs_v0").build_config({})
    assert (seen[0] == getattr(base, field)).all()
    assert (seen[1] == 600.0).all() and (seen[2] == 700.0).all()


@pytest.mark.heavy
def test_rllib_set_params_reaches_remote_runners_and_a_refusal_kills_none():
    """``set_params(algo, ...)`` on a runner in its own Ray actor: the value
    is in force after a ``train()`` (its copies restarted), and a refused
    value raises in the driver while the runner lives on (RLlib kills a
    runner whose ``apply`` raises)."""
    rllib = _rllib()
    ray = pytest.importorskip("ray")
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    rllib.register()
    field, _ = _varied("pcs_v0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        cfg = (PPOConfig()
               .environment("seer/pcs_v0", env_config=dict(grid_width=2, grid_height=2, max_cycles=4, num_threads=1,
                                                           seed=1))
               .multi_agent(policies={"shared"}, policy_mapping_fn=lambda a, *x, **k: "shared")
               .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec()}))
               .env_runners(num_env_runners=1, num_envs_per_env_runner=2, env_runner_cls=rllib.SeerMultiAgentEnvRunner)
               .training(train_batch_size_per_learner=40, minibatch_size=20, num_epochs=1))
        algo = cfg.build_algo()
        assert rllib.set_params(algo, **{field: 321.0}) == [0, 2]       # the local runner holds no env
        with pytest.raises(ValueError, match=f"PCSConfig.{field} must be"):
            rllib.set_params(algo, **{field: -1.0})
        algo.train()
        got = algo.env_runner_group.foreach_env_runner(lambda r: r.env and r.env.params[field].tolist())
        assert got[-1] == [321.0, 321.0]
        assert algo.env_runner_group.num_healthy_remote_workers() == 1
        algo.stop()
    finally:
        ray.shutdown()
