# SPDX-License-Identifier: BSD-3-Clause
"""Gossip scenario: rumours spreading on a ring (docs/new_scenario.md)."""

from seer_envs.gossip.config import GossipConfig
from seer_envs.gossip.env import GossipEnv

__all__ = ["GossipConfig", "GossipEnv"]
