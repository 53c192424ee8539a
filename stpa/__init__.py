# SPDX-License-Identifier: BSD-3-Clause
"""STPA: preflight-guided thread-pool selection.

At ``reset()`` with ``num_threads="auto"`` an env asks :func:`choose` for a
thread count: a throw-away copy of the configuration is traced on one thread
(events, event cost, cross-entity fraction, available parallelism, rounds,
boundary cost) and timed for a few steps at 2 threads, the cap and one count
between; Gunther's Universal Scalability Law fitted to those probes, times a
LightGBM residual, predicts the speedup of every count from 1 to the hard
caps (OMP_NUM_THREADS, the affinity mask, the physical cores).  The
preflight is cached per configuration and hardware, in the process and in a
user cache file shared by processes.  ``stpa collect``, ``stpa train`` and
``stpa predict`` re-fit the residual on a user's machines.
"""

from stpa.select import choose, choose_from_features, clear_cache
from stpa.probe import probe, thread_caps
from stpa.preflight import preflight

__all__ = ["choose", "choose_from_features", "clear_cache", "probe", "thread_caps", "preflight"]
