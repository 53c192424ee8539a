# SPDX-License-Identifier: BSD-3-Clause
"""The model-derived config bounds (docs/pcs.md, docs/aircraft.md,
"Bounds"): a value just inside each bound is accepted and behaves (time
advances, outputs finite, physics within its limits); just outside is a
ValueError naming the parameter.  Runs that could hang go to a subprocess
with a timeout."""

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import seer_envs
from seer_envs.scenario.config import HORIZON_REL_EPS, FLOAT32_MAX, STEP_WORK_BUDGET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H = 1 / 32     # default RK4 substep: control_period 0.25 / 8 substeps

EDGES = [   # env, common kwargs, parameter, inside, outside
    ("pcs_v0", dict(dt=1.0, max_cycles=3), "handoff_latency", 3 * HORIZON_REL_EPS, 2.9 * HORIZON_REL_EPS),
    ("pcs_v0", dict(move_interval_mean=1.0), "call_interarrival_mean", 2.0**14, 2.0**14 * 1.01),
    ("pcs_v0", {}, "power_control_iters", 2**17, 2**17 + 1),
    ("pcs_v0", {}, "handoff_penalty", FLOAT32_MAX / STEP_WORK_BUDGET / 2, FLOAT32_MAX / STEP_WORK_BUDGET),
    ("aircraft_v0", {}, "wind_tau", H, H * 0.99),
    ("aircraft_v0", {}, "drag", 1 / (2 * 30.0 * H), 1.01 / (2 * 30.0 * H)),
    ("aircraft_v0", dict(num_uavs=64), "dynamics_substeps", 2**15, 2**15 + 1),
    ("aircraft_v0", dict(dt=1.0, max_cycles=3), "comm_latency", 3 * HORIZON_REL_EPS, 2.9 * HORIZON_REL_EPS),
    ("aircraft_v0", {}, "battery_capacity", FLOAT32_MAX / 10, FLOAT32_MAX / 9),
]


@pytest.mark.parametrize("env, common, key, inside, outside", EDGES, ids=[e[2] for e in EDGES])
def test_bound_edges(env, common, key, inside, outside):
    seer_envs.make(env, num_threads=1, **dict(common, **{key: inside}))
    with pytest.raises(ValueError, match=key):
        seer_envs.make(env, num_threads=1, **dict(common, **{key: outside}))


def run_code(code, timeout=60):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


@pytest.mark.parametrize("env, key", [("pcs_v0", "handoff_latency"), ("aircraft_v0", "comm_latency")])
def test_smallest_lookahead_finishes_the_episode(env, key):
    # At the floor 2**-36 x horizon, windows still advance: the episode ends.
    out = run_code(f"""
        import numpy as np, seer_envs
        kw = dict(dt=1.0, max_cycles=3, {key}=3 * 2.0**-36)
        kw.update(dict(grid_width=2, grid_height=2, move_interval_mean=20.0, call_interarrival_mean=5.0)
                  if "{env}" == "pcs_v0" else dict(num_uavs=4))
        for t in (1, 2):
            env = seer_envs.make("{env}", num_threads=t, **kw)
            env.reset_arrays(seed=1)
            sp = env.action_space(env.possible_agents[0]); n = len(env.possible_agents)
            k = 0
            while env.agents:
                o, r, te, tr = env.step_arrays(np.zeros(n, np.int64) if hasattr(sp, "n")
                                               else np.zeros((n, 2), np.float32))
                assert np.isfinite(o).all() and np.isfinite(r).all()
                k += 1
            print(k)
    """)
    assert out.split() == ["3", "3"]


def test_rk4_at_the_stiffness_bound_respects_the_energy_limit():
    """16.3: wind_tau below the substep made every UAV spend 600 energy in one
    step.  At h / wind_tau = 1 (the bound) and h * 2 drag vmax = 1, energy
    per step stays within the physical bound dt * (idle + thrust * (amax +
    drag vmax^2)) and speeds within max_speed."""
    kw = dict(num_uavs=16, wind_tau=H, drag=1 / (2 * 30.0 * H), wind_sigma=3.0, max_cycles=30)
    env = seer_envs.make("aircraft_v0", num_threads=1, **kw)
    cfg = env.config
    bound = cfg.dt * (cfg.idle_power + cfg.thrust_power * (cfg.max_accel + cfg.drag * cfg.max_speed ** 2))
    env.reset_arrays(seed=3)
    m = env._model
    rng = np.random.default_rng(3)
    for _ in range(30):
        before = m.energy.copy()
        o, r, te, tr = env.step_arrays(rng.uniform(-1, 1, (16, 2)).astype(np.float32))
        used = before - m.energy
        assert (used <= bound * (1 + 1e-9)).all(), (used.max(), bound)
        assert np.isfinite(o).all() and np.isfinite(r).all()
        assert (np.hypot(m.vx, m.vy) <= cfg.max_speed * (1 + 1e-12)).all()
    assert m.alive.all()


def test_largest_wind_sigma_and_penalty_give_finite_outputs():
    from seer_envs.aircraft.config import AircraftConfig
    try:
        AircraftConfig(wind_sigma=1e200)
    except ValueError as e:
        smax = float(str(e).split("<= ")[1].split(" ")[0])
    env = seer_envs.make("aircraft_v0", num_threads=1, num_uavs=4, wind_sigma=smax * 0.99, max_cycles=5)
    env.reset_arrays(seed=0)
    while env.agents:
        o, r, te, tr = env.step_arrays(np.zeros((4, 2), np.float32))
        assert np.isfinite(o).all() and np.isfinite(r).all()
    p = FLOAT32_MAX / STEP_WORK_BUDGET / 2
    env = seer_envs.make("pcs_v0", num_threads=1, grid_width=2, grid_height=2, channels_per_cell=1,
                         portables_per_cell=30, call_interarrival_mean=5.0, call_duration_mean=60.0,
                         move_interval_mean=5.0, handoff_penalty=p, max_cycles=5)
    env.reset_arrays(seed=0)
    drops = 0
    while env.agents:
        o, r, te, tr = env.step_arrays(np.zeros(4, np.int64))
        assert np.isfinite(o).all() and np.isfinite(r).all()
        drops += int((r < -1e20).sum())
    assert drops > 0          # the penalty was exercised


def test_ctrl_c_bound_on_one_window():
    # num_uavs * dynamics_substeps <= 2**21 (the window at each step start).
    with pytest.raises(ValueError, match=r"dynamics_substeps.*2\*\*21 // num_uavs=4096"):
        seer_envs.make("aircraft_v0", num_threads=1, num_uavs=4096, dynamics_substeps=1024)
    seer_envs.make("aircraft_v0", num_threads=1, num_uavs=4096, dynamics_substeps=512)
    assert math.isfinite(seer_envs.make("aircraft_v0", num_threads=1).config.expected_work())


def test_reset_walk_is_bounded():
    # reset() walks every phone to its first call: cells x phones x (1 + ia/mv) <= 2**30.
    kw = dict(grid_width=512, grid_height=512, portables_per_cell=16, move_interval_mean=1.0)
    seer_envs.make("pcs_v0", num_threads=1, call_interarrival_mean=200.0, **kw)
    with pytest.raises(ValueError, match="call_interarrival_mean.*reset walks"):
        seer_envs.make("pcs_v0", num_threads=1, call_interarrival_mean=2000.0, **kw)


@pytest.mark.parametrize("kw", [{}, {"dt": 0.3}, {"max_accel": 50.0}, {"wind_tau": 50.0}])
def test_largest_wind_sigma_keeps_energy_near_its_physical_bound(kw):
    """Issue 28: wind_sigma = 2**63 was accepted and every UAV spent all 600
    of its energy in step 1 (the physical bound is 2.8).  At the largest
    wind_sigma now accepted (max_speed / (8.6 x substep)) the energy a UAV
    draws in a step stays within 1.5x idle + thrust (max_accel + drag
    max_speed^2) per second (measured up to 1.30x)."""
    from seer_envs.aircraft.config import AircraftConfig
    with pytest.raises(ValueError, match="wind_sigma must be <=") as info:
        AircraftConfig(wind_sigma=2**63, **kw)
    smax = float(str(info.value).split("<= ")[1].split(" ")[0]) * 0.999
    env = seer_envs.make("aircraft_v0", num_threads=1, num_uavs=64, max_cycles=20, wind_sigma=smax, **kw)
    cfg = env.config
    bound = cfg.dt * (cfg.idle_power + cfg.thrust_power * (cfg.max_accel + cfg.drag * cfg.max_speed ** 2))
    env.reset_arrays(seed=1)
    m = env._model
    rng = np.random.default_rng(0)
    for _ in range(20):
        before = m.energy.copy()
        o, r, te, tr = env.step_arrays(rng.uniform(-1, 1, (64, 2)).astype(np.float32))
        assert (before - m.energy).max() <= 1.5 * bound, ((before - m.energy).max(), bound)
        assert np.isfinite(o).all() and np.isfinite(r).all()
    assert m.alive.all()
