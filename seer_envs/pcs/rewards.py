# SPDX-License-Identifier: BSD-3-Clause
"""Reward shaping of the PCS env."""

import numpy as np


def mix_team_reward(rew, share):
    """Mix each cell's reward with its copy's team mean, in place:
    ``rew = (1 - share) * rew + share * mean(rew)`` over each row of a
    ``(copies, cells)`` array; returns ``rew``.

    With per-cell rewards alone each base station ignores the handoffs it
    pushes onto its neighbours; a team share makes that cost its own (MPE's
    ``local_ratio`` is ``1 - share``).  The mean is taken in float64 over
    the row after the step, so it does not depend on the thread count; a
    row mean over a contiguous row sums as ``np.mean`` of that row alone
    does, so a copy's rewards do not depend on the other copies.
    """
    if share:
        means = rew.mean(axis=1, dtype=np.float64)
        rew *= np.float32(1.0 - share)
        rew += (share * means).astype(np.float32)[:, None]
    return rew
