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


# --- issue 16, items 2 and 3: accepted values that hung or gave nonsense.
# Data (env, category, what, kwargs, message pattern), so they can also be
# run in a subprocess with a timeout (test_bad_input.py, test_fuzz.py).
# "pcs_headless" means run_headless(grid 4x4, **kwargs).
HANG = "config: would hang"
NONSENSE = "config: would give nonsense"
ISSUE16 = [
    ("pcs_v0", HANG, "call_interarrival_mean = 1e-300", dict(call_interarrival_mean=1e-300), "call_interarrival_mean"),
    ("pcs_v0", HANG, "call_interarrival_mean = 1e-6 (event storm)", dict(call_interarrival_mean=1e-6), "call_interarrival_mean.*2\\*\\*30"),
    ("pcs_v0", HANG, "move_interval_mean = 1e-300", dict(move_interval_mean=1e-300), "move_interval_mean"),
    ("pcs_v0", HANG, "move_interval_mean = 1e-6 (walk storm)", dict(move_interval_mean=1e-6), "move_interval_mean"),
    ("pcs_v0", HANG, "call_interarrival_mean = 1e300 with moves on", dict(call_interarrival_mean=1e300), "call_interarrival_mean.*move_interval_mean"),
    ("pcs_v0", HANG, "power_control_iters = 10**12", dict(power_control_iters=10**12), "power_control_iters.*<="),
    ("pcs_v0", HANG, "handoff_latency = 1e-13 (T + lookahead == T)", dict(handoff_latency=1e-13), "handoff_latency.*horizon"),
    ("pcs_v0", HANG, "dt = 1e300 (horizon overflows)", dict(dt=1e300), "horizon"),
    ("pcs_headless", HANG, "run_headless end_time = 1e18", dict(end_time=1e18), "end_time.*handoff_latency"),
    ("pcs_headless", HANG, "run_headless end_time = 1e10 (work budget)",
     dict(end_time=1e10, call_interarrival_mean=1.0, move_interval_mean=math.inf), "end_time.*2\\*\\*36"),
    ("aircraft_v0", HANG, "sense_period = 1e-12", dict(sense_period=1e-12), "sense_period"),
    ("aircraft_v0", HANG, "sense_period = 1e-8, 64 UAVs (event storm)", dict(num_uavs=64, sense_period=1e-8), "sense_period.*2\\*\\*30"),
    ("aircraft_v0", HANG, "comm_latency = 1e-300 (T + lookahead == T)", dict(comm_latency=1e-300), "comm_latency.*horizon"),
    ("aircraft_v0", HANG, "dynamics_substeps = 10**6 (one handler)", dict(dynamics_substeps=10**6), "dynamics_substeps.*<="),
    ("aircraft_v0", HANG, "64 UAVs x 10**5 substeps (one window)", dict(num_uavs=64, dynamics_substeps=10**5), "dynamics_substeps.*num_uavs"),
    ("aircraft_v0", NONSENSE, "wind_tau = 1e-3 (RK4 unstable)", dict(wind_tau=1e-3), "wind_tau.*RK4"),
    ("aircraft_v0", NONSENSE, "wind_tau = 5e-3 (RK4 unstable)", dict(wind_tau=5e-3), "wind_tau.*RK4"),
    ("aircraft_v0", NONSENSE, "drag = 100 (RK4 unstable)", dict(drag=100.0), "drag.*RK4"),
    ("aircraft_v0", NONSENSE, "wind_tau * substep underflows (gust forcing inf; found by the fuzzer)",
     dict(dt=1e-160, control_period=1e-160, sense_period=1e-160, comm_latency=1e-160, wind_tau=1e-160,
          dynamics_substeps=1), "wind_tau.*gust forcing"),
    ("aircraft_v0", NONSENSE, "dt = 5e-324 (no control interval; found by the fuzzer)", dict(dt=5e-324),
     "dt.*control_period"),
    ("aircraft_v0", NONSENSE, "wind_sigma = 1e200 (NaN observations)", dict(wind_sigma=1e200), "wind_sigma.*<="),
    # issue 28: every UAV spent all 600 of its energy in step 1 (the physical bound is 2.8)
    ("aircraft_v0", NONSENSE, "wind_sigma = 2**63 (all energy spent in step 1)", dict(wind_sigma=2**63),
     "wind_sigma must be <= .*max_speed.*energy"),
    ("aircraft_v0", NONSENSE, "wind_sigma = 10**100", dict(wind_sigma=10**100), "wind_sigma must be <="),
    ("aircraft_v0", NONSENSE, "wind_sigma = 10**400 (beyond float64)", dict(wind_sigma=10**400),
     "wind_sigma must be a finite number"),
    # issue 28: the message named wind_sigma ("must be <= 0 ... got 1.0")
    ("aircraft_v0", NONSENSE, "wind_tau = 1e308 (message named wind_sigma)", dict(wind_tau=1e308),
     "^AircraftConfig.wind_tau must be <= .*wind_sigma = 1"),
    ("aircraft_v0", NONSENSE, "battery_capacity = 1e308 (infinite mean_energy)", dict(battery_capacity=1e308), "battery_capacity.*<="),
    ("aircraft_v0", NONSENSE, "arena_size = 1e200", dict(num_uavs=1, arena_size=1e200), "arena_size.*squared"),
    ("aircraft_v0", NONSENSE, "max_speed = 1e300", dict(max_speed=1e300), "max_speed.*squared"),
    ("pcs_v0", NONSENSE, "handoff_penalty = 1e38 (float32 reward -inf)", dict(handoff_penalty=1e38), "handoff_penalty.*float32"),
    ("pcs_v0", NONSENSE, "power_control_iters = 2**63 (beyond int64)", dict(power_control_iters=2**63), "power_control_iters.*<="),
    ("aircraft_v0", NONSENSE, "dynamics_substeps = 2**64 (beyond int64)", dict(dynamics_substeps=2**64), "dynamics_substeps.*<="),
    ("aircraft_v0", NONSENSE, "max_cycles = 2**64", dict(max_cycles=2**64), "max_cycles.*<="),
]


def make_issue16(env, kwargs, num_threads=1, full=False):
    """Build (and for headless PCS, run) one ISSUE16 case: on the small
    configs, or with ``full`` at the scenario's default size (a 256 x 256
    grid for headless PCS), as the issue's campaign ran them."""
    if env == "pcs_headless":
        size = {} if full else dict(grid_width=4, grid_height=4)
        return seer_envs.get("pcs_v0").headless(num_threads=num_threads, **dict(size, **kwargs))
    return seer_envs.make(env, num_threads=num_threads, **dict({} if full else SMALL[env], **kwargs))


for _e, _cat, _what, _kw, _match in ISSUE16:
    CASES.append((_e if _e != "pcs_headless" else "pcs_v0", _cat, _what,
                  lambda _e=_e, _kw=_kw: make_issue16(_e, _kw), ValueError, _match))


# --- issue 28, item 4: run arguments, the engine's arguments, memory.
def _headless(end_time, runner="pcs"):
    def run():
        if runner == "pcs":
            import seer_envs
            seer_envs.get("pcs_v0").headless(grid_width=2, grid_height=2, end_time=end_time, num_threads=1)
        else:
            from seer_runtime.models import phold
            phold.run(num_lps=4, end_time=end_time, num_threads=1)
    return run


for _runner, _env_name in (("pcs", "pcs_v0"), ("phold", "pcs_v0")):
    for _label, _v in (("'x'", "x"), ("None", None), ("'5'", "5"), ("True", True), ("[1.0]", [1.0]),
                       ("2**2000 (beyond float64)", 2**2000)):
        CASES.append((_env_name, "run arguments", f"{_runner} end_time = {_label}", _headless(_v, _runner),
                      ValueError, r"^end_time must be a finite number >= 0, got "))


def _engine_call(call):
    def run():
        from seer_runtime.models import phold
        _, eng = phold.make(num_lps=8, num_threads=1, seed=0)
        call(eng)
    return run


for _what, _call, _match in [
        ("inject kind = 2**40", lambda e: e.inject(1.0, 2**40), r"kind must be an int in \[0, 2\*\*31\), got 1099511627776"),
        ("inject kind = -1", lambda e: e.inject(1.0, -1), r"kind must be an int in \[0, 2\*\*31\)"),
        ("inject kind = 'x'", lambda e: e.inject(1.0, "x"), r"kind must be an int"),
        ("inject kind = 1.5", lambda e: e.inject(1.0, 1.5), r"kind must be an int"),
        ("inject lo = 'a'", lambda e: e.inject(1.0, 0, "a"), r"lo must be an int"),
        ("inject hi = 2**70", lambda e: e.inject(1.0, 0, 0, 2**70), r"bad LP range"),
        ("inject time = None", lambda e: e.inject(None, 0), r"time must be a number"),
        ("inject_blocks kind = 2**40", lambda e: e.inject_blocks(1.0, 2**40, [0], 1), r"kind must be an int"),
        ("inject_blocks starts = [0.5]", lambda e: e.inject_blocks(1.0, 0, [0.5], 1), r"starts must be .*ints"),
        ("inject_blocks starts = [2**70]", lambda e: e.inject_blocks(1.0, 0, [2**70], 1), r"starts must be ints"),
        ("inject_blocks starts = 'ab'", lambda e: e.inject_blocks(1.0, 0, "ab", 1), r"starts must be .*ints"),
        ("inject_blocks count = 2**64", lambda e: e.inject_blocks(1.0, 0, [0], 2**64), r"count must be an int"),
        ("freeze_all_but starts = [1.5]", lambda e: e.freeze_all_but([1.5], 1), r"starts must be .*ints"),
        ("reset_lps hi = 1.5", lambda e: (e.init(), e.reset_lps(0, 1.5)), r"hi must be an int"),
        ("lp_counters lp = 'a'", lambda e: e.lp_counters("a"), r"lp must be an int"),
        ("run_until t_end = 'x'", lambda e: e.run_until("x"), r"t_end must be a number")]:
    CASES.append(("pcs_v0", "engine arguments", _what, _engine_call(_call), ValueError, _match))


def _short_of_memory(make, free=8 * 2**30):
    """Run ``make`` as if at most ``free`` bytes were available (the check
    compares against min(the machine's, this), so the case is the same on
    any machine and never allocates what it refuses)."""
    def run():
        from seer_runtime import memory
        real = memory.available_bytes
        memory.available_bytes = lambda: min(real(), free)
        try:
            make()
        finally:
            memory.available_bytes = real
    return run


def _vector(name, copies, **kw):
    return lambda: seer_envs.vector_env(name, copies, num_threads=1, **kw).reset(seed=0)


CASES += [
    ("pcs_v0", "memory", "run_headless grid 4096 x 4096 (ran 64 s, then OutOfMemory)",
     _short_of_memory(lambda: __import__("seer_envs").get("pcs_v0").headless(
         grid_width=4096, grid_height=4096, end_time=1.0, num_threads=1)),
     MemoryError, r"grid_width=4096, grid_height=4096 .* needs about .* GiB .* more than the .* GiB available"),
    ("pcs_v0", "memory", "env grid 256 x 256 with 16 MiB free",
     _short_of_memory(lambda: _env("pcs_v0", grid_width=256, grid_height=256).reset(seed=0), 2**24),
     MemoryError, r"grid_width=256.* needs about .* available"),
    ("pcs_v0", "memory", "vector env of 64 copies of a 64 x 64 grid with 64 MiB free",
     _short_of_memory(_vector("pcs_v0", 64, grid_width=64, grid_height=64), 2**26),
     MemoryError, r"x 64 copies .* needs about .* available.*copies"),
    ("aircraft_v0", "memory", "model of 2**21 UAVs with 64 MiB free",
     _short_of_memory(lambda: seer_envs.get("aircraft_v0").make_model(
         dict(num_uavs=2**21, dynamics_substeps=1, sense_period=4.0, max_messages=0)), 2**26),
     MemoryError, r"num_uavs=2097152, num_targets=262144 needs about .* available"),
    ("aircraft_v0", "memory", "vector env of 64 copies of 64 UAVs with 1 MiB free",
     _short_of_memory(_vector("aircraft_v0", 64, num_uavs=64), 2**20),
     MemoryError, r"num_uavs=64, num_targets=8 x 64 copies needs about .* available"),
]
