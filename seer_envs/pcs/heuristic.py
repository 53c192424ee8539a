# SPDX-License-Identifier: BSD-3-Clause
"""Hand-written PCS policies, the baselines for learned ones.  Each reads
only the observation array (rows in ``possible_agents`` order, columns as
``PcsEnv.obs_layout``)."""

import numpy as np

from seer_envs.pcs.handlers import OBS_LAYOUT

_BUSY = OBS_LAYOUT["busy"]
_NEIGHBOURS = OBS_LAYOUT["neighbours"]
_HANDOFFS_IN = OBS_LAYOUT["handoffs_in"]

#: The adaptive rule's constants (:func:`adaptive_guard`).
ADAPTIVE_BASE = 2.5
ADAPTIVE_GAIN = 5.0
#: The rush rule's threshold on the step's handoffs in per phone (:func:`rush_guard`).
RUSH_THRESHOLD = 0.6


def heuristic(env, obs):
    """Hold back one guard channel where the cell is more than 70% busy."""
    return (obs[..., _BUSY] > 0.7).astype(np.int64)


def adaptive_guard(env, obs, base=ADAPTIVE_BASE, gain=ADAPTIVE_GAIN):
    """Guard channels that follow the load around the cell:
    ``round(base + gain * b)``, ``b`` the mean busy fraction of the 4
    neighbours, capped to the action range.  Handoffs into a cell come from
    its neighbours' calls, so the busier they are, the more channels it
    holds back for them (and, with ``neighbour_drop_share``, the more the
    cell pays for drops there).  It reads only the observation, so it runs
    decentralised like a learned actor; ``base`` and ``gain`` were set by
    hand from a coarse search on seeds the evaluations never use.

    ``env`` is the env (or vector env) or the number of actions; ``obs`` is
    ``(cells, 11)`` or ``(..., cells, 11)``."""
    n_actions = _n_actions(env)
    b = obs[..., _NEIGHBOURS].mean(axis=-1, dtype=np.float64)
    g = np.floor(base + gain * b + 0.5)
    return np.clip(g, 0, n_actions - 1).astype(np.int64)


def rush_guard(env, obs, threshold=RUSH_THRESHOLD):
    """Hold back every channel the action allows where calls are moving in,
    none elsewhere: the largest guard where the cell's handoffs in over the
    last step, per phone, exceed ``threshold``, else 0.

    In ``pcs_hotspot_v1``'s rush hours phones move every 10 minutes, so a
    call is handed off several times and a dropped handoff (5 blocked calls'
    worth) is the cost to avoid; outside them moves are rare and a guard
    only blocks new calls.  The handoffs of the last step tell which regime
    the cell is in.  It reads only the observation, so it runs decentralised
    like a learned actor; ``threshold`` came from a coarse search (0.3 to
    0.8, with low guards 0 or 1 and high guards 4 or 5) on seeds the
    evaluations never use.

    ``env`` is the env (or vector env) or the number of actions; ``obs`` is
    ``(cells, 11)`` or ``(..., cells, 11)``."""
    top = _n_actions(env) - 1
    return np.where(obs[..., _HANDOFFS_IN] > threshold, top, 0).astype(np.int64)


def _n_actions(env):
    if isinstance(env, (int, np.integer)):
        return int(env)
    space = getattr(env, "single_action_space", None)
    if space is None:
        space = env.action_space(env.possible_agents[0])
    return int(space.n)
