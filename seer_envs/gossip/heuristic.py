# SPDX-License-Identifier: BSD-3-Clause
"""A hand-written gossip policy, the baseline for learned ones."""

import numpy as np

from seer_envs.gossip.copies import OBS_LAYOUT


def heuristic(env, obs):
    """Message the ring neighbour that knows less, if it knows less than
    this agent; else stay quiet."""
    me, left, right = (obs[:, OBS_LAYOUT[k]] for k in ("known", "left", "right"))
    reach = env.config.reach
    act = np.where(right <= left, 1, reach + 1)           # 1: clockwise, reach + 1: anticlockwise
    return np.where(np.minimum(left, right) < me, act, 0).astype(np.int64)
