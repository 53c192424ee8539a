# SPDX-License-Identifier: BSD-3-Clause
"""SEER's native TorchRL env (``seer_envs.integrations.torchrl``): its specs
pass ``check_env_specs`` on every scenario, a rollout gives the vector
env's observations and rewards bit for bit (partial resets included, at
any thread count), agents end with their copy and a stopped agent is
masked, resets of some copies leave the others alone, bad input is
refused clearly, and without torchrl the import names the extra."""

import os
import subprocess
import sys

import numpy as np
import pytest

import seer_envs
from seer_envs.views.vector import vector_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Small configurations whose copies end at different steps (a list of max_cycles).
SMALL = {
    "pcs_v0": dict(grid_width=4, grid_height=3, dt=30.0, move_interval_mean=20.0,
                   call_interarrival_mean=60.0),
    "aircraft_v0": dict(num_uavs=5, num_targets=2, dynamics_substeps=2, battery_capacity=6.0),
    "gossip_v0": dict(num_agents=8),
}


def _torchrl():
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    pytest.importorskip("torchrl", reason="torchrl is not installed (pip install -e '.[torchrl]')")
    from seer_envs.integrations import torchrl as seer_torchrl
    return seer_torchrl


@pytest.mark.parametrize("env_id", sorted(SMALL))
@pytest.mark.parametrize("include_state", [False, True])
def test_check_env_specs_on_every_scenario(env_id, include_state):
    st = _torchrl()
    from torchrl.envs.utils import check_env_specs
    env = st.torchrl_env(env_id, 3, num_threads=2, include_state=include_state,
                         max_cycles=[2, 4, 3], **SMALL[env_id])
    assert tuple(env.batch_size) == (3,)
    A = env.num_agents
    assert env.group_map == {"agents": env.vec.possible_agents}
    assert tuple(env.full_observation_spec["agents", "observation"].shape[:2]) == (3, A)
    assert tuple(env.full_action_spec["agents", "action"].shape[:2]) == (3, A)
    assert tuple(env.full_done_spec["agents", "done"].shape) == (3, A, 1)
    assert tuple(env.full_done_spec["done"].shape) == (3, 1)
    assert ("state" in env.full_observation_spec.keys()) == include_state
    check_env_specs(env, seed=0)
    env.close()
    assert env.vec.closed


def _replay(env_id, td, seed, threads, kw):
    """The rollout's actions through a vector env stepped by hand
    (``DISABLED``, ended copies restarted with a reset mask, as TorchRL
    does): its outputs at every step, and the reset observations."""
    raw = vector_env(env_id, td.shape[0], num_threads=threads, autoreset_mode="disabled", **kw)
    obs0, _ = raw.reset(seed=seed)
    actions = td["agents", "action"].numpy()
    steps, resets = [], {}
    for t in range(td.shape[1]):
        o, r, te, tr, info = raw.step(actions[:, t])
        state = raw.state()
        steps.append((o, r, te, tr, info.get("_seer_episode"), state))
        if "_seer_episode" in info:
            o2, _ = raw.reset(options={"reset_mask": info["_seer_episode"]})
            resets[t] = (info["_seer_episode"], o2, raw.state())
    raw.close()
    return obs0, steps, resets


@pytest.mark.parametrize("env_id", sorted(SMALL))
@pytest.mark.parametrize("threads,seed", [(1, 0), (2, 5), (3, 9), (4, 123)])
def test_rollout_equals_the_vector_env_bit_for_bit(env_id, threads, seed):
    st = _torchrl()
    import torch
    kw = dict(SMALL[env_id], max_cycles=[3, 5, 4])
    env = st.torchrl_env(env_id, 3, num_threads=threads, include_state=True, **kw)
    env.set_seed(seed)
    torch.manual_seed(seed)
    td = env.rollout(12, break_when_any_done=False)
    env.close()
    obs0, steps, resets = _replay(env_id, td, seed, 1, kw)         # serial reference
    np.testing.assert_array_equal(td["agents", "observation"][:, 0].numpy(), obs0)
    for t, (o, r, te, tr, ended, state) in enumerate(steps):
        nxt = td["next"][:, t]
        np.testing.assert_array_equal(nxt["agents", "observation"].numpy(), o, err_msg=f"step {t}")
        np.testing.assert_array_equal(nxt["agents", "reward"].numpy()[..., 0], r, err_msg=f"step {t}")
        np.testing.assert_array_equal(nxt["state"].numpy(), state, err_msg=f"step {t}")
        done = nxt["done"].numpy()[:, 0]
        np.testing.assert_array_equal(done, np.zeros(3, bool) if ended is None else ended)
        # every agent of a copy ends with its copy, never before
        np.testing.assert_array_equal(nxt["agents", "done"].numpy()[..., 0],
                                      np.repeat(done[:, None], env.num_agents, axis=1))
        if t in resets:              # the restarted copies' first observations, the others kept
            mask, o2, s2 = resets[t]
            cur = td[:, t + 1] if t + 1 < td.shape[1] else None
            if cur is not None:
                np.testing.assert_array_equal(cur["agents", "observation"].numpy()[mask], o2[mask])
                np.testing.assert_array_equal(cur["agents", "observation"].numpy()[~mask], o[~mask])
                np.testing.assert_array_equal(cur["state"].numpy(), s2)
                assert cur["agents", "mask"].numpy()[mask].all()
    ends = td["next", "done"].numpy()[..., 0].sum(axis=1)
    assert ends.tolist() == [4, 2, 3] or env_id == "aircraft_v0"    # 12 steps of 3, 5, 4
    assert td["next", "agents", "reward"].abs().sum() > 0


def test_stopped_agents_are_reported_once_and_masked():
    """Aircraft UAVs run out of battery at different steps: an agent's
    terminated/done flag comes at the step it stops, and only then; from
    then on its mask is False and its reward 0; a copy whose agents all
    stopped is terminated at the step the last one stops."""
    st = _torchrl()
    kw = dict(SMALL["aircraft_v0"], max_cycles=60, battery_capacity=4.0)
    env = st.torchrl_env("aircraft_v0", 4, num_threads=2, **kw)
    env.set_seed(2)
    td = env.rollout(60, break_when_any_done=True)
    nxt = td["next"]
    mask = nxt["agents", "mask"].numpy()                    # (copies, steps, agents)
    rew = nxt["agents", "reward"].numpy()[..., 0]
    done_ag = nxt["agents", "done"].numpy()[..., 0]
    term_ag = nxt["agents", "terminated"].numpy()[..., 0]
    first_off = np.argmax(~mask, axis=1)                    # first step each agent is masked out
    assert (~mask).any(axis=1).any()
    staggered = False
    for c in range(4):
        ended = np.flatnonzero(nxt["done"].numpy()[c, :, 0])
        end = ended[0] if len(ended) else None
        for i in range(env.num_agents):
            if not (~mask[c, :, i]).any():
                continue
            k = first_off[c, i]
            assert (rew[c, k + 1:, i] == 0).all()           # nothing after its stop
            assert not mask[c, k:, i].any()                 # masked from then on
            assert term_ag[c, k, i] and done_ag[c, k, i]    # its end, at its step
            assert done_ag[c, :, i].sum() == 1              # and only then
            if end is not None and k < end:
                staggered = True
        if end is not None and not nxt["truncated"].numpy()[c, end, 0]:
            assert nxt["terminated"].numpy()[c, end, 0] and not mask[c, end].any()
    assert staggered, "no agent stopped before its copy ended: the test saw nothing"
    env.close()


def test_reset_of_some_copies_only():
    st = _torchrl()
    import torch
    from tensordict import TensorDict
    env = st.torchrl_env("pcs_v0", 4, num_threads=2, max_cycles=6, **SMALL["pcs_v0"])
    env.set_seed(1)
    td = env.reset()
    for _ in range(3):
        td = env.step(env.rand_action(td))["next"]
    before = td["agents", "observation"].clone()
    cycles = env.vec.cycles
    want = torch.tensor([[True], [False], [True], [False]])
    td.set("_reset", want)
    out = env.reset(td)
    after = out["agents", "observation"]
    raw = env._reset(TensorDict({"_reset": torch.zeros(4, 1, dtype=torch.bool)}, batch_size=[4]))
    # the env's own rows of copies not reset are their last observations too
    assert torch.equal(raw["agents", "observation"][1], before[1])
    assert env.vec.cycles.tolist() == [0, cycles[1], 0, cycles[3]]
    assert torch.equal(after[1], before[1]) and torch.equal(after[3], before[3])
    assert not torch.equal(after[0], before[0])
    # the group's _reset, whole copies, does the same; a partial copy is refused
    A = env.num_agents
    sub = torch.zeros(4, A, 1, dtype=torch.bool)
    sub[3] = True
    td = env.step(env.rand_action(out))["next"]
    td.set(("agents", "_reset"), sub.clone())
    env.reset(td)
    assert env.vec.cycles[3] == 0 and env.vec.cycles[1] == cycles[1] + 1
    sub[1, 0] = True
    with pytest.raises(ValueError, match="whole copies"):
        env.reset(TensorDict({"agents": TensorDict({"_reset": sub}, batch_size=[4, A])}, batch_size=[4]))
    env.close()


def test_outputs_share_no_memory():
    """Zero-copy, but never aliased: each output tensor of a step or reset
    has memory of its own, so TorchRL writing one (a done flag in place)
    or keeping it (a rollout) changes nothing else."""
    st = _torchrl()
    env = st.torchrl_env("pcs_v0", 2, num_threads=1, include_state=True, max_cycles=3, **SMALL["pcs_v0"])
    env.set_seed(0)
    outs = [env.reset()]
    for _ in range(3):
        outs.append(env.step(env.rand_action(outs[-1]))["next"])
    keys = [("agents", k) for k in ("observation", "reward", "mask", "done", "terminated", "truncated")]
    keys += ["done", "terminated", "truncated", "state"]
    ptrs = [td.get(k).untyped_storage().data_ptr() for td in outs for k in keys if k in td.keys(True)]
    assert len(ptrs) == 4 * 10 - 1            # a reset has no reward
    assert len(ptrs) == len(set(ptrs))
    env.close()


def test_bad_input_is_refused_clearly():
    st = _torchrl()
    kw = SMALL["pcs_v0"]
    with pytest.raises(ValueError, match='autoreset_mode="disabled"'):
        st.SeerTorchRLEnv(vector_env("pcs_v0", 2, num_threads=1, **kw))
    with pytest.raises(TypeError, match="vec must be a SeerVectorEnv"):
        st.SeerTorchRLEnv(seer_envs.make("pcs_v0", num_threads=1, **kw))
    vec = vector_env("pcs_v0", 2, num_threads=1, autoreset_mode="disabled", **kw)
    with pytest.raises(TypeError, match="group"):
        st.SeerTorchRLEnv(vec, group="")
    with pytest.raises(TypeError, match="include_state"):
        st.SeerTorchRLEnv(vec, include_state="yes")
    env = st.SeerTorchRLEnv(vec)
    with pytest.raises(ValueError, match="seed"):
        env.set_seed(-1)
    td = env.rand_action(env.reset())
    td["agents", "action"][1, 2] = 99
    with pytest.raises(ValueError, match=r"copy 1, agent 'cell_\d+_\d+' must be in"):
        env.step(td)
    with pytest.raises(ValueError, match="num_envs"):
        st.torchrl_env("pcs_v0", 0, **kw)
    env.close()


def test_import_without_torchrl_names_the_extra():
    code = ("import sys; sys.modules['torchrl'] = None\n"
            "try:\n    import seer_envs.integrations.torchrl\n"
            "except ImportError as e:\n    print('ERR', e)\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ERR" in out.stdout and '".[torchrl]"' in out.stdout, out.stdout
