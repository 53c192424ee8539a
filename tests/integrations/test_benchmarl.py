# SPDX-License-Identifier: BSD-3-Clause
"""BenchMARL tasks over SEER's TorchRL env (``seer_envs.integrations.benchmarl``).

BenchMARL 1.5.2 declares ``torchrl<0.12``, so no extra can carry it beside
the ``torchrl`` extra (TorchRL 0.14); README's RL line installs it without
its dependencies, then hydra-core with its own (which changes nothing
installed), and CI's RL step runs these with no skip allowed.  Elsewhere
they skip where BenchMARL is missing."""

import importlib.util
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
pytest.importorskip("torchrl", reason="torchrl is not installed (pip install -e '.[torchrl]')")
if importlib.util.find_spec("benchmarl") is None:      # found, not imported: SEER's module goes first
    pytest.skip("benchmarl is not installed (pip install hydra-core && pip install --no-deps benchmarl==1.5.2)",
                allow_module_level=True)

from seer_envs.integrations.benchmarl import SeerTask  # noqa: E402  (before benchmarl itself)
from seer_envs.views.vector import supported  # noqa: E402
from seer_test_helpers import benchmarl_config  # noqa: E402

TINY = {"PCS_V0": dict(grid_width=2, grid_height=2, max_cycles=6),
        "AIRCRAFT_V0": dict(num_uavs=3, num_targets=1, dynamics_substeps=2, max_cycles=6)}


def test_a_task_per_scenario_with_a_vector_env():
    assert sorted(m.name for m in SeerTask) == sorted(s.upper() for s in supported())
    assert {"PCS_V0", "AIRCRAFT_V0"} <= {m.name for m in SeerTask}


@pytest.mark.parametrize("name", sorted(TINY))
def test_task_specs_match_the_env(name):
    import torch
    task = SeerTask[name].get_task(TINY[name])
    assert task.max_steps(None) == 6
    assert task.supports_discrete_actions()
    assert task.supports_continuous_actions() == (name == "AIRCRAFT_V0")
    env = task.get_env_fun(3, task.supports_continuous_actions(), 0, "cpu")()
    assert tuple(env.batch_size) == (3,)
    A = env.num_agents
    assert task.group_map(env) == {"agents": env.vec.possible_agents}
    obs = task.observation_spec(env)
    assert list(obs["agents"].keys()) == ["observation"] and obs["agents", "observation"].shape[0] == A
    assert task.state_spec(env)["state"].shape == torch.Size(env.vec.single_state_space.shape)
    assert task.action_spec(env)["agents", "action"].shape[0] == A
    td = env.rollout(8, break_when_any_done=False)
    assert td["next", "done"].sum() == 3               # every copy ended once, at step 6
    env.close()
    with pytest.raises(ValueError, match="grid_width"):
        SeerTask.PCS_V0.get_task({"grid_width": 0})


@pytest.mark.heavy
@pytest.mark.parametrize("name, algorithm", [("PCS_V0", "mappo"), ("AIRCRAFT_V0", "ippo")])
def test_one_iteration_trains(name, algorithm, tmp_path):
    """One BenchMARL iteration on 4 copies: MAPPO (its critic on the state)
    with discrete actions on PCS, IPPO with continuous ones on Aircraft; the
    policy's weights move."""
    import torch
    from benchmarl.algorithms import IppoConfig, MappoConfig
    from benchmarl.experiment import Experiment
    from benchmarl.models.mlp import MlpConfig
    torch.set_num_threads(1)
    cfg = benchmarl_config(tmp_path)
    algo = (MappoConfig if algorithm == "mappo" else IppoConfig).get_from_yaml()
    exp = Experiment(task=SeerTask[name].get_task(TINY[name]), algorithm_config=algo,
                     model_config=MlpConfig.get_from_yaml(), critic_model_config=MlpConfig.get_from_yaml(),
                     seed=0, config=cfg)
    assert exp.continuous_actions == (name == "AIRCRAFT_V0")
    before = [p.detach().clone() for p in exp.policy.parameters()]
    exp.run()
    assert exp.n_iters_performed == 1 and exp.total_frames == 24
    assert any(not torch.equal(b, p) for b, p in zip(before, exp.policy.parameters()))


@pytest.mark.heavy
def test_example_runs():
    """examples/benchmarl_mappo_pcs.py end to end at its smallest: train,
    then the held-out comparison."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(root, "examples", "benchmarl_mappo_pcs.py"), "--iters", "1",
                        "--grid", "2", "--copies", "2", "--eval-copies", "2"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "mappo: 1 iterations x 96 env steps" in r.stdout
    assert "learned - random, paired by seed" in r.stdout


@pytest.mark.parametrize("task_id,env_kw", [
    ("pcs_v0", dict(grid_width=4, grid_height=3, max_cycles=6)),
    ("aircraft_v0", dict(num_uavs=4, num_targets=1, dynamics_substeps=2, max_cycles=6, continuous_actions=True))])
def test_the_checks_evaluation_is_torchrls_own_rollout(task_id, env_kw):
    """baselines.py scores BenchMARL's greedy actor by playing it on SEER's
    env (benchmarl_check's policy); the returns are those of TorchRL's own
    deterministic rollout of the same actor on SEER's TorchRL env, seed by
    seed: a BenchMARL row below random is its actor's, not the harness's."""
    import numpy as np
    import torch
    from torchrl.envs.utils import ExplorationType, set_exploration_type

    import seer_envs
    from seer_envs.integrations.torchrl import torchrl_env
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location("benchmarl_check",
                                                  os.path.join(root, "benchmarks", "benchmarl_check.py"))
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    pols, _, _ = check.train(task_id, "mappo", 1, 24, env_kw, 2, 6, epochs=1, minibatches=1)
    greedy = pols["greedy"]
    for seed in (7, 8):
        env = seer_envs.make(task_id, num_threads=1, **env_kw)
        obs, ours = env.reset_arrays(seed=seed), 0.0
        rng = np.random.default_rng(seed)
        while env.agents:
            obs, rew, _, _ = env.step_arrays(greedy(env, obs, rng))
            ours += float(rew.mean(dtype=np.float64))
        tenv = torchrl_env(task_id, 1, num_threads=1, include_state=True, **env_kw)
        tenv.set_seed(seed)
        with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
            td = tenv.rollout(6, greedy.module, break_when_any_done=True)
        theirs = float(td["next", "agents", "reward"].double().sum(1).mean())
        assert td.shape[-1] == 6
        assert abs(ours - theirs) < 1e-4 * max(1.0, abs(ours)), (task_id, seed, ours, theirs)
