# SPDX-License-Identifier: BSD-3-Clause
"""Parameters of the PCS scenario (docs/pcs.md). Time unit: minutes."""

import dataclasses
import math

from seer_runtime.loop import OUTBOX_CAPACITY   # events one hook call may emit
from seer_envs.scenario.config import (FLOAT32_MAX, HANDLER_WORK_BUDGET, STEP_WORK_BUDGET, bound_error,
                               check_horizon, param, validate)

#: Most hot spots (each costs one exp per call draw, inside a handler).
MAX_HOTSPOTS = 64
#: Radians between successive hot spots' headings.
GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))


@dataclasses.dataclass(frozen=True)
class PCSConfig:
    """Frozen, validated PCS parameters; every field is settable by keyword
    and from config files."""

    grid_width: int = param(16, "cells", "cells across the torus", lo=1, hi=4096, integer=True)
    grid_height: int = param(16, "cells", "cells down the torus", lo=1, hi=4096, integer=True)
    portables_per_cell: int = param(16, "phones", "phones per cell at start; their total never changes",
                                    lo=0, hi=OUTBOX_CAPACITY, integer=True)
    channels_per_cell: int = param(10, "channels", "channels in each cell", lo=1, hi=1_000_000, integer=True)
    call_interarrival_mean: float = param(360.0, "min", "mean exponential time between a phone's call attempts",
                                          lo=0.0, lo_open=True)
    call_duration_mean: float = param(180.0, "min", "mean exponential call length", lo=0.0, lo_open=True)
    move_interval_mean: float = param(4500.0, "min", "mean exponential time between a phone's moves "
                                      "(inf switches moves off)", lo=0.0, lo_open=True, allow_inf=True)
    handoff_latency: float = param(1.0, "min", "minimum delay of every cross-cell event: the lookahead",
                                   lo=0.0, lo_open=True)
    power_control_iters: int = param(0, "iterations", "power-control fixed-point iterations per admission "
                                     "(event-granularity knob; 0 = plain PCS)", lo=0, hi=HANDLER_WORK_BUDGET,
                                     integer=True)
    dt: float = param(60.0, "min", "simulated time of one env step", lo=0.0, lo_open=True)
    handoff_penalty: float = param(5.0, "", "weight of a dropped handoff against a blocked new call", lo=0.0)
    max_cycles: int = param(240, "steps", "steps before truncation (at dt = 60, 24 steps are a "
                            "simulated day)", lo=1, hi=2**53, integer=True)
    team_reward_share: float = param(0.0, "", "share of each cell's reward taken from the mean over all cells "
                                     "(0 = own cell only, 1 = the team mean; like 1 - MPE's local_ratio)",
                                     lo=0.0, hi=1.0)
    # --- varying load and the neighbours' drops (all off: pcs_v0 as it was) ---
    hotspot_count: int = param(0, "hot spots", "hot spots of extra call load moving over the torus "
                               "(0 = uniform load)", lo=0, hi=MAX_HOTSPOTS, integer=True)
    hotspot_amplitude: float = param(0.0, "", "extra call rate at a hot spot's centre, in units of the "
                                     "base rate (a cell's rate is multiplied by 1 + amplitude x the sum "
                                     "of exp(-d**2 / (2 radius**2)) over the hot spots)", lo=0.0, hi=1000.0)
    hotspot_radius: float = param(1.5, "cells", "radius (Gaussian sigma) of a hot spot", lo=0.0,
                                  lo_open=True, hi=4096.0)
    hotspot_speed: float = param(0.0, "cells/min", "speed of every hot spot (each on its own straight "
                                 "heading over the torus)", lo=0.0, hi=1000.0)
    diurnal_amplitude: float = param(0.0, "", "daily swing of every cell's call rate: x (1 + a sin(2 pi "
                                     "t / diurnal_period))", lo=0.0, hi=0.99)
    diurnal_period: float = param(1440.0, "min", "period of the daily swing", lo=0.0, lo_open=True)
    neighbour_drop_share: float = param(0.0, "", "a cell also pays this share of handoff_penalty for each "
                                        "handoff block of its 4 neighbours, divided among them (each "
                                        "neighbour pays share / 4): the drops its admissions push onto "
                                        "them", lo=0.0, hi=1.0)
    # --- rush hours: phones move at another rate part of the day (off: pcs_v0 as it was) ---
    rush_fraction: float = param(0.0, "", "share of each rush_period spent in rush hours, one window a "
                                 "period centred a quarter period in (the daily swing's peak), in which phones move every "
                                 "rush_move_interval_mean on average (0 = no rush hours)",
                                 lo=0.0, hi=0.99)
    rush_period: float = param(1440.0, "min", "period of the rush hours", lo=0.0, lo_open=True)
    rush_move_interval_mean: float = param(10.0, "min", "mean exponential time between a phone's moves "
                                           "in rush hours (inf: no moves then)", lo=0.0, lo_open=True,
                                           allow_inf=True)

    def __post_init__(self):
        validate(self)
        if self.grid_width * self.grid_height >= 2**32 - 1:
            raise ValueError("PCSConfig: grid_width * grid_height must be < 2**32 - 1")
        periods = (["diurnal_period"] if self.load_varies else []) + (["rush_period"] if self.rush_hours else [])
        if periods:
            check_horizon("PCSConfig", self, periods, self.max_cycles * self.dt, "max_cycles * dt")
        self.check_run(self.max_cycles * self.dt, "max_cycles * dt", self.dt, "dt")
        # Float32 rewards: -(blocks + handoff_penalty * drops), each count at
        # most the step's work budget.
        # With neighbour_drop_share > 0 a drop is paid once more, shared
        # among the dropping cell's neighbours.
        pmax = FLOAT32_MAX / STEP_WORK_BUDGET / 2
        if self.neighbour_drop_share:
            pmax /= 1.0 + self.neighbour_drop_share
        if self.handoff_penalty > pmax:
            raise bound_error("PCSConfig", "handoff_penalty", self.handoff_penalty, "<=", pmax,
                              "float32 max / (2 * 2**30 events in a step * (1 + neighbour_drop_share)): "
                              "the float32 reward -(blocks + handoff_penalty * drops) must stay finite")

    def expected_work(self, span):
        """Expected work (events, walked moves, power-control iterations) of
        the whole grid over ``span`` minutes: per phone and minute, at most
        1/ia call attempts and 1/ia completions, 1/mv moves (a handoff is two
        events), and an admission (pc iterations) per attempt or handoff."""
        rate = self.peak_load / self.call_interarrival_mean
        if self.moves_enabled:
            rate += 1.0 / self.fastest_move_mean
        phones = self.num_cells * self.portables_per_cell
        return phones * span * rate * (2 + self.power_control_iters) + self.num_cells

    def check_run(self, horizon, horizon_text, span, span_text, budget=STEP_WORK_BUDGET):
        """Bounds that depend on how far a run goes: time constants against
        the horizon, the expected work of ``span`` (one step) against
        ``budget``, and one idle phone's walk against
        HANDLER_WORK_BUDGET."""
        if not horizon <= 1e300:
            raise ValueError(f"PCSConfig: the horizon {horizon_text} = {horizon!r} must be "
                             "finite and <= 1e300")
        names = ["handoff_latency", "call_interarrival_mean"]
        if self.moves_enabled:
            names.append(self.fastest_move_field)
        check_horizon("PCSConfig", self, names, horizon, horizon_text)
        if self.moves_enabled:
            # An idle phone's moves up to its next call are walked inside one
            # handler: call_interarrival_mean / move_interval_mean moves on
            # average, with a geometric tail (8x the mean: probability e**-8),
            # hence 2**17 / 8.
            ratio = self.call_interarrival_mean / self.fastest_move_mean    # at load 1: the longest walks
            top = HANDLER_WORK_BUDGET // 8 * self.fastest_move_mean
            if ratio > HANDLER_WORK_BUDGET // 8:
                raise bound_error("PCSConfig", "call_interarrival_mean", self.call_interarrival_mean,
                                  "<=", top, f"2**14 x {self.fastest_move_field}: an idle phone's moves "
                                  "before its next call are walked in one handler call")
            # reset() walks every phone to its first call at once.
            init = self.num_cells * self.portables_per_cell * (1 + ratio)
            if init > STEP_WORK_BUDGET:
                raise bound_error("PCSConfig", "call_interarrival_mean", self.call_interarrival_mean,
                                  "<=", STEP_WORK_BUDGET / init * self.call_interarrival_mean,
                                  f"about; reset walks all {self.num_cells * self.portables_per_cell} "
                                  f"phones' moves to their first call: expected {init:.3g} moves "
                                  f"> the budget 2**30")
        work = self.expected_work(span)
        if work > budget:
            # Name the parameter that drives the rate hardest.
            rates = {"call_interarrival_mean": self.peak_load / self.call_interarrival_mean}
            if self.moves_enabled:
                rates[self.fastest_move_field] = 1.0 / self.fastest_move_mean
            name = max(rates, key=rates.get)
            v = getattr(self, name)
            raise ValueError(
                f"PCSConfig.{name} must be >= about {v * work / budget:.3g} here, got {v!r}: "
                f"with {self.num_cells} cells x {self.portables_per_cell} phones, "
                f"power_control_iters={self.power_control_iters} and {span_text}={span:g}, the "
                f"expected work of one {'step' if span_text == 'dt' else 'run'} is {work:.3g} "
                f"events > the budget 2**{budget.bit_length() - 1}")

    def memory_estimate(self, num_copies=1):
        """Bytes the model and its engine need at least, for ``num_copies``
        copies of the grid (:mod:`seer_runtime.memory`): one LP per cell
        queuing one event per phone from the start, and the channel array."""
        from seer_runtime.memory import engine_bytes
        cells = self.num_cells * num_copies
        return engine_bytes(cells, self.portables_per_cell) + cells * 4

    def check_memory(self, num_copies=1):
        """``MemoryError`` naming the need and the available memory when
        :meth:`memory_estimate` exceeds what this machine has free."""
        from seer_runtime.memory import check_memory
        copies = f" x {num_copies} copies" if num_copies != 1 else ""
        return check_memory(
            self.memory_estimate(num_copies),
            f"PCS with grid_width={self.grid_width}, grid_height={self.grid_height}{copies} "
            f"({self.num_cells * num_copies} cells x portables_per_cell={self.portables_per_cell})",
            "lower grid_width, grid_height or portables_per_cell" + (" or the copies" if copies else ""))

    @property
    def load_varies(self):
        """Whether any hot spot or diurnal term changes the call rate."""
        return (self.hotspot_count > 0 and self.hotspot_amplitude > 0) or self.diurnal_amplitude > 0

    @property
    def peak_load(self):
        """An upper bound of the load factor (the call rate's multiplier)."""
        if not self.load_varies:
            return 1.0
        return (1.0 + self.diurnal_amplitude) * (1.0 + self.hotspot_amplitude * self.hotspot_count)

    @property
    def diurnal_omega(self):
        """2 pi / ``diurnal_period`` (1/min)."""
        return 2.0 * math.pi / self.diurnal_period

    def hotspot_tracks(self):
        """Each hot spot's ``(x0, y0, vx, vy)``: start (cells) and velocity
        (cells/min).  Hot spot k starts at ``((k + 0.5) W / K, (k + 0.5) H /
        K)`` heading at the golden angle times k (plus 1 radian), so the
        tracks cross the torus apart from each other.  Empty when the load
        does not vary over cells."""
        K = self.hotspot_count if self.hotspot_amplitude > 0 else 0
        out = []
        for k in range(K):
            heading = 1.0 + k * GOLDEN_ANGLE
            out.append(((k + 0.5) * self.grid_width / K, (k + 0.5) * self.grid_height / K,
                        self.hotspot_speed * math.cos(heading), self.hotspot_speed * math.sin(heading)))
        return out

    @property
    def num_cells(self):
        return self.grid_width * self.grid_height

    @property
    def num_guard_actions(self):
        return self.channels_per_cell // 2 + 1

    @property
    def rush_hours(self):
        """Whether phones move at another rate in rush hours."""
        return self.rush_fraction > 0 and self.rush_move_interval_mean != self.move_interval_mean

    @property
    def fastest_move_field(self):
        """The field of the shortest mean time between moves (the bounds'
        worst case): ``rush_move_interval_mean`` in rush hours when it is
        the shorter one, else ``move_interval_mean``."""
        if self.rush_hours and self.rush_move_interval_mean < self.move_interval_mean:
            return "rush_move_interval_mean"
        return "move_interval_mean"

    @property
    def fastest_move_mean(self):
        return getattr(self, self.fastest_move_field)

    @property
    def moves_enabled(self):
        return not math.isinf(self.fastest_move_mean)


def _preset(base, name, doc, **defaults):
    """A subclass of the config ``base`` with other defaults (a named task:
    the same fields, bounds and validation)."""
    fields = []
    for f in dataclasses.fields(base):
        if f.name in defaults:
            fields.append((f.name, f.type, dataclasses.field(default=defaults.pop(f.name),
                                                             metadata=f.metadata)))
    if defaults:
        raise AssertionError(f"{name}: not fields of {base.__name__}: {sorted(defaults)}")
    cls = dataclasses.make_dataclass(name, fields, bases=(base,), frozen=True)
    cls.__doc__ = doc
    cls.__module__ = __name__
    return cls


#: The defaults of ``pcs_hotspot_v0`` (docs/pcs.md, "pcs_hotspot_v0"):
#: ``pcs_v0``'s model on an 8 x 8 torus for two days, phones moving about
#: about every half hour, two hot spots of extra calls crossing the grid, a daily
#: swing of the call rate, and each cell paying for its neighbours' drops.
HOTSPOT_DEFAULTS = dict(grid_width=8, grid_height=8, max_cycles=48, move_interval_mean=30.0,
                        call_interarrival_mean=400.0, hotspot_count=2, hotspot_amplitude=4.0,
                        hotspot_radius=1.0, hotspot_speed=0.01, diurnal_amplitude=0.5,
                        neighbour_drop_share=1.0)

PCSHotspotConfig = _preset(
    PCSConfig, "PCSHotspotConfig",
    "PCSConfig with the defaults of the ``pcs_hotspot_v0`` task (``HOTSPOT_DEFAULTS``): load that "
    "varies over cells and over the day, and neighbours' drops in each cell's reward.",
    **HOTSPOT_DEFAULTS)


#: The defaults of ``pcs_hotspot_v1``, the PCS learning task (docs/pcs.md,
#: "pcs_hotspot_v1"): ``pcs_hotspot_v0``'s grid, hot spots and daily swing,
#: with rush hours (phones move every 10 minutes for half of each day,
#: every 10 hours otherwise) and the team's reward: every cell is paid the
#: mean over all cells, so the policy best for the team is one no cell gains
#: by leaving.  How many channels to hold back follows the hour and the cell.
HOTSPOT_V1_DEFAULTS = dict(HOTSPOT_DEFAULTS, move_interval_mean=600.0, rush_fraction=0.5,
                           rush_move_interval_mean=10.0, team_reward_share=1.0, neighbour_drop_share=0.0)

PCSHotspotV1Config = _preset(
    PCSConfig, "PCSHotspotV1Config",
    "PCSConfig with the defaults of the ``pcs_hotspot_v1`` learning task (``HOTSPOT_V1_DEFAULTS``): "
    "load that varies over cells and over the day, rush hours of fast-moving phones, and the team's "
    "reward.",
    **HOTSPOT_V1_DEFAULTS)
