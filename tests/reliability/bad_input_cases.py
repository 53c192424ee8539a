# SPDX-License-Identifier: BSD-3-Clause
"""Every kind of bad input a user can hand SEER, as data: (env, category,
what, action, expected exception, message pattern).  Used by
test_bad_input.py and by scripts/bad_input_doc.py (docs/bad_input.md)."""

import math

import numpy as np

import seer_envs

SMALL = {"pcs_v0": dict(grid_width=3, grid_height=2, max_cycles=3),
         "aircraft_v0": dict(num_uavs=4, max_cycles=3)}


def _env(name, **kw):
    env = seer_envs.make(name, num_threads=1, **dict(SMALL[name], **kw))
    return env


def _started(name, **kw):
    env = _env(name, **kw)
    env.reset(seed=0)
    return env


def _good_action(env):
    sp = env.action_space(env.possible_agents[0])
    return 0 if hasattr(sp, "n") else np.zeros(sp.shape, np.float32)


def _actions(env, agent=None, value=None, drop=False, extra=None):
    acts = {a: _good_action(env) for a in env.agents}
    if agent is not None:
        if drop:
            acts.pop(agent)
        else:
            acts[agent] = value
    if extra is not None:
        acts[extra] = _good_action(env)
    return acts


def step_with(name, value, **kw):
    def run():
        env = _started(name, **kw)
        env.step(_actions(env, env.agents[1], value))
    return run


def _finished(name):
    env = _started(name)
    while env.agents:
        env.step(_actions(env))
    return env


CASES = []


def case(env, category, what, exc, match):
    def deco(fn):
        CASES.append((env, category, what, fn, exc, match))
        return fn
    return deco


for name in SMALL:
    second = "cell_1_0" if name == "pcs_v0" else "uav_1"
    discrete = name == "pcs_v0"
    # --- actions through the dict API
    bad_values = ([("out of range (too high)", 99, "must be in"), ("out of range (negative)", -1, "must be in"),
                   ("a float", 1.5, "must be an integer"), ("NaN", float("nan"), "must be an integer"),
                   ("a bool", True, "must be an integer"), ("a string", "1", "must be an integer"),
                   ("None", None, "must be an integer"), ("an array of two", np.array([1, 2]), "scalar")]
                  if discrete else
                  [("out of range", np.array([2.0, 0.0]), "must be in"), ("NaN", np.array([math.nan, 0.0]), "not finite"),
                   ("inf", np.array([0.0, math.inf]), "not finite"), ("wrong shape", np.zeros(3), "shape"),
                   ("a scalar", 0.5, "must be an array"), ("a string", "up", "must be an array"),
                   ("None", None, "must be an array"), ("strings in an array", np.array(["a", "b"]), "real")])
    for what, value, match in bad_values:
        CASES.append((name, "actions (dict)", f"action {what}", step_with(name, value), ValueError,
                      f"{second}.*{match}|{match}.*{second}"))
    CASES.append((name, "actions (dict)", "missing agent",
                  lambda name=name, second=second: (lambda e: e.step(_actions(e, second, drop=True)))(_started(name)),
                  ValueError, f"missing action for agent '{second}'"))
    CASES.append((name, "actions (dict)", "unknown agent",
                  lambda name=name: (lambda e: e.step(_actions(e, extra="ghost_7")))(_started(name)),
                  ValueError, "unknown agent 'ghost_7'"))
    CASES.append((name, "actions (dict)", "not a dict",
                  lambda name=name: _started(name).step([0, 1, 2]), ValueError, "must be a dict"))
    # --- actions through the array API
    n = 6 if discrete else 4

    def arr_case(what, make, match, name=name, n=n):
        def run():
            env = _env(name)
            env.reset_arrays(seed=0)
            env.step_arrays(make(n))
        CASES.append((name, "actions (array)", what, run, ValueError, match))
    if discrete:
        arr_case("wrong length", lambda n: np.zeros(n + 1, np.int64), "shape")
        arr_case("float dtype", lambda n: np.zeros(n, np.float64), "integer")
        arr_case("out of range", lambda n: np.full(n, 42), "cell_0_0")
    else:
        arr_case("wrong shape", lambda n: np.zeros((n, 3), np.float32), "shape")
        arr_case("NaN row", lambda n: np.array([[0, 0]] * (n - 1) + [[math.nan, 0]], np.float32), "uav_3.*not finite")
        arr_case("out of range", lambda n: np.full((n, 2), 3.0, np.float32), "uav_0.*must be in")
        arr_case("strings", lambda n: np.array([["a", "b"]] * n), "real")
    # --- configs
    bad_cfg = ([("grid_width", 0), ("grid_width", 2.5), ("channels_per_cell", "ten"), ("handoff_latency", 0.0),
                ("call_duration_mean", math.nan), ("max_cycles", -3)] if discrete else
               [("num_uavs", 0), ("num_uavs", 3.5), ("dt", -1.0), ("dynamics_substeps", 0),
                ("comm_latency", 0.0), ("continuous_actions", "yes")])
    for key, value in bad_cfg:
        CASES.append((name, "config", f"{key} = {value!r}",
                      lambda name=name, key=key, value=value: _env(name, **{key: value}), ValueError, key))
    CASES.append((name, "config", "unknown key (typo)",
                  lambda name=name: _env(name, max_cycle=3), ValueError, "unknown .* 'max_cycle'"))
    CASES.append((name, "config", "bad render_mode",
                  lambda name=name: _env(name, render_mode="window"), ValueError, "render_mode"))
    # --- thread counts
    for t in (0, -2, 1.5, "two", True, None, 10**6):
        CASES.append((name, "num_threads", f"num_threads = {t!r}",
                      lambda name=name, t=t: seer_envs.make(name, num_threads=t, **SMALL[name]),
                      ValueError, "num_threads"))
    # --- reset arguments
    CASES.append((name, "reset", "seed = -1", lambda name=name: _env(name).reset(seed=-1), ValueError, "seed"))
    CASES.append((name, "reset", "seed = 'abc'", lambda name=name: _env(name).reset(seed="abc"), ValueError, "seed"))
    CASES.append((name, "reset", "options not a dict", lambda name=name: _env(name).reset(options=[1]),
                  TypeError, "options"))
    # --- lifecycle
    CASES.append((name, "lifecycle", "step before reset", lambda name=name: _env(name).step({}),
                  RuntimeError, "reset"))
    CASES.append((name, "lifecycle", "step after the episode ended",
                  lambda name=name: _finished(name).step({}), RuntimeError, "episode has ended"))
    CASES.append((name, "lifecycle", "action for a finished agent (array path after end)",
                  lambda name=name, n=n, discrete=discrete: _finished(name).step_arrays(
                      np.zeros(n, np.int64) if discrete else np.zeros((n, 2), np.float32)),
                  RuntimeError, "episode has ended"))
    CASES.append((name, "lifecycle", "reset after close",
                  lambda name=name: (lambda e: (e.close(), e.close(), e.reset(seed=0)))(_started(name)),
                  RuntimeError, "closed"))
    CASES.append((name, "lifecycle", "state before reset", lambda name=name: _env(name).state(),
                  RuntimeError, "reset"))
