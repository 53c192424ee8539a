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
    space = env.action_space(env.possible_agents[0])
    n = len(env.possible_agents)
    if hasattr(space, "n"):
        return rng.integers(space.start, space.start + space.n, n)
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
    import seer_envs
    env = seer_envs.make("aircraft_v0", num_threads=threads, **EXIT_KW)
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


def events_place(raw):
    """(offset, length) of the pending events' bytes in the snapshot bytes
    ``raw`` (length 0 if it holds none): where a test flips a bit of an
    event."""
    import json
    from seer_envs.snapshot import whole as S
    hlen = S._HEAD.unpack_from(raw)[3]
    head = json.loads(raw[S._HEAD.size:S._HEAD.size + hlen])
    off = S._HEAD.size + hlen
    for name, dtype, shape in head["arrays"]:
        nb = np.dtype(dtype).itemsize * int(np.prod(shape, dtype=np.int64))
        if name.endswith("engine/events"):
            return off, nb
        off += nb + S._pad8(nb)
    return off, 0


def benchmarl_config(save_folder, iters=1, copies=4, steps=6):
    """BenchMARL's default ``ExperimentConfig`` cut to a test's size:
    ``iters`` on-policy iterations of ``copies`` copies x ``steps`` steps,
    two minibatches each, no evaluation, logger, JSON or checkpoint."""
    from seer_envs.integrations.benchmarl import ExperimentConfig   # SEER's module goes first
    cfg = ExperimentConfig.get_from_yaml()
    cfg.max_n_iters = iters
    cfg.max_n_frames = iters * copies * steps
    cfg.on_policy_collected_frames_per_batch = copies * steps
    cfg.on_policy_n_envs_per_worker = copies
    cfg.on_policy_n_minibatch_iters = 1
    cfg.on_policy_minibatch_size = copies * steps // 2
    cfg.evaluation = False
    cfg.render = False
    cfg.loggers = []
    cfg.create_json = False
    cfg.checkpoint_interval = 0
    cfg.save_folder = str(save_folder)
    return cfg


def per_copy_equals_singles(env_id, kw, per, threads, steps, actions, seed, **vkw):
    """Copy ``c`` of a vector env of ``env_id`` (``same_step`` autoreset)
    built from ``kw`` and the per-copy values ``per`` (``{field: [value per
    copy]}``) gives, bit for bit, what a single env built with copy ``c``'s
    values and seeded ``seed + c`` gives, at every step of ``steps``: the
    observations, rewards, terminations, truncations, final observations
    and global state.  ``actions(rng)`` gives one step's ``(copies, agents,
    ...)`` actions.  Returns the agents that stopped in each copy."""
    import seer_envs
    E = len(next(iter(per.values())))
    v = seer_envs.vector_env(env_id, E, num_threads=threads, autoreset_mode="same_step",
                             **dict(kw, **per), **vkw)
    singles = [seer_envs.make(env_id, num_threads=1, **dict(kw, **{f: vs[c] for f, vs in per.items()}))
               for c in range(E)]
    obs, _ = v.reset(seed=seed)
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c], s.reset_arrays(seed=seed + c), err_msg=f"copy {c}")
    for f, vs in per.items():
        np.testing.assert_array_equal(v.params[f], vs)
    rng = np.random.default_rng(threads)
    stopped = np.zeros(E, np.int64)
    for k in range(steps):
        a = actions(rng)
        obs, rew, term, trunc, infos = v.step(a)
        states = v.state()
        for c, s in enumerate(singles):
            o, r, t, tr = s.step_arrays(a[c])
            msg = f"{per} step {k} copy {c}"
            np.testing.assert_array_equal(rew[c].view(np.uint32), r.view(np.uint32), err_msg=msg)
            np.testing.assert_array_equal(term[c], t, err_msg=msg)
            np.testing.assert_array_equal(trunc[c], tr, err_msg=msg)
            stopped[c] += int(np.sum(t))
            if not s.agents:                    # same_step: the copy has restarted
                np.testing.assert_array_equal(infos["final_obs"][c], o, err_msg=msg)
                o = s.reset_arrays()
            np.testing.assert_array_equal(obs[c], o, err_msg=msg)
            np.testing.assert_array_equal(states[c], s.state(), err_msg=msg)
    for c, s in enumerate(singles):
        s.close()
    v.close()
    return stopped


def imported_modules(folder):
    """``(file name, module)`` for every absolute import in the ``.py`` files
    of ``folder`` (``from a.b import c`` gives ``a.b`` and ``a.b.c``): what
    the layering tests check against the layout."""
    import ast
    import os
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".py"):
            continue
        with open(os.path.join(folder, f)) as src:
            tree = ast.parse(src.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            for m in mods:
                yield f, m
