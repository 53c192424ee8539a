# SPDX-License-Identifier: BSD-3-Clause
"""Parameters of the PCS scenario (SCENARIOS.md, PCS section). Time unit: minutes."""

import dataclasses
import math

from seer_envs._config import param, validate

OUTBOX_CAPACITY = 256   # seer_runtime's SEER_OUTBOX_CAPACITY: events one hook call may emit


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
                                     "(event-granularity knob; 0 = plain PCS)", lo=0, integer=True)
    dt: float = param(60.0, "min", "simulated time of one env step", lo=0.0, lo_open=True)
    handoff_penalty: float = param(5.0, "", "weight of a dropped handoff against a blocked new call", lo=0.0)
    max_cycles: int = param(240, "steps", "truncation (240 steps = 10 simulated days)", lo=1, integer=True)
    team_reward_share: float = param(0.0, "", "share of each cell's reward taken from the mean over all cells "
                                     "(0 = own cell only, 1 = the team mean; like 1 - MPE's local_ratio)",
                                     lo=0.0, hi=1.0)

    def __post_init__(self):
        validate(self)
        if self.grid_width * self.grid_height >= 2**32 - 1:
            raise ValueError("PCSConfig: grid_width * grid_height must be < 2**32 - 1")

    @property
    def num_cells(self):
        return self.grid_width * self.grid_height

    @property
    def num_guard_actions(self):
        return self.channels_per_cell // 2 + 1

    @property
    def moves_enabled(self):
        return not math.isinf(self.move_interval_mean)
