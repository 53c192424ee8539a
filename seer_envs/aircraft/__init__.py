# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft scenario: config, handlers, env, pure-Python reference."""

from seer_envs.aircraft.config import AircraftConfig
from seer_envs.aircraft.env import AircraftEnv

__all__ = ["AircraftConfig", "AircraftEnv"]
