# SPDX-License-Identifier: BSD-3-Clause
"""Gossip's entry in the scenario registry: the one place the layers above
(``seer_envs.make``, the ``seer`` CLI, STPA, the generic tests) learn of it."""

from seer_envs.gossip.config import GossipConfig
from seer_envs.gossip.copies import GossipCopies, heuristic
from seer_envs.gossip.model import GossipModel
from seer_runtime.spec import ScenarioSpec, register

SPEC = register(ScenarioSpec(
    id="gossip_v0",
    description="Gossip: agents on a ring spread rumours by messages with latency "
                "(the worked example of docs/new_scenario.md)",
    config=GossipConfig,
    model=GossipModel,
    copies=GossipCopies,
    heuristic=heuristic,
    test_params={"num_agents": 7, "reach": 2, "num_rumours": 40, "news_interval": 8.0,
                 "max_cycles": 6},
    # few rumours: each agent knows them all, and stops, at its own step
    test_params_stopping={"num_agents": 7, "reach": 2, "num_rumours": 4, "news_interval": 8.0,
                          "max_cycles": 200},
    workload_codes={"env": 4},
))
