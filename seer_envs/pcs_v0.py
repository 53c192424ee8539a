# SPDX-License-Identifier: BSD-3-Clause
"""PettingZoo-style module of the PCS env, version 0.

>>> from seer_envs import pcs_v0
>>> env = pcs_v0.parallel_env(grid_width=8, grid_height=8, num_threads=2)
>>> obs, infos = env.reset(seed=0)

See :mod:`seer_envs.pcs.env` for the full description.
"""

from pettingzoo.utils.conversions import parallel_to_aec

from seer_envs.pcs import PCSConfig, PcsEnv, run_headless

__all__ = ["parallel_env", "env", "raw_env", "run_headless", "PcsEnv", "PCSConfig"]


def parallel_env(**kwargs):
    """The PCS ParallelEnv; keyword arguments are PCSConfig fields plus
    ``num_threads`` and ``render_mode``."""
    return PcsEnv(**kwargs)


def env(**kwargs):
    """The AEC form (via PettingZoo's ``parallel_to_aec``); SEER adds no AEC
    wrappers, so it is also PettingZoo's unwrapped ``raw_env``."""
    return parallel_to_aec(PcsEnv(**kwargs))


raw_env = env
