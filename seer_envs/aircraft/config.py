# SPDX-License-Identifier: BSD-3-Clause
"""Parameters of the Aircraft scenario (docs/aircraft.md). SI units."""

import dataclasses
import math
import sys

import numpy as np

from seer_envs.scenario.config import (FLOAT32_MAX, HANDLER_WORK_BUDGET, STEP_WORK_BUDGET, bound_error,
                               check_horizon, param, validate)

MAX_MESSAGES = 64       # cap on max_messages (the SENSE handler's top-k buffer)
MAX_GRID_SIDE = 4096    # cap on the snapshot grid's cells per side
MAX_ENTITIES = 2**32 - 2
#: All UAVs' DYNAMICS events fall in one window at every step start; a window
#: runs without the GIL, so num_uavs * dynamics_substeps RK4 substeps (37-100 ns
#: each) bound how long Ctrl-C waits: 2**21 is 0.08-0.2 s on one idle core.
WINDOW_SUBSTEP_BUDGET = 2**21
#: Largest h * max(1 / wind_tau, 2 * drag * max_speed) of an RK4 substep.
#: Explicit RK4 is stable on the real axis for h * rate < 2.785; at 1 the
#: amplification of the wind's decay is 0.375 and the discretised gust keeps
#: 91% of its stationary variance (exactly 1 as h -> 0).
RK4_STIFFNESS_MAX = 1.0
#: Speeds and accelerations are squared in the dynamics and distances are
#: squared in the sensing: kept below sqrt(float64 max) / 2**13.
SQUARE_SAFE = 2.0 ** 499
#: Largest |n| of a Box-Muller normal from 53-bit uniforms: sqrt(2 * 53 ln 2).
GAUSS_MAX = 8.6


@dataclasses.dataclass(frozen=True)
class AircraftConfig:
    """Frozen, validated Aircraft parameters; every field is settable by
    keyword and from config files.  ``num_targets`` and ``arena_size`` left
    as ``None`` become ``max(1, num_uavs // 8)`` and ``250 * sqrt(num_uavs)``.

    The last five fields are not in the scenario spec's table (docs/aircraft.md,
    "Model notes"): the spec names a
    wind gust as an Ornstein-Uhlenbeck process, an energy budget and
    moving targets but not their time constant, capacity, power draw or
    speed, so they are parameters here with documented defaults.
    """

    num_uavs: int = param(64, "UAVs", "agents", lo=1, hi=MAX_ENTITIES - 1, integer=True)
    num_targets: int = param(None, "targets", "moving ground targets (entities, not agents); "
                             "None: max(1, num_uavs // 8)", lo=0, integer=True)
    arena_size: float = param(None, "m", "side of the square arena; None: 250 * sqrt(num_uavs)",
                              lo=0.0, lo_open=True)
    dt: float = param(1.0, "s", "simulated time of one env step", lo=0.0, lo_open=True)
    control_period: float = param(0.25, "s", "period of each UAV's DYNAMICS and each target's "
                                  "TARGET_MOVE event", lo=0.0, lo_open=True)
    dynamics_substeps: int = param(8, "substeps", "RK4 substeps per DYNAMICS event "
                                   "(event-granularity knob)", lo=1, hi=HANDLER_WORK_BUDGET, integer=True)
    sense_period: float = param(0.5, "s", "period of each UAV's SENSE event", lo=0.0, lo_open=True)
    sensor_range: float = param(150.0, "m", "targets seen within this", lo=0.0)
    comm_range: float = param(300.0, "m", "neighbours messaged (and observed) within this",
                              lo=0.0, lo_open=True)
    max_messages: int = param(4, "messages", "MSGs per SENSE, to the nearest neighbours in range",
                              lo=0, hi=MAX_MESSAGES, integer=True)
    comm_latency: float = param(0.05, "s", "message delay: the cross-entity lookahead",
                                lo=0.0, lo_open=True)
    collision_radius: float = param(5.0, "m", "closer than this to another UAV counts a collision",
                                    lo=0.0)
    max_speed: float = param(30.0, "m/s", "speed limit of a UAV", lo=0.0, lo_open=True)
    max_accel: float = param(5.0, "m/s^2", "commanded acceleration limit (actions are scaled by it)",
                             lo=0.0)
    drag: float = param(0.02, "1/m", "quadratic drag: dv/dt gets -drag * |v| * v", lo=0.0)
    wind_sigma: float = param(1.0, "m/s^2", "stationary std of each UAV's OU wind gust "
                              "(per axis); at most max_speed / (8.6 x the RK4 substep) (111 at "
                              "the defaults): a gust of the largest normal draw may change a "
                              "UAV's speed by at most max_speed within one substep, so energy "
                              "use stays near its physical bound", lo=0.0)
    continuous_actions: bool = param(True, "", "Box(-1, 1, (2,)) commanded acceleration; "
                                     "False: Discrete(9) (stay + 8 directions)",
                                     choices=(True, False))
    max_cycles: int = param(500, "steps", "truncation", lo=1, hi=2**53, integer=True)
    # --- not in the scenario spec's table (see the class docstring) ---
    wind_tau: float = param(2.0, "s", "correlation time of the OU wind gust", lo=0.0, lo_open=True)
    battery_capacity: float = param(600.0, "energy units", "initial energy of every UAV "
                                    "(<= float32 max / 10: a UAV may spend it all in one step, at "
                                    "reward -0.1 per unit)", lo=0.0, lo_open=True, hi=FLOAT32_MAX / 10)
    idle_power: float = param(0.5, "units/s", "power drawn at rest", lo=0.0)
    thrust_power: float = param(0.1, "units/s per m/s^2", "power per unit of commanded "
                                "acceleration plus drag deceleration", lo=0.0)
    target_speed: float = param(5.0, "m/s", "speed of the random-waypoint targets", lo=0.0)

    def __post_init__(self):
        if self.num_targets is None:
            n = self.num_uavs
            if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
                object.__setattr__(self, "num_targets", max(1, int(n) // 8))
        if self.arena_size is None:
            n = self.num_uavs
            if isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1:
                object.__setattr__(self, "arena_size", 250.0 * math.sqrt(int(n)))
        if not isinstance(self.continuous_actions, (bool, np.bool_)):
            raise ValueError(f"AircraftConfig.continuous_actions must be True or False, "
                             f"got {self.continuous_actions!r}")
        validate(self)
        object.__setattr__(self, "continuous_actions", bool(self.continuous_actions))
        if self.num_uavs + self.num_targets > MAX_ENTITIES:
            raise ValueError(f"AircraftConfig: num_uavs + num_targets must be <= {MAX_ENTITIES}")
        if self.dt / self.control_period > 1_000_000:
            raise ValueError("AircraftConfig: dt / control_period must be <= 1e6 "
                             f"(got dt={self.dt!r}, control_period={self.control_period!r})")
        self._check_model()

    def _check_model(self):
        """Model-derived bounds (docs/aircraft.md, "Bounds")."""
        name = "AircraftConfig"
        horizon = self.max_cycles * self.dt
        if not horizon <= 1e300:
            raise ValueError(f"{name}: the horizon max_cycles * dt = {horizon!r} must be finite "
                             "and <= 1e300")
        check_horizon(name, self, ("comm_latency", "sense_period", "control_period"), horizon,
                      "max_cycles * dt")
        for key in ("arena_size", "max_speed", "max_accel", "comm_range", "sensor_range",
                    "collision_radius", "target_speed"):
            if getattr(self, key) > SQUARE_SAFE:
                raise bound_error(name, key, getattr(self, key), "<=", SQUARE_SAFE,
                                  "2**499: it is squared in the dynamics or the sensing")
        top = WINDOW_SUBSTEP_BUDGET // self.num_uavs
        if self.dynamics_substeps > top:
            raise bound_error(name, "dynamics_substeps", self.dynamics_substeps, "<=", max(top, 0),
                              f"2**21 // num_uavs={self.num_uavs}: every UAV's DYNAMICS runs in "
                              "one window, which Ctrl-C cannot interrupt")
        h = self.control_period / self.dynamics_substeps
        n = self.control_intervals
        h_min = min(h, (self.dt - (n - 1) * self.control_period) / self.dynamics_substeps)
        if not (n >= 1 and h_min >= sys.float_info.min):
            raise ValueError(f"{name}.dt = {self.dt!r} is too small against control_period = "
                             f"{self.control_period!r}: the step's last control interval / "
                             f"dynamics_substeps must be a normal float64 (>= {sys.float_info.min:.6g})")
        if not self.wind_tau * h_min >= sys.float_info.min:
            raise bound_error(name, "wind_tau", self.wind_tau, ">=", sys.float_info.min / h_min,
                              f"float64 min / the smallest RK4 substep {h_min:g}: the gust forcing "
                              "wind_sigma * sqrt(2 / (wind_tau * substep)) must be finite")
        if h / self.wind_tau > RK4_STIFFNESS_MAX:
            raise bound_error(name, "wind_tau", self.wind_tau, ">=", h / RK4_STIFFNESS_MAX,
                              "the RK4 substep control_period / dynamics_substeps = "
                              f"{h:g}: explicit RK4 on the wind's decay needs substep / wind_tau "
                              "<= 1 (stable below 2.785)")
        if 2.0 * self.drag * self.max_speed * h > RK4_STIFFNESS_MAX:
            raise bound_error(name, "drag", self.drag, "<=", RK4_STIFFNESS_MAX / (2 * self.max_speed * h),
                              f"1 / (2 * max_speed * substep), substep = {h:g}: explicit RK4 on "
                              "the linearised drag at the speed limit needs 2 drag max_speed h <= 1")
        # The gust against the energy model.  The stationary gust is N(0,
        # wind_sigma^2) per axis; a gust of GAUSS_MAX standard deviations held
        # over the largest substep used must change a speed by at most
        # max_speed.  Then RK4's stage speeds stay within about twice
        # max_speed and the energy drawn (idle + thrust (|u| + drag |v|^2)) near
        # its physical bound: 2.9 per step against idle_power + thrust_power
        # (max_accel + drag max_speed^2) = 2.8 at the defaults with
        # wind_sigma at the bound (111), where wind_sigma = 2**63 spent all
        # 600 of every UAV's energy in step 1.
        h_max = h if n >= 2 else (self.dt - (n - 1) * self.control_period) / self.dynamics_substeps
        smax = self.max_speed / (GAUSS_MAX * h_max)
        if self.wind_sigma > smax:
            raise bound_error(name, "wind_sigma", self.wind_sigma, "<=", smax,
                              f"max_speed / (8.6 x the RK4 substep {h_max:g}): a gust of the "
                              "largest normal draw may change a speed by at most max_speed in "
                              "one substep, so RK4 stays within about twice max_speed and energy "
                              "use near its physical bound")
        # Worst gust: forcing GAUSS_MAX * wind_sigma * sqrt(2 / (wind_tau h_min))
        # held over a substep, and |w| <= wind_tau * that; one substep's stages may
        # add h * (max_accel + |w| + drag * V^2) to a speed <= max_speed.  With
        # wind_sigma in its bound above, only a huge wind_tau (or max_accel with
        # a long substep) can break this: name that one.
        wmax_per_sigma = GAUSS_MAX * math.sqrt(2.0) * math.sqrt(self.wind_tau) / math.sqrt(h_min)
        base = self.max_accel + self.drag * self.max_speed * self.max_speed
        gust = self.wind_sigma * wmax_per_sigma if self.wind_sigma > 0 else 0.0
        if h * base > SQUARE_SAFE / 2:
            raise bound_error(name, "max_accel", self.max_accel, "<=",
                              max(0.0, SQUARE_SAFE / (2 * h) - self.drag * self.max_speed ** 2),
                              f"2**498 / the RK4 substep {h:g}: a substep's change of speed "
                              "must stay below 2**499, so observations stay finite")
        if h * (base + gust) > SQUARE_SAFE:
            room = (SQUARE_SAFE / h - base) / (GAUSS_MAX * self.wind_sigma)
            tmax = 0.5 * h_min * room * room
            raise bound_error(name, "wind_tau", self.wind_tau, "<=", tmax,
                              f"with wind_sigma = {self.wind_sigma:g}, the gust's worst bound "
                              "8.6 wind_sigma sqrt(2 wind_tau / substep) over one RK4 substep "
                              "must keep speeds below 2**499, so observations stay finite")
        work = self.expected_work()
        if work > STEP_WORK_BUDGET:
            terms = {"sense_period": self.num_uavs * (self.dt / self.sense_period)
                     * (1 + 2 * self.max_messages),
                     "control_period": self.num_uavs * self.control_intervals
                     * (1 + self.dynamics_substeps),
                     "num_targets": self.num_targets * (self.dt / self.control_period + 1)}
            key = max(terms, key=terms.get)
            v = getattr(self, key)
            need = (f"<= about {int(v * STEP_WORK_BUDGET / work)}" if key == "num_targets"
                    else f">= about {v * work / STEP_WORK_BUDGET:.3g}")
            raise ValueError(
                f"{name}.{key} must be {need} here, got {v!r}: "
                f"one step's expected work (events and RK4 substeps) would be {work:.3g} > the "
                f"budget 2**30 (num_uavs={self.num_uavs}, {self.dt / self.sense_period:.3g} SENSEs "
                f"and {self.control_intervals} DYNAMICS x {self.dynamics_substeps} substeps per UAV "
                f"and step)")

    def expected_work(self):
        """Expected work of one step: per UAV an ACTION, control_intervals
        DYNAMICS of dynamics_substeps RK4 substeps each, dt / sense_period
        SENSEs each sending and receiving up to max_messages MSGs; per
        target dt / control_period + 1 TARGET_MOVEs."""
        senses = self.dt / self.sense_period
        per_uav = (1 + self.control_intervals * (1 + self.dynamics_substeps)
                   + senses * (1 + 2 * self.max_messages))
        return self.num_uavs * per_uav + self.num_targets * (self.dt / self.control_period + 1)

    def memory_estimate(self, num_copies=1):
        """Bytes the model and its engine need at least, for ``num_copies``
        copies (:mod:`seer_runtime.memory`): one LP per entity with a few
        queued events (a UAV's SENSE and DYNAMICS, a target's move), and the
        model's arrays written at construction (per UAV 14 float64 state
        arrays, a belief id and two flags; per target 6 float64; per entity
        the 4 float64 of the snapshot)."""
        from seer_runtime.memory import engine_bytes
        nu, nt = self.num_uavs * num_copies, self.num_targets * num_copies
        return engine_bytes(nu + nt, 2) + nu * (15 * 8 + 2) + nt * 6 * 8 + (nu + nt) * 4 * 8

    def check_memory(self, num_copies=1):
        """``MemoryError`` naming the need and the available memory when
        :meth:`memory_estimate` exceeds what this machine has free."""
        from seer_runtime.memory import check_memory
        copies = f" x {num_copies} copies" if num_copies != 1 else ""
        return check_memory(
            self.memory_estimate(num_copies),
            f"Aircraft with num_uavs={self.num_uavs}, num_targets={self.num_targets}{copies}",
            "lower num_uavs or num_targets" + (" or the copies" if copies else ""))

    # --- derived quantities, shared by the compiled model and the reference ---

    @property
    def num_entities(self):
        return self.num_uavs + self.num_targets

    @property
    def control_intervals(self):
        """DYNAMICS events per step: the step is cut into intervals of
        ``control_period``, the last one shorter when ``dt`` is not a
        multiple of it."""
        r = self.dt / self.control_period
        n = round(r)
        if n >= 1 and abs(r - n) <= 1e-9 * max(1.0, r):
            return int(n)
        return int(math.ceil(r))

    def integration(self, last):
        """``(h, h/2, h/6, gust forcing scale)`` of one RK4 substep of a
        full (``last=False``) or the last control interval of a step.  The
        gust forcing scale turns a standard normal drawn once per substep
        into the constant forcing of the OU equation over that substep:
        ``wind_sigma * sqrt(2 / (wind_tau * h))``."""
        n = self.control_intervals
        span = self.dt - (n - 1) * self.control_period if last else self.control_period
        h = span / self.dynamics_substeps
        return h, 0.5 * h, h / 6.0, self.wind_sigma * math.sqrt(2.0 / (self.wind_tau * h))

    @property
    def launch_grid(self):
        """``(columns, cell width, cell height)`` of the launch grid."""
        cols = math.isqrt(self.num_uavs - 1) + 1
        rows = (self.num_uavs + cols - 1) // cols
        return cols, self.arena_size / cols, self.arena_size / rows

    @property
    def grid_side(self):
        """Cells per side of the boundary snapshot's uniform grid.  Cells are
        at least max(comm_range, sensor_range, collision_radius) wide (with
        a 0.1% margin against rounding), so a 3 x 3 block around any point
        holds every entity within those ranges."""
        reach = max(self.comm_range, self.sensor_range, self.collision_radius) * 1.001
        side = int(self.arena_size // reach) if reach > 0 else MAX_GRID_SIDE
        cap = max(1, min(MAX_GRID_SIDE, 2 * int(math.isqrt(self.num_entities)) + 2))
        return max(1, min(side, cap))

    @property
    def action_table(self):
        """Discrete actions -> commanded acceleration (m/s^2): 0 stays, 1..8
        push at max_accel towards E, NE, N, NW, W, SW, S, SE."""
        d = math.sqrt(0.5)
        dirs = np.array([[0, 0], [1, 0], [d, d], [0, 1], [-d, d], [-1, 0], [-d, -d], [0, -1], [d, -d]],
                        dtype=np.float64)
        return dirs * self.max_accel
