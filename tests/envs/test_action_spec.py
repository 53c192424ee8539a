# SPDX-License-Identifier: BSD-3-Clause
"""``Copies.action_spec`` keeps what an action space says: a Box's bounds
element by element and a Discrete space's ``start``; the one validator
(array and dict paths, single and vector envs) refuses an action outside
them, naming the agent (and the element)."""

import re

import numpy as np
import pytest
from gymnasium import spaces

import seer_envs
from seer_envs.episode.actions import check_action_dict, check_actions, resting_action
from seer_envs.scenario.copies import action_spec
from seer_runtime import spec as spec_mod

LOW, HIGH = np.array([-1.0, -0.5], np.float32), np.array([1.0, 0.5], np.float32)


def test_spec_keeps_per_element_bounds_and_start():
    kind, n, start = action_spec(spaces.Discrete(5, start=-2))
    assert (kind, n, start) == ("discrete", 5, -2)
    assert action_spec(spaces.Discrete(3)) == ("discrete", 3, 0)
    kind, shape, low, high = action_spec(spaces.Box(LOW, HIGH))
    assert kind == "box" and shape == (2,)
    assert low.dtype == np.float32 and low.tolist() == [-1.0, -0.5] and high.tolist() == [1.0, 0.5]
    assert not low.flags.writeable
    _, _, low, high = action_spec(spaces.Box(0.0, 2.0, (2, 3), np.float64))   # one interval: 0-d
    assert low.shape == high.shape == () and high == 2.0 and not high.flags.writeable
    assert resting_action(action_spec(spaces.Discrete(5, start=3))) == 3
    box = spaces.Box(np.array([0.5, -1.0]), np.array([1.0, 1.0]), dtype=np.float64)
    assert resting_action(action_spec(box)).tolist() == [0.5, 0.0]


def test_array_validator_uses_start():
    spec, label = action_spec(spaces.Discrete(4, start=-1)), (lambda i: f"agent {i}")
    for dtype in ("i1", ">i4", "<i8"):
        a = np.array([-1, 0, 2, 1], dtype)
        assert check_actions(a, spec, (4,), label) is a
        a[3] = 3
        with pytest.raises(ValueError, match=r"agent 3 must be in \[-1, 2\], got 3"):
            check_actions(a, spec, (4,), label)
        a[3], a[0] = 0, -2
        with pytest.raises(ValueError, match=r"agent 0 must be in \[-1, 2\], got -2"):
            check_actions(a, spec, (4,), label)
    spec = action_spec(spaces.Discrete(2, start=1))
    with pytest.raises(ValueError, match=r"agent 1 must be in \[1, 2\], got 0"):
        check_actions(np.array([1, 0, 2], "u1"), spec, (3,), label)


def test_array_validator_uses_per_element_bounds():
    spec, label = action_spec(spaces.Box(LOW, HIGH)), (lambda c, i: f"copy {c}, agent {i}")
    a = np.array([[[0.9, 0.4], [-1.0, -0.5]]], np.float32)
    assert check_actions(a, spec, (1, 2), label) is a
    a[0, 1, 1] = 0.8                                  # inside [-1, 1], outside element 1's [-0.5, 0.5]
    with pytest.raises(ValueError, match=re.escape("copy 0, agent 1 element (1,) must be in [-0.5, 0.5]")):
        check_actions(a, spec, (1, 2), label)
    a[0, 1, 1] = np.nan
    with pytest.raises(ValueError, match="copy 0, agent 1 is not finite"):
        check_actions(a, spec, (1, 2), label)
    uniform = action_spec(spaces.Box(-1.0, 1.0, (2,), np.float32))  # one interval: the old words
    with pytest.raises(ValueError, match=re.escape("copy 0, agent 0 must be in [-1.0, 1.0]")):
        check_actions(np.array([[[1.5, 0.0]]]), uniform, (1, 1), label)


def _dict_check(actions, spec, agents=("a", "b")):
    agents = list(agents)
    index = {a: i for i, a in enumerate(agents)}
    out = np.zeros((2,) + (() if spec[0] == "discrete" else spec[1]),
                   np.int64 if spec[0] == "discrete" else np.float64)
    return check_action_dict(actions, agents, set(agents), np.arange(2), index, 2, spec, out)


def test_dict_validator_uses_start_and_per_element_bounds():
    spec = action_spec(spaces.Discrete(3, start=1))
    assert _dict_check({"a": 1, "b": 3}, spec).tolist() == [1, 3]
    for bad in (0, 4, -(1 << 63)):
        with pytest.raises(ValueError, match=re.escape(f"action for agent 'b' must be in [1, 3], got {bad}")):
            _dict_check({"a": 1, "b": bad}, spec)
    spec = action_spec(spaces.Box(LOW, HIGH))
    assert _dict_check({"a": np.array([1.0, 0.5], np.float32), "b": [0.0, -0.5]}, spec).tolist() \
        == [[1.0, 0.5], [0.0, -0.5]]
    for bad in (np.array([0.0, 0.6], np.float32), [0.0, -0.6]):
        with pytest.raises(ValueError, match=re.escape("action for agent 'b' element (1,) must be in "
                                                       "[-0.5, 0.5]")):
            _dict_check({"a": np.zeros(2, np.float32), "b": bad}, spec)


# --- through the envs: the variants of tests/_shared/action_space_variants.py -------


@pytest.fixture
def variant():
    """``variant(base_id)``: the id of the variant of ``base_id``, registered
    for this test only, and the base spec."""
    import importlib
    mod = importlib.import_module("action_space_variants")
    specs = {"gossip_v0": mod.GOSSIP, "aircraft_v0": mod.AIRCRAFT}

    def make(base_id):
        spec = spec_mod.register(specs[base_id])
        return spec.id, seer_envs.get(base_id)
    try:
        yield make
    finally:                 # (the first import registers both)
        for spec in specs.values():
            spec_mod._SPECS.pop(spec.id, None)


def test_envs_refuse_an_action_below_start(variant):
    sid, base = variant("gossip_v0")
    env = seer_envs.make(sid, num_threads=1, **base.test_params)
    ref = seer_envs.make("gossip_v0", num_threads=1, **base.test_params)
    n = len(env.possible_agents)
    assert env.action_space(env.possible_agents[0]).start == 1
    env.reset(seed=0)
    ref.reset(seed=0)
    with pytest.raises(ValueError, match=rf"agent '{env.possible_agents[2]}' must be in \[1, 5\], got 0"):
        env.step_arrays(np.array([1, 1, 0] + [1] * (n - 3)))
    with pytest.raises(ValueError, match=rf"agent '{env.possible_agents[0]}' must be in \[1, 5\], got 0"):
        env.step({a: 0 for a in env.agents})
    acts = np.random.default_rng(0).integers(0, 5, (4, n))
    for a in acts:                                   # 1..5 here is 0..4 in gossip_v0
        got, want = env.step_arrays(a + 1), ref.step_arrays(a)
        assert all(np.array_equal(g, w) for g, w in zip(got, want))
    env.step({ag: 5 for ag in env.agents})
    venv = seer_envs.vector_env(sid, 2, num_threads=1, **base.test_params)
    venv.reset(seed=0)
    bad = np.ones((2, n), np.int64)
    bad[1, 3] = 0
    with pytest.raises(ValueError, match=rf"copy 1, agent '{env.possible_agents[3]}' must be in \[1, 5\]"):
        venv.step(bad)
    venv.step(np.full((2, n), 5))
    venv.close()


def test_envs_refuse_an_action_out_of_its_elements_bounds(variant):
    sid, base = variant("aircraft_v0")
    params = dict(base.test_params, continuous_actions=True)
    env = seer_envs.make(sid, num_threads=1, **params)
    env.reset(seed=0)
    n, name = len(env.possible_agents), env.possible_agents[1]
    a = np.zeros((n, 2), np.float32)
    a[1] = [0.0, 0.75]                               # in [-1, 1], out of element 1's bounds
    with pytest.raises(ValueError, match=re.escape(f"agent {name!r} element (1,) must be in [-0.5, 0.5]")):
        env.step_arrays(a)
    with pytest.raises(ValueError, match=re.escape(f"agent {name!r} element (1,) must be in [-0.5, 0.5]")):
        env.step({ag: a[i] for i, ag in enumerate(env.possible_agents)})
    a[1] = [1.0, -0.5]
    env.step_arrays(a)
    env.step({ag: a[i] for i, ag in enumerate(env.possible_agents)})
    venv = seer_envs.vector_env(sid, 2, num_threads=1, **params)
    venv.reset(seed=0)
    b = np.zeros((2, n, 2), np.float32)
    b[0, 1, 1] = -0.6
    with pytest.raises(ValueError, match=re.escape(f"copy 0, agent {name!r} element (1,) must be in "
                                                   "[-0.5, 0.5]")):
        venv.step(b)
    venv.close()
