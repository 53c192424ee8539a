# SPDX-License-Identifier: BSD-3-Clause
"""The PCS totals a summary reports: every counter and the blocking
probability (read by the env's ``summary()`` and the headless run)."""

from seer_envs.pcs.handlers import COUNTERS


def summarize(counters, engine=None):
    """Totals of a (cells x 6) counter array (or of its 6 column sums) and
    the blocking probability (channel + handoff blocks over attempts that
    were not busy lines); with ``engine``, also its ``events``."""
    tot = counters.sum(axis=0) if counters.ndim == 2 else counters
    out = dict(zip(COUNTERS, (int(v) for v in tot)))
    out["handoffs"] = out["handoffs_out"]
    denom = out["call_attempts"] - out["busy_lines"]
    out["blocking_probability"] = ((out["channel_blocks"] + out["handoff_blocks"]) / denom
                                   if denom > 0 else 0.0)
    if engine is not None:
        out["events"] = engine.stats()["events"]
    return out
