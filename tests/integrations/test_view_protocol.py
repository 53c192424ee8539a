# SPDX-License-Identifier: BSD-3-Clause
"""One view protocol owned by the core (seer_envs.episode.protocol): every
view's step goes through ``EpisodeCore.check_step``, so the same bad input
gives the same error in every view, naming the copy and the agent; the end
kind of a copy and the whole-copies reset check are the core's."""

import re

import numpy as np
import pytest

import seer_envs
from seer_envs.episode.core import EpisodeCore

ENV = "pcs_v0"
P = dict(grid_width=4, grid_height=4, num_threads=1)


def _torch():
    pytest.importorskip("torchrl", reason="torchrl is not installed")
    import torch
    from seer_envs.integrations.torchrl import torchrl_env
    return torch, torchrl_env


def _rllib():
    pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install -e '.[rllib]')")
    from seer_envs.integrations import rllib
    return rllib


class _View:
    """A view behind one interface: ``reset()``, ``step(a)`` with ``a`` the
    ``(copies, agents)`` actions in the view's own form, ``close()``."""

    def __init__(self, name, copies=2, autoreset_mode="disabled", **params):
        kw = dict(P, **params)
        self.name = name
        if name == "parallel":
            self.env = seer_envs.make(ENV, **kw)
        elif name in ("vector", "async"):
            self.env = seer_envs.vector_env(ENV, copies, autoreset_mode=autoreset_mode, **kw)
        elif name == "agent_vector":
            self.env = seer_envs.agent_vector_env(ENV, copies, autoreset_mode=autoreset_mode, **kw)
        elif name == "torchrl":
            self.torch, make = _torch()
            self.env = make(ENV, copies, **kw)
        elif name == "rllib":
            self.env = _rllib().SeerVectorMultiAgentEnv(ENV, copies, **kw)
        self.core = self.env.vec.core if name in ("torchrl", "rllib", "agent_vector") else self.env.core
        self.agents = list(self.core.possible_agents)

    def reset(self):
        out = self.env.reset(seed=0)
        self.td = out if self.name == "torchrl" else None
        return out

    def step(self, a):
        if self.name == "parallel":
            return self.env.step(dict(zip(self.agents, a[0].tolist())))
        if self.name == "rllib":
            return self.env.step([dict(zip(self.agents, row.tolist())) for row in a])
        if self.name == "agent_vector":
            return self.env.step(a.reshape(-1))
        if self.name == "async":
            self.env.send(a)
            return self.env.recv()
        if self.name == "torchrl":
            td = self.td.clone() if self.td is not None else self.env.fake_tensordict()
            td.set(("agents", "action"), self.torch.from_numpy(a))
            return self.env._step(td)
        return self.env.step(a)

    def close(self):
        self.env.close()


ARRAY_VIEWS = ["vector", "async", "agent_vector", "torchrl"]
ALL_VIEWS = ["parallel", "rllib"] + ARRAY_VIEWS


def _zeros(v):
    return np.zeros((v.core.num_copies, v.core.num_agents), np.int64)


@pytest.mark.parametrize("name", ALL_VIEWS)
def test_every_view_steps_through_the_one_preamble(name, monkeypatch):
    calls = []
    original = EpisodeCore.check_step

    def spy(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(EpisodeCore, "check_step", spy)
    v = _View(name, autoreset_mode="next_step" if name == "rllib" else "disabled")
    v.reset()
    for k in range(3):
        v.step(_zeros(v))
        assert len(calls) == k + 1, name
    v.close()


@pytest.mark.parametrize("name", ALL_VIEWS)
def test_a_step_before_reset_and_after_close_says_so_in_every_view(name):
    v = _View(name, autoreset_mode="next_step" if name == "rllib" else "disabled")
    a = _zeros(v)
    if name != "torchrl":              # (TorchRL's env resets as it is built)
        with pytest.raises(RuntimeError, match=re.escape("call reset() first")):
            v.step(a)
    v.reset()
    v.close()
    with pytest.raises(RuntimeError, match="this env was closed"):
        v.step(a)


def test_a_bad_action_gives_one_message_in_every_view():
    """Out of range at copy 1's third agent: the array views give one
    message; the dict views name the same agent (RLlib: and the copy)."""
    msgs = {}
    for name in ALL_VIEWS:
        v = _View(name, autoreset_mode="next_step" if name == "rllib" else "disabled")
        v.reset()
        a = _zeros(v)
        a[-1, 2] = 99
        with pytest.raises(ValueError) as e:
            v.step(a)
        msgs[name] = str(e.value)
        v.step(_zeros(v))              # nothing was stepped: the view steps on
        v.close()
    agent, n = repr(v.agents[2]), v.core.action_spec[1]
    want = f"action for copy 1, agent {agent} must be in [0, {n - 1}], got 99"
    assert {msgs[k] for k in ARRAY_VIEWS} == {want}, msgs
    assert msgs["rllib"] == f"copy 1: action for agent {agent} must be in [0, {n - 1}], got 99"
    assert msgs["parallel"] == f"action for agent {agent} must be in [0, {n - 1}], got 99"


def test_an_ended_copy_refuses_the_same_way_in_every_view():
    """autoreset_mode DISABLED: a step with copy 0 ended is refused before
    the actions are looked at (a bad action too), naming the copy."""
    for name in ARRAY_VIEWS:
        v = _View(name, max_cycles=[2, 5])
        v.reset()
        for _ in range(2):
            v.step(_zeros(v))
        a = _zeros(v)
        a[1, 0] = 99
        with pytest.raises(RuntimeError, match=re.escape("copy 0 has ended (autoreset_mode DISABLED)")):
            v.step(a)
        v.close()


def test_rllib_names_the_copy_and_agent_of_a_missing_or_unknown_agent():
    rllib = _rllib()
    v = rllib.SeerVectorMultiAgentEnv(ENV, 3, **P)
    obs, _ = v.reset(seed=0)
    good = [{a: 0 for a in o} for o in obs]
    first = next(iter(obs[2]))
    missing = [good[0], good[1], {a: 0 for a in list(obs[2])[1:]}]
    with pytest.raises(ValueError, match=re.escape(f"copy 2: missing action for agent {first!r}")):
        v.step(missing)
    with pytest.raises(ValueError, match=re.escape("copy 1: action for unknown agent 'ghost_7'")):
        v.step([good[0], dict(good[1], ghost_7=0), good[2]])
    with pytest.raises(ValueError, match=re.escape("actions must hold one dict per copy (3), got 2")):
        v.step(good[:2])
    before = v.vec.cycles
    v.step(good)                       # the refusals stepped nothing
    assert (v.vec.cycles == before + 1).all()
    v.close()


def test_the_end_kind_is_the_cores_in_rllib_and_torchrl():
    core = EpisodeCore
    term, trunc = core.end_kind(np.array([True, True, False]),
                                np.array([[False, False], [False, True], [True, False]]))
    assert term.tolist() == [True, False, False] and trunc.tolist() == [False, True, False]
    term, trunc = core.end_kind(None, np.zeros((2, 3), bool))
    assert not term.any() and not trunc.any()
    # every copy truncated at max_cycles: "__all__" in RLlib's truncateds, TorchRL's root "truncated"
    rl = _View("rllib", autoreset_mode="next_step", max_cycles=2)
    rl.reset()
    rl.step(_zeros(rl))
    _, _, t, u, _ = rl.step(_zeros(rl))
    assert [d["__all__"] for d in t] == [False, False] and [d["__all__"] for d in u] == [True, True]
    rl.close()
    tr = _View("torchrl", max_cycles=2)
    tr.reset()
    tr.step(_zeros(tr))
    out = tr.step(_zeros(tr))
    assert out["truncated"].all() and not out["terminated"].any() and out["done"].all()
    tr.close()


def test_the_whole_copies_reset_check_is_the_cores():
    """The agent-level vector env and TorchRL refuse a reset mask that
    holds part of a copy with the core's one message."""
    torch, make = _torch()
    msg = "must hold whole copies (the agents of a copy end and restart together); copy 1 is partly set"
    env = seer_envs.agent_vector_env(ENV, 2, autoreset_mode="disabled", **P)
    env.reset(seed=0)
    rows = np.zeros(env.num_envs, bool)
    rows[env.agents_per_copy] = True
    with pytest.raises(ValueError, match=re.escape("options['reset_mask'] " + msg)):
        env.reset(options={"reset_mask": rows})
    env.close()
    tr = make(ENV, 2, **P)
    td = tr.reset()
    part = torch.zeros((2, tr.vec.num_agents, 1), dtype=torch.bool)
    part[1, 0] = True
    td.set(("agents", "_reset"), part)
    with pytest.raises(ValueError, match=re.escape("'_reset' of group 'agents' " + msg)):
        tr.reset(td)
    tr.close()
