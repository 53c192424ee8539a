# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by test modules: tests/conftest.py puts this folder (only
it: tests/ itself would make its subfolders, such as tests/benchmarl,
shadow packages) on ``sys.path``, so ``from seer_test_helpers import
contract_error``."""

import dataclasses as _dc
import math as _math

import numpy as np

from seer_runtime import ContractViolation


def contract_error(fn):
    """Everything the ``ContractViolation`` that ``fn()`` raises says, as a
    tuple to compare across thread counts and layouts; AssertionError when
    ``fn`` raises none."""
    try:
        fn()
    except ContractViolation as e:
        return (type(e).__name__, e.reason, str(e), e.time, e.now, e.source, e.target,
                e.kind, e.code)
    raise AssertionError("no ContractViolation")


def env_cases():
    """``pytest.param``s of ``(scenario id, params)`` for every registered
    env: its ``test_params`` (id ``sid``) and, where it declares them, its
    ``test_params_stopping`` (id ``sid-stopping``: agents leave a running
    episode at different steps)."""
    import pytest

    import seer_envs
    out = []
    for sid, spec in seer_envs.envs().items():
        out.append(pytest.param(sid, dict(spec.test_params), id=sid))
        if spec.test_params_stopping is not None:
            out.append(pytest.param(sid, dict(spec.test_params_stopping), id=f"{sid}-stopping"))
    return out


def stopping_cases():
    """The ``sid-stopping`` cases of :func:`env_cases` alone."""
    return [p for p in env_cases() if p.id.endswith("-stopping")]


def random_actions(env, rng):
    """A random valid action for every possible agent, in
    ``possible_agents`` order, from the env's action space."""
    import numpy as np
    space = env.action_space(env.possible_agents[0])
    n = len(env.possible_agents)
    if hasattr(space, "n"):
        return rng.integers(0, space.n, n)
    return rng.uniform(space.low, space.high, (n,) + space.shape).astype(space.dtype)


def same(x, y):
    """Whether two nests of dicts, tuples, lists and arrays are equal, arrays
    bit for bit and of one dtype."""
    import numpy as np
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, (tuple, list)):
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and np.array_equal(x, y)
    return x == y


# --- the agent-exit scenario (tests/envs/test_episode_report.py and the RL views') ---

#: Aircraft, 4 UAVs, constant actions: UAVs 0 and 1 run empty at step 15,
#: UAV 2 at 21, UAV 3 is truncated at 30 (seed 0).
EXIT_KW = dict(num_uavs=4, battery_capacity=20.0, max_cycles=30)
EXIT_ACTS = np.array([[1, 0], [0, 1], [.5, 0], [0, 0]], np.float32)
EXIT_ENDS = {0: (15, "term"), 1: (15, "term"), 2: (21, "term"), 3: (30, "trunc")}


def exit_hand_count(threads=1):
    """Per agent of the agent-exit scenario: (end step, "term"/"trunc",
    return, length), counted by hand from the single env's step_arrays."""
    from seer_envs import aircraft_v0
    env = aircraft_v0.parallel_env(num_threads=threads, **EXIT_KW)
    env.reset_arrays(seed=0)
    ret, out, live = np.zeros(4), {}, np.ones(4, bool)
    for k in range(1, 31):
        _, r, t, tr = env.step_arrays(EXIT_ACTS)
        assert (r[~live] == 0).all() and not (t | tr)[~live].any()       # out of play: nothing
        ret[live] += r[live]
        for i in np.flatnonzero(t | tr):
            out[int(i)] = (k, "term" if t[i] else "trunc", ret[i], k)
        live &= ~(t | tr)
    assert not env.agents
    return out


def three_values(cfg, field):
    """Three valid values of ``field`` around ``cfg``'s (the first is cfg's):
    from the field's declared bounds, each checked by building the config."""
    m = cfg.__dataclass_fields__[field].metadata
    d = getattr(cfg, field)
    lo, hi = m.get("lo"), m.get("hi")
    if m.get("integer"):
        cands = [d + 2, d - 1, d + 1, d + 3, max(d - 2, 0)]
    elif d == 0:
        top = 1.0 if hi is None else min(hi, 1.0)
        cands = [0.6 * top, 0.3 * top, 0.9 * top]
    elif _math.isinf(d):
        cands = [1e4, 3e3]
    else:
        cands = [d * 1.7, d * 0.6, d * 1.3, d * 0.8]
    out = [d]
    for v in cands:
        if len(out) == 3:
            break
        if v in out or (lo is not None and v < lo) or (hi is not None and v > hi):
            continue
        try:
            _dc.replace(cfg, **{field: v})
        except ValueError:
            continue
        out.append(v)
    assert len(out) == 3, f"no three valid values of {field} around {d}"
    return out
