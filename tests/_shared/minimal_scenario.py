# SPDX-License-Identifier: BSD-3-Clause
"""A scenario with only the parts docs/new_scenario.md calls required,
registered as ``minimal_v0`` on import: Gossip's compiled model and config
behind a ``Copies`` subclass that declares agents, spaces, action writes,
restarts and the boundary, and nothing else (no ``state_space``, no
``image`` / ``print_map``, no ``obs_layout``, no ``agent_infos`` /
``summary`` / ``state``, no per-copy fields, no snapshot declarations), and
a spec with no env (the registry makes it), heuristic, stopping parameters
or ``env_run``.  ``tests/envs/test_minimal_scenario.py`` runs the
registry-driven tests on it (``pytest -p minimal_scenario``)."""

import numpy as np
from gymnasium import spaces

import seer_envs

from seer_envs.gossip.config import GossipConfig
from seer_envs.gossip.model import ACTION_KIND, GossipModel
from seer_envs.scenario.copies import Copies
from seer_runtime.spec import ScenarioSpec, register


class MinimalCopies(Copies):
    """Each agent observes its share of the rumours; reward: rumours learned."""

    action_kind = ACTION_KIND
    model_cls = GossipModel

    @classmethod
    def agent_names(cls, config):
        return [f"node_{i}" for i in range(config.num_agents)]

    @classmethod
    def spaces(cls, config):
        return spaces.Box(0.0, 1.0, (1,), np.float32), spaces.Discrete(config.num_actions)

    def write_actions(self, a, done):
        np.multiply(a, ~done, out=self.model.actions, casting="unsafe")

    def restart(self, c0, c1):
        self.model.reset_copies(c0, c1)

    def boundary(self, c0, c1, times, num_threads):
        lo, hi = c0 * self.num_agents, c1 * self.num_agents
        known = self.model.n_known[lo:hi]
        self.obs[lo:hi, 0] = known / self.config.num_rumours
        self.rew[lo:hi] = known
        self.term[lo:hi] = known == self.config.num_rumours


SPEC = register(ScenarioSpec(
    id="minimal_v0",
    description="A scenario with only the required parts (tests)",
    config=GossipConfig,
    model=GossipModel,
    copies=MinimalCopies,
    test_params={"num_agents": 5, "reach": 1, "num_rumours": 40, "news_interval": 8.0, "max_cycles": 6},
))
seer_envs.register_gymnasium()      # seer/minimal_v0 (registered after seer_envs' import)
