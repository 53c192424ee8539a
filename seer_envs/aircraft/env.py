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
Infos                  ``energy``, ``alive``, ``targets_in_range``,
                       ``belief_age`` (s, -1 when none) and the UAV's
                       cumulative counters: ``collisions``,
                       ``messages_received``, ``messages_sent``,
                       ``detections`` (SENSE events that saw a target),
                       ``belief_updates`` (fresher estimates taken from a
                       MSG), ``dynamics_events``
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
``target_speed`` (5 m/s); plus ``num_threads`` (``"auto"`` or an int >= 1)
and ``render_mode`` (``None``, ``"rgb_array"``: a top-down H x W x 3 image
of UAVs with headings and sensor ranges and the targets, ``"human"``: a
text map printed to stdout).

Fast path: ``reset_arrays(seed)`` and ``step_arrays(actions)`` take and
return NumPy arrays in ``possible_agents`` order, with no per-agent dicts:
actions are a float array ``(num_uavs, 2)`` (continuous) or an int array
``(num_uavs,)`` (discrete), one row per UAV including finished ones (their
rows are checked but ignored).

Version history: v0 — first release.
"""

import sys

import numpy as np
from gymnasium import spaces

from seer_envs._config import build
from seer_envs._parallel import SeerParallelEnv
from seer_envs.aircraft.config import AircraftConfig
from seer_envs.aircraft.handlers import ACTION_KIND, COUNTERS, AircraftModel, boundary
from seer_envs.aircraft.handlers import OBS_SIZE_PY as OBS_SIZE

N_DISCRETE = 9
RENDER_SIZE = 384


def observation_bounds():
    """(low, high) of the observation vector (see the module docstring)."""
    low = np.full(OBS_SIZE, -1.0, np.float32)
    high = np.full(OBS_SIZE, 1.0, np.float32)
    low[0:2] = 0.0
    low[4] = 0.0
    for m in range(4):
        low[7 + 4 * m:9 + 4 * m] = -2.0
        high[7 + 4 * m:9 + 4 * m] = 2.0
    high[23] = np.inf
    low[24], high[24] = 0.0, np.inf
    return low, high


class AircraftEnv(SeerParallelEnv):
    """The Aircraft ParallelEnv.  Build it with ``seer_envs.aircraft_v0.parallel_env(**kwargs)``."""

    #: Where each part of the observation lives (indices into the 25 entries).
    obs_layout = {"position": slice(0, 2), "velocity": slice(2, 4), "energy": 4,
                  "neighbours": slice(5, 21), "target_rel": slice(21, 23), "target_age": 23,
                  "messages": 24}

    metadata = {"render_modes": ["human", "rgb_array"], "name": "aircraft_v0",
                "is_parallelizable": True, "render_fps": 4}

    def __init__(self, render_mode=None, num_threads="auto", **params):
        self.config = build(AircraftConfig, params)
        cfg = self.config
        self.max_cycles = cfg.max_cycles
        self.possible_agents = [f"uav_{i}" for i in range(cfg.num_uavs)]
        self._init_common(render_mode, num_threads)
        n = cfg.num_uavs
        low, high = observation_bounds()
        obs_space = spaces.Box(low, high, (OBS_SIZE,), np.float32)
        if cfg.continuous_actions:
            act_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
            self._actions_in = np.zeros((n, 2), np.float64)
        else:
            act_space = spaces.Discrete(N_DISCRETE)
            self._actions_in = np.zeros(n, np.int64)
            self._table = cfg.action_table
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, (6 * n + 4 * cfg.num_targets,), np.float32)
        self._obs = np.zeros((n, OBS_SIZE), np.float32)
        self._rew = np.zeros(n, np.float32)
        self._term = np.zeros(n, np.uint8)
        self._model = None
        self._engine = None
        self._cycle = 0

    # --- PettingZoo API ------------------------------------------------------

    def reset(self, seed=None, options=None):
        """Start an episode; returns ``(observations, infos)`` dicts."""
        obs = self.reset_arrays(seed=seed, options=options)
        return self._obs_dict(obs, self.agents), self._infos(self.agents)

    def step(self, actions):
        """Advance one step of ``dt`` seconds with an action per live UAV."""
        buf = self._actions_in
        buf[...] = 0
        if self.config.continuous_actions:
            self._check_box_actions(actions, (2,), -1.0, 1.0, buf)
        else:
            self._check_discrete_actions(actions, N_DISCRETE, buf)
        agents = self.agents
        obs, rew, term, trunc = self._step(buf)
        idx = self._index
        return (self._obs_dict(obs, agents),
                {a: float(rew[idx[a]]) for a in agents},
                {a: bool(term[idx[a]]) for a in agents},
                {a: bool(trunc[idx[a]]) for a in agents},
                self._infos(agents))

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

    # --- array fast path ---------------------------------------------------

    def reset_arrays(self, seed=None, options=None):
        """Like :meth:`reset` but returns the (num_uavs, 25) float32 observation array."""
        self._new_episode(seed, options, "aircraft_env", AircraftModel)
        boundary(self._model, 0.0, self._obs, self._rew, self._term, self.num_threads)
        return self._obs.copy()

    def step_arrays(self, actions):
        """Step with one array of actions in ``possible_agents`` order: float
        ``(num_uavs, 2)`` in [-1, 1] (continuous) or int ``(num_uavs,)`` in
        [0, 8] (discrete); rows of finished UAVs are checked but ignored.
        Returns ``(obs, rewards, terminations, truncations)`` arrays over all
        UAVs (``obs`` and ``rewards`` are fresh copies each step;
        ``terminations`` is True for every stopped UAV)."""
        if self._model is None:
            raise RuntimeError("call reset() first")
        if not self.agents:
            raise RuntimeError("the episode has ended (all agents are done); call reset() first")
        n = self.config.num_uavs
        if self.config.continuous_actions:
            a = self._check_box_array(actions, n, (2,), -1.0, 1.0, self.possible_agents)
        else:
            a = self._check_discrete_array(actions, n, N_DISCRETE, self.possible_agents)
        return self._step(a)

    def _step(self, a):
        cfg, m = self.config, self._model
        if cfg.continuous_actions:
            np.multiply(a, cfg.max_accel, out=m.actions, dtype=np.float64)
        else:
            np.take(self._table, a, axis=0, out=m.actions)
        t0 = self._cycle * cfg.dt
        self._engine.inject(t0, ACTION_KIND, 0, cfg.num_uavs)
        self._cycle += 1
        t1 = self._cycle * cfg.dt
        self._engine.run_until(t1)
        boundary(m, t1, self._obs, self._rew, self._term, self.num_threads)
        term = self._term.astype(bool)
        trunc = np.full(cfg.num_uavs, self._cycle >= self.max_cycles) & ~term
        if trunc.any():
            self._set_agents([])
        elif self._term.any():
            self._set_agents([ag for ag in self.agents if not term[self._index[ag]]])
        self._after_step()
        return self._obs.copy(), self._rew.copy(), term, trunc

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

    def _obs_dict(self, obs, agents):
        idx = self._index
        return {a: obs[idx[a]] for a in agents}

    def _infos(self, agents):
        m = self._model
        counters = m.counters.tolist()
        energy = m.energy.tolist()
        alive = m.alive.tolist()
        in_range = m.in_range.tolist()
        bel_t = m.bel_t.tolist()
        now = self._cycle * self.config.dt
        idx = self._index
        out = {}
        for a in agents:
            i = idx[a]
            d = dict(zip(COUNTERS, counters[i]))
            d.update(energy=energy[i], alive=bool(alive[i]), targets_in_range=in_range[i],
                     belief_age=(now - bel_t[i]) if bel_t[i] >= 0 else -1.0)
            out[a] = d
        return out

    def _image(self):
        cfg, m = self.config, self._model
        nu, size = cfg.num_uavs, RENDER_SIZE
        scale = (size - 1) / cfg.arena_size
        img = np.empty((size, size, 3), np.uint8)
        img[...] = (236, 240, 228)
        alive = m.salive.astype(bool)

        def px(x, y):
            # arena y points up, image rows point down
            return (np.clip(np.rint(x * scale), 0, size - 1).astype(np.int64),
                    np.clip(np.rint((cfg.arena_size - y) * scale), 0, size - 1).astype(np.int64))

        ux, uy = m.sx[:nu], m.sy[:nu]
        if alive.any() and cfg.sensor_range * scale >= 1.0:
            ang = np.linspace(0.0, 2 * np.pi, 48, endpoint=False)
            cx = ux[alive, None] + cfg.sensor_range * np.cos(ang)
            cy = uy[alive, None] + cfg.sensor_range * np.sin(ang)
            c, r = px(cx, cy)
            img[r, c] = (170, 200, 240)
        tx, ty = px(m.sx[nu:], m.sy[nu:])
        for dr in range(-2, 3):
            for dc in range(-2, 3):
                img[np.clip(ty + dr, 0, size - 1), np.clip(tx + dc, 0, size - 1)] = (220, 40, 40)
        sp = np.hypot(m.svx[:nu], m.svy[:nu])
        moving = alive & (sp > 1e-9)
        for k in range(1, 9):
            hx = ux[moving] + m.svx[:nu][moving] / sp[moving] * (k * 1.2 / scale)
            hy = uy[moving] + m.svy[:nu][moving] / sp[moving] * (k * 1.2 / scale)
            c, r = px(hx, hy)
            img[r, c] = (20, 30, 120)
        c, r = px(ux, uy)
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                rr, cc = np.clip(r + dr, 0, size - 1), np.clip(c + dc, 0, size - 1)
                img[rr[alive], cc[alive]] = (40, 90, 230)
                img[rr[~alive], cc[~alive]] = (120, 120, 120)
        return img

    def _print_map(self):
        cfg, m = self.config, self._model
        nu = cfg.num_uavs
        w, h = 64, 32
        grid = [["." for _ in range(w)] for _ in range(h)]

        def cell(x, y):
            return (min(h - 1, int((cfg.arena_size - y) / cfg.arena_size * h)),
                    min(w - 1, int(x / cfg.arena_size * w)))

        for t in range(cfg.num_targets):
            r, c = cell(m.sx[nu + t], m.sy[nu + t])
            grid[r][c] = "T"
        arrows = ">^<v"
        for i in range(nu):
            r, c = cell(m.sx[i], m.sy[i])
            if not m.salive[i]:
                ch = "x"
            elif m.svx[i] == 0.0 and m.svy[i] == 0.0:
                ch = "o"
            else:
                # Quadrant index mod 4: (a + pi/4) % 2pi can round up to 2pi itself.
                ch = arrows[int(np.floor((np.arctan2(m.svy[i], m.svx[i]) + np.pi / 4) / (np.pi / 2))) % 4]
            grid[r][c] = ch
        print(f"Aircraft t={self._cycle * cfg.dt:g} s  UAVs alive {int(m.salive.sum())}/{nu}, "
              f"targets {cfg.num_targets}  (arrows: UAV headings, o: hovering, x: stopped, T: target)",
              file=sys.stdout)
        print("\n".join("".join(row) for row in grid), file=sys.stdout)
