# SPDX-License-Identifier: BSD-3-Clause
"""A step's plan between :meth:`~seer_envs.layout.batch.Batch.prepare` and
:meth:`~seer_envs.layout.batch.Batch.finish` (which copies step, in which
runs of equal step count), and :func:`runs`, sorted copy ids as runs."""

import numpy as np


class _Plan:
    """A step between :meth:`Batch.prepare` and :meth:`Batch.finish`: ``k``
    the step count of the common case (every copy, one run), else
    ``live_idx`` / ``stepping`` the copies that step and ``runs_by_k`` their
    runs by step count; ``times`` each copy's time at the step's end."""

    __slots__ = ("k", "live_idx", "stepping", "waiting", "active", "times", "runs_by_k")

    def __init__(self, k, live_idx, stepping, waiting, active, times, runs_by_k):
        self.k, self.live_idx, self.stepping, self.waiting = k, live_idx, stepping, waiting
        self.active, self.times, self.runs_by_k = active, times, runs_by_k


class _AlignedPlan:
    """The common step's plan (a :class:`_Plan`): every copy at step ``k``, one run."""

    __slots__ = ("k", "times")
    live_idx = stepping = waiting = active = runs_by_k = None

    def __init__(self, k, times):
        self.k, self.times = k, times


def runs(idx):
    """Sorted indices -> ``[(lo, hi))`` runs of consecutive values."""
    idx = np.asarray(idx)
    if len(idx) == 0:
        return []
    cut = np.flatnonzero(np.diff(idx) != 1) + 1
    return list(zip(idx[np.r_[0, cut]].tolist(), (idx[np.r_[cut - 1, len(idx) - 1]] + 1).tolist()))
