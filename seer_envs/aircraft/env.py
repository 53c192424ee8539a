# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft — UAV swarm control (``seer_envs.aircraft_v0``)
=========================================================

A swarm of point-mass UAVs searches a square arena for moving ground
targets, shares what it sees over a short-range radio and must not collide
or run its batteries flat.  Each UAV's flight is integrated with RK4 inside
its own DYNAMICS events (compute-heavy events: ``dynamics_substeps`` is the
granularity knob).  The simulation runs on the SEER runtime, one LP per UAV
and per target; every output is bit-identical at any ``num_threads``.

=====================  =====================================================
Agents                 ``uav_0 .. uav_{num_uavs-1}``; targets are
                       non-agent entities
Action space           ``Box(-1, 1, (2,), float32)``: commanded
                       acceleration in units of ``max_accel`` (clipped to
                       ``max_accel`` in magnitude); with
                       ``continuous_actions=False``: ``Discrete(9)``, 0 =
                       no thrust, 1..8 = ``max_accel`` towards E, NE, N,
                       NW, W, SW, S, SE
Observation space      ``Box(float32, (25,))``: own position / arena_size
                       (2), velocity / max_speed (2), energy /
                       battery_capacity (1); the 4 nearest UAVs within
                       ``comm_range`` (by distance, ties by id): relative
                       position / comm_range and relative velocity /
                       max_speed (4 x 4, zero-padded); the freshest known
                       target: relative position / arena_size and age in
                       steps (3; ``(0, 0, -1)`` when none is known);
                       messages received this step (1).  All from the
                       boundary snapshot at the step end.
State                  every UAV's (x, y) / arena_size, velocity /
                       max_speed, energy / battery_capacity, alive; then
                       every target's (x, y) / arena_size, velocity /
                       max_speed (``state_space``)
Reward                 ``+1`` per target within ``sensor_range`` at the
                       step end (live UAVs), ``-10`` per collision counted
                       this step, ``-0.1 x`` energy used this step
Termination            a UAV whose energy reaches 0 stops, terminates and
                       leaves ``agents``; all truncate at ``max_cycles``
Infos                  ``{}`` per step; at a UAV's last step (and every
                       step with ``full_infos=True``) ``energy``, ``alive``, ``targets_in_range``,
                       ``belief_age`` (s, -1 when none) and the UAV's
                       cumulative counters: ``collisions``,
                       ``messages_received``, ``messages_sent``,
                       ``detections`` (SENSE events that saw a target),
                       ``belief_updates`` (fresher estimates taken from a
                       MSG), ``dynamics_events``; at the last step also
                       ``"episode": {"r": return, "l": length}``
=====================  =====================================================

Dynamics (one step = ``dt``; see ``seer_envs.aircraft.handlers`` for the
event-level detail): ``dv/dt = u + w - drag |v| v``, ``dx/dt = v``, the
wind gust ``w`` an Ornstein-Uhlenbeck process (std ``wind_sigma``,
correlation time ``wind_tau``) driven by one normal pair per RK4 substep
from the UAV's own random stream, energy ``dE/dt = -(idle_power +
thrust_power (|u| + drag |v|^2))``; after each substep the speed is clipped
to ``max_speed`` and the UAV reflects off the arena walls.  SENSE every
``sense_period``: a collision is counted for each other UAV closer than
``collision_radius``, the nearest target within ``sensor_range`` becomes
the UAV's belief, and the belief is sent (``comm_latency`` later) to the
``max_messages`` nearest UAVs within ``comm_range``, who keep it if it is
fresher than theirs.  Other UAVs and targets are seen as they were at the
start of the step (the boundary snapshot); a UAV's own position is live.
Targets move at ``target_speed`` between uniformly drawn waypoints.  UAVs
launch at rest with full energy from a jittered grid in id order (UAV ``i``
at a uniform point of cell ``(i mod c, i div c)``, ``c = ceil(sqrt(num_uavs))``),
so the swarm starts evenly spread and nearby ids are nearby in space;
targets start at uniform points.

Parameters (all keyword; see :class:`~seer_envs.aircraft.config.AircraftConfig`
for units and bounds): ``num_uavs`` (64), ``num_targets`` (``max(1,
num_uavs // 8)``), ``arena_size`` (``250 sqrt(num_uavs)`` m), ``dt`` (1.0),
``control_period`` (0.25), ``dynamics_substeps`` (8), ``sense_period``
(0.5), ``sensor_range`` (150), ``comm_range`` (300), ``max_messages`` (4),
``comm_latency`` (0.05, the lookahead), ``collision_radius`` (5),
``max_speed`` (30), ``max_accel`` (5), ``drag`` (0.02), ``wind_sigma``
(1.0), ``continuous_actions`` (True), ``max_cycles`` (500), and beyond
SCENARIOS.md's table ``wind_tau`` (2.0 s), ``battery_capacity`` (600),
``idle_power`` (0.5 /s), ``thrust_power`` (0.1 /s per m/s^2),
``target_speed`` (5 m/s); plus ``num_threads`` (``"auto"`` or an int >= 1),
``full_infos`` (False) and ``render_mode`` (``None``, ``"rgb_array"``: a top-down H x W x 3 image
of UAVs with headings and sensor ranges and the targets, ``"human"``: a
text map printed to stdout).

Fast path: ``reset_arrays(seed)`` and ``step_arrays(actions)`` take and
return NumPy arrays in ``possible_agents`` order, with no per-agent dicts:
actions are a float array ``(num_uavs, 2)`` (continuous) or an int array
``(num_uavs,)`` (discrete), one row per UAV including finished ones (their
rows are checked but ignored).

Version history: v0 — first release.
"""


import numpy as np
from gymnasium import spaces

from seer_envs._config import build
from seer_envs._parallel import SeerParallelEnv
from seer_envs.aircraft.config import AircraftConfig
from seer_envs.aircraft.handlers import (ACTION_KIND, COUNTERS, OBS_LAYOUT, AircraftModel,
                                         boundary)
from seer_envs.aircraft.handlers import N_NEIGHBOURS_PY as N_NEIGHBOURS
from seer_envs.aircraft.handlers import OBS_SIZE_PY as OBS_SIZE

N_DISCRETE = 9


def observation_bounds():
    """(low, high) of the observation vector (see the module docstring),
    from the handlers' slot enums."""
    low = np.full(OBS_SIZE, -1.0, np.float32)
    high = np.full(OBS_SIZE, 1.0, np.float32)
    low[OBS_LAYOUT["position"]] = 0.0
    low[OBS_LAYOUT["energy"]] = 0.0
    nb = OBS_LAYOUT["neighbours"]
    for m in range(N_NEIGHBOURS):
        rel_v = slice(nb.start + 4 * m + 2, nb.start + 4 * m + 4)     # (dvx, dvy): up to 2 max_speed
        low[rel_v], high[rel_v] = -2.0, 2.0
    high[OBS_LAYOUT["target_age"]] = np.inf
    low[OBS_LAYOUT["messages"]], high[OBS_LAYOUT["messages"]] = 0.0, np.inf
    return low, high


class AircraftEnv(SeerParallelEnv):
    """The Aircraft ParallelEnv.  Build it with ``seer_envs.aircraft_v0.parallel_env(**kwargs)``.

    The episode lifecycle, both APIs, copying and interrupt safety come from
    :class:`~seer_envs._parallel.SeerParallelEnv`; this class writes the
    commands, runs the boundary and renders."""

    #: Where each part of the observation lives (from the handlers' enums).
    obs_layout = OBS_LAYOUT

    metadata = {"render_modes": ["human", "rgb_array"], "name": "aircraft_v0",
                "is_parallelizable": True, "render_fps": 4}

    _scenario_id = "aircraft_v0"
    _model_cls = AircraftModel

    def __init__(self, render_mode=None, num_threads="auto", full_infos=False, **params):
        self.config = build(AircraftConfig, params)
        cfg = self.config
        self.max_cycles = cfg.max_cycles
        self.possible_agents = [f"uav_{i}" for i in range(cfg.num_uavs)]
        n = cfg.num_uavs
        if cfg.continuous_actions:
            self._action_spec = ("box", (2,), -1.0, 1.0)
            act_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        else:
            self._action_spec = ("discrete", N_DISCRETE)
            act_space = spaces.Discrete(N_DISCRETE)
            self._table = cfg.action_table
        self._init_common(render_mode, num_threads, params, full_infos)
        low, high = observation_bounds()
        obs_space = spaces.Box(low, high, (OBS_SIZE,), np.float32)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, (6 * n + 4 * cfg.num_targets,), np.float32)
        self._obs = np.zeros((n, OBS_SIZE), np.float32)
        self._rew = np.zeros(n, np.float32)
        self._term = np.zeros(n, np.uint8)

    def state(self):
        """The global state (see ``state_space``): every UAV's and target's
        position, velocity (and the UAVs' energy and alive flag) at the last
        boundary."""
        self._check_started()
        cfg, m = self.config, self._model
        nu = cfg.num_uavs
        L, v = cfg.arena_size, cfg.max_speed
        u = np.stack([m.sx[:nu] / L, m.sy[:nu] / L, m.svx[:nu] / v, m.svy[:nu] / v,
                      m.energy / cfg.battery_capacity, m.salive.astype(np.float64)], axis=1)
        t = np.stack([m.sx[nu:] / L, m.sy[nu:] / L, m.svx[nu:] / v, m.svy[nu:] / v], axis=1)
        return np.concatenate([u.reshape(-1), t.reshape(-1)]).astype(np.float32)

    # --- the scenario's part of the template ---------------------------------

    def _write_actions(self, a):
        m = self._model
        if self.config.continuous_actions:
            np.multiply(a, self.config.max_accel, out=m.actions, dtype=np.float64)
        else:
            np.take(self._table, a, axis=0, out=m.actions)

    def _inject_actions(self, t0):
        self._engine.inject(t0, ACTION_KIND, 0, self.config.num_uavs, execute=True)

    def _boundary(self, t):
        boundary(self._model, t, self._obs, self._rew, self._term, self.num_threads)
        return self._term.view(bool)

    def _agent_infos(self, rows):
        """Each UAV's energy, alive flag, targets in range, belief age (s,
        -1 when none) and cumulative counters."""
        m = self._model
        counters = m.counters[rows].tolist()
        energy = m.energy[rows].tolist()
        alive = m.alive[rows].astype(bool).tolist()
        in_range = m.in_range[rows].tolist()
        bel_t = m.bel_t[rows].tolist()
        now = self._cycle * self.config.dt
        out = []
        for k in range(len(counters)):
            d = dict(zip(COUNTERS, counters[k]))
            d.update(energy=energy[k], alive=alive[k], targets_in_range=in_range[k],
                     belief_age=(now - bel_t[k]) if bel_t[k] >= 0 else -1.0)
            out.append(d)
        return out

    # --- extras ------------------------------------------------------------

    def summary(self):
        """Swarm-wide totals since reset: every counter, UAVs alive, mean
        energy, targets within sensor range, steps and runtime events."""
        self._check_started()
        m = self._model
        out = dict(zip(COUNTERS, (int(v) for v in m.counters.sum(axis=0))))
        out.update({"alive": int(m.alive.sum()), "mean_energy": float(m.energy.mean()),
                    "targets_in_range": int(m.in_range.sum()), "steps": self._cycle,
                    "events": self._engine.stats()["events"]})
        return out

    def _image(self):
        from seer_envs.aircraft.render import image
        return image(self)

    def _print_map(self):
        from seer_envs.aircraft.render import print_map
        print_map(self)

