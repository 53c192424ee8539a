# SPDX-License-Identifier: BSD-3-Clause
"""PettingZoo-style module of the PCS hot-spot learning task, version 1.

>>> from seer_envs import pcs_hotspot_v1
>>> env = pcs_hotspot_v1.parallel_env(num_threads=1)
>>> obs, infos = env.reset(seed=0)

``pcs_v0``'s model and parameters with other defaults
(:class:`~seer_envs.pcs.config.PCSHotspotV1Config`): call load that varies
over the cells (hot spots moving over the torus) and over the day, rush
hours in which phones move every 10 minutes (every 10 hours otherwise), and
the team's reward (every cell is paid the mean over all cells, so no cell
gains by leaving the policy best for the team).  How many channels to hold
back follows the hour and the cell: a hand-written rule that reads the
handoffs coming in beats every constant guard by about a fifth.
docs/pcs.md, "pcs_hotspot_v1".
"""

from pettingzoo.utils.conversions import parallel_to_aec

from seer_envs.pcs.config import PCSHotspotV1Config
from seer_envs.pcs.env import PcsHotspotV1Env

__all__ = ["parallel_env", "env", "raw_env", "PcsHotspotV1Env", "PCSHotspotV1Config"]


def parallel_env(**kwargs):
    """The task's ParallelEnv; keyword arguments are PCSConfig fields plus
    ``num_threads`` and ``render_mode``."""
    return PcsHotspotV1Env(**kwargs)


def raw_env(**kwargs):
    """The unwrapped AEC env (``env()`` is the same: SEER adds no AEC wrappers)."""
    return parallel_to_aec(PcsHotspotV1Env(**kwargs))


def env(**kwargs):
    """The AEC form (via PettingZoo's ``parallel_to_aec``)."""
    return parallel_to_aec(PcsHotspotV1Env(**kwargs))
