# SPDX-License-Identifier: BSD-3-Clause
"""PettingZoo-style module of the PCS hot-spot task, version 0.

>>> from seer_envs import pcs_hotspot_v0
>>> env = pcs_hotspot_v0.parallel_env(num_threads=1)
>>> obs, infos = env.reset(seed=0)

``pcs_v0``'s model and parameters with other defaults
(:class:`~seer_envs.pcs.config.PCSHotspotConfig`): call load that varies
over the cells (hot spots moving over the torus) and over the day, and each
cell's own reward charged for a share of its neighbours' dropped handoffs.
That reward is a social dilemma: a cell gains by holding back fewer
channels than is best for the team, so independent learners settle below
the team's best.  It is kept as a research task that says so; the learning
task is ``pcs_hotspot_v1`` (the team's reward).  docs/pcs.md,
"pcs_hotspot_v0".
"""

from pettingzoo.utils.conversions import parallel_to_aec

from seer_envs.pcs.config import PCSHotspotConfig
from seer_envs.pcs.env import PcsHotspotEnv

__all__ = ["parallel_env", "env", "raw_env", "PcsHotspotEnv", "PCSHotspotConfig"]


def parallel_env(**kwargs):
    """The task's ParallelEnv; keyword arguments are PCSConfig fields plus
    ``num_threads`` and ``render_mode``."""
    return PcsHotspotEnv(**kwargs)


def raw_env(**kwargs):
    """The unwrapped AEC env (``env()`` is the same: SEER adds no AEC wrappers)."""
    return parallel_to_aec(PcsHotspotEnv(**kwargs))


def env(**kwargs):
    """The AEC form (via PettingZoo's ``parallel_to_aec``)."""
    return parallel_to_aec(PcsHotspotEnv(**kwargs))
