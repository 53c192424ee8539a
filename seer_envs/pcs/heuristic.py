# SPDX-License-Identifier: BSD-3-Clause
"""A hand-written PCS policy, the baseline for learned ones."""

import numpy as np


def heuristic(env, obs):
    """Hold back one guard channel where the cell is more than 70% busy."""
    return (obs[:, 0] > 0.7).astype(np.int64)
