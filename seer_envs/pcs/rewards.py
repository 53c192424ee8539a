# SPDX-License-Identifier: BSD-3-Clause
"""Reward shaping of the PCS env."""

import numpy as np


def mix_team_reward(rew, share):
    """Mix each cell's reward with its copy's team mean, in place:
    ``rew = (1 - share) * rew + share * mean(rew)`` over each row of a
    ``(copies, cells)`` array (``share``: one number, or one per row; a row
    whose share is 0 is left as it is); returns ``rew``.

    With per-cell rewards alone each base station ignores the handoffs it
    pushes onto its neighbours; a team share makes that cost its own (MPE's
    ``local_ratio`` is ``1 - share``).  The mean is taken in float64 over
    the row after the step, so it does not depend on the thread count; a
    row mean over a contiguous row sums as ``np.mean`` of that row alone
    does, so a copy's rewards do not depend on the other copies.
    """
    share = np.broadcast_to(np.asarray(share, np.float64), rew.shape[:1])
    rows = np.flatnonzero(share)
    if len(rows) == len(share):
        _mix(rew, share)
    elif len(rows):
        part = rew[rows]
        rew[rows] = _mix(part, share[rows])
    return rew


def _mix(rew, share):
    means = rew.mean(axis=1, dtype=np.float64)
    rew *= (1.0 - share).astype(np.float32)[:, None]
    rew += (share * means).astype(np.float32)[:, None]
    return rew


def neighbour_table(width, height):
    """``(cells, 4)`` int64: each cell's neighbours E, W, S, N on the torus
    (the handlers' and the observation's order), cells in row order."""
    x, y = np.meshgrid(np.arange(width), np.arange(height))
    x, y = x.ravel(), y.ravel()
    return np.stack([y * width + (x + 1) % width, y * width + (x - 1) % width,
                     ((y + 1) % height) * width + x, ((y - 1) % height) * width + x], axis=1)


def charge_neighbour_drops(rew, handoff_blocks, table, weight):
    """Charge each cell for its neighbours' handoff blocks, in place:
    ``rew -= weight * (sum of the 4 neighbours' blocks)`` over each row of a
    ``(copies, cells)`` array, with ``handoff_blocks`` the step's blocks of
    the same shape, ``table`` from :func:`neighbour_table` and ``weight``
    one number or one per row (a row of weight 0 is left as it is).  The sum is
    exact (integers) and the subtraction is done in float64 and rounded
    once, cell by cell, so the result does not depend on the thread count
    or on the other copies; returns ``rew``."""
    weight = np.broadcast_to(np.asarray(weight, np.float64), rew.shape[:1])
    rows = np.flatnonzero(weight)
    if len(rows):
        charge = handoff_blocks[rows][:, table].sum(axis=-1)
        rew[rows] = (rew[rows].astype(np.float64) - weight[rows, None] * charge).astype(np.float32)
    return rew
