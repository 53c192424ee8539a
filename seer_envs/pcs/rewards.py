# SPDX-License-Identifier: BSD-3-Clause
"""Reward shaping shared by the PCS env's step paths."""

import numpy as np


def mix_team_reward(rew, share):
    """Mix each cell's reward with the team mean, in place:
    ``rew = (1 - share) * rew + share * mean(rew)``; returns ``rew``.

    With per-cell rewards alone each base station ignores the handoffs it
    pushes onto its neighbours; a team share makes that cost its own (MPE's
    ``local_ratio`` is ``1 - share``).  The mean is taken in float64 over the
    whole array after the step, so it does not depend on the thread count.
    """
    if share:
        mean = float(np.mean(rew, dtype=np.float64))
        rew *= np.float32(1.0 - share)
        rew += np.float32(share * mean)
    return rew
