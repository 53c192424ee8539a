# SPDX-License-Identifier: BSD-3-Clause
"""PettingZoo-style module of the Aircraft env, version 0.

>>> from seer_envs import aircraft_v0
>>> env = aircraft_v0.parallel_env(num_uavs=16, num_threads=2)
>>> obs, infos = env.reset(seed=0)

See :mod:`seer_envs.aircraft.env` for the full description.
"""

from pettingzoo.utils.conversions import parallel_to_aec

from seer_envs.aircraft import AircraftConfig, AircraftEnv

__all__ = ["parallel_env", "env", "raw_env", "AircraftEnv", "AircraftConfig"]


def parallel_env(**kwargs):
    """The Aircraft ParallelEnv; keyword arguments are AircraftConfig fields
    plus ``num_threads`` and ``render_mode``."""
    return AircraftEnv(**kwargs)


def env(**kwargs):
    """The AEC form (via PettingZoo's ``parallel_to_aec``); SEER adds no AEC
    wrappers, so it is also PettingZoo's unwrapped ``raw_env``."""
    return parallel_to_aec(AircraftEnv(**kwargs))


raw_env = env
