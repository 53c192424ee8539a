# SPDX-License-Identifier: BSD-3-Clause
"""Hand-written PCS policies, the baselines for learned ones.  Each reads
only the observation array (rows in ``possible_agents`` order, columns as
``PcsEnv.obs_layout``)."""

import numpy as np

from seer_envs.pcs.handlers import OBS_LAYOUT

_BUSY = OBS_LAYOUT["busy"]
_NEIGHBOURS = OBS_LAYOUT["neighbours"]

#: The adaptive rule's thresholds (module docstring of :func:`adaptive_guard`).
ADAPTIVE_LOAD_FLOOR = 0.5
ADAPTIVE_GAIN = 8.0


def heuristic(env, obs):
    """Hold back one guard channel where the cell is more than 70% busy."""
    return (obs[:, _BUSY] > 0.7).astype(np.int64)


def adaptive_guard(env, obs, floor=ADAPTIVE_LOAD_FLOOR, gain=ADAPTIVE_GAIN):
    """Guard channels that follow the load around the cell: none while the
    cell and its 4 neighbours are together less than ``floor`` busy, then
    ``gain`` channels per unit of busy fraction above it, capped at the
    largest guard.  The neighbours' load is where the next handoffs come
    from; the cell's own load is how close it is to dropping them.  It reads
    only the observation, so it runs decentralised like a learned actor.

    ``env`` supplies the action count (``env.action_space(...)``); ``obs``
    is ``(cells, 11)`` or ``(..., cells, 11)``."""
    n_actions = _n_actions(env)
    load = 0.5 * obs[..., _BUSY] + 0.5 * obs[..., _NEIGHBOURS].mean(axis=-1)
    g = np.floor(gain * (load - floor) + 0.5)
    return np.clip(g, 0, n_actions - 1).astype(np.int64)


def _n_actions(env):
    if isinstance(env, int):
        return env
    space = getattr(env, "single_action_space", None)
    if space is None:
        space = env.action_space(env.possible_agents[0])
    return int(space.n)
