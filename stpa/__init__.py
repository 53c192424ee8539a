# SPDX-License-Identifier: BSD-3-Clause
"""STPA: preflight-guided thread-pool selection.

At ``reset()`` with ``num_threads="auto"`` an env asks :func:`choose` for a
thread count: a few serial units of a throw-away copy of the configuration
are traced (events, event cost, cross-entity fraction, available
parallelism, rounds, boundary cost), joined with psutil hardware features,
and a LightGBM model predicts the speedup of each candidate count up to the
hard caps (OMP_NUM_THREADS, the affinity mask, the physical cores).  The
answer is cached per configuration and hardware.  ``stpa collect``,
``stpa train`` and ``stpa predict`` re-fit the model on a user's machine.
"""

from stpa.select import choose, choose_from_features, clear_cache
from stpa.probe import probe, thread_caps
from stpa.preflight import preflight

__all__ = ["choose", "choose_from_features", "clear_cache", "probe", "thread_caps", "preflight"]
