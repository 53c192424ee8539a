# SPDX-License-Identifier: BSD-3-Clause
"""Parameters of the gossip scenario.  Time unit: seconds."""

import dataclasses
import math

from seer_runtime.config import param, validate
from seer_runtime.loop import DEF_MAX_PENDING_PER_LP

MAX_RUMOURS = 64        # an agent's rumours are one uint64 bit mask


@dataclasses.dataclass(frozen=True)
class GossipConfig:
    """Frozen, validated gossip parameters."""

    num_agents: int = param(16, "agents", "agents on the ring", lo=2, hi=1 << 20, integer=True)
    reach: int = param(2, "agents", "an agent may message the agents up to this far along the ring",
                       lo=1, integer=True)
    num_rumours: int = param(16, "rumours", "distinct rumours (bits of the mask)",
                             lo=1, hi=MAX_RUMOURS, integer=True)
    news_interval: float = param(30.0, "s", "mean exponential time between an agent hearing a "
                                 "random rumour by itself", lo=0.0, lo_open=True)
    latency: float = param(1.0, "s", "minimum delay of a message: the lookahead", lo=0.0, lo_open=True)
    jitter: float = param(2.0, "s", "extra delay of a message, uniform in [0, jitter)", lo=0.0)
    message_cost: float = param(0.1, "", "reward charged per message sent", lo=0.0)
    dt: float = param(5.0, "s", "simulated time of one env step", lo=0.0, lo_open=True)
    max_cycles: int = param(100, "steps", "truncation", lo=1, integer=True)

    def __post_init__(self):
        validate(self)
        if 2 * self.reach >= self.num_agents:
            # targets a +- 1..reach must be distinct and never the sender
            raise ValueError(f"GossipConfig.reach must be <= (num_agents - 1) // 2 = "
                             f"{(self.num_agents - 1) // 2}, got {self.reach}")
        if self.max_pending_per_agent > DEF_MAX_PENDING_PER_LP:
            raise ValueError(f"GossipConfig: up to {self.max_pending_per_agent} messages may be in "
                             f"flight to one agent (2 * reach * steps a message spans), more than the "
                             f"runtime's max_pending_per_lp = {DEF_MAX_PENDING_PER_LP}; lower reach "
                             "or latency + jitter, or raise dt")

    @property
    def num_actions(self):
        """0 = stay quiet, 1..reach = message the agent that far clockwise,
        reach+1..2*reach = that far anticlockwise."""
        return 2 * self.reach + 1

    @property
    def max_pending_per_agent(self):
        """Bound on an agent's pending events: its NEWS and ACTION events plus
        every message that can be in flight to it (each of its 2*reach
        neighbours sends at most one per step, and a message spans at most
        ceil((latency + jitter) / dt) + 1 steps)."""
        spans = math.ceil((self.latency + self.jitter) / self.dt) + 1
        return 2 + 2 * self.reach * spans
