# SPDX-License-Identifier: BSD-3-Clause
"""With moves off every cell is a finite-source loss system (Engset): the
simulated call blocking must match the analytic value."""

import math

from seer_envs.pcs.config import PCSConfig
from seer_envs.pcs.summary import summarize
from seer_envs.pcs.handlers import PcsModel
from seer_runtime import Engine


def engset_blocking(sources, channels, offered_per_idle_source):
    """Call congestion of Engset's system: N sources, C channels, each idle
    source offering a = lambda / mu; an arriving call sees the N-1 others."""
    a = offered_per_idle_source
    terms = [math.comb(sources - 1, k) * a**k for k in range(channels + 1)]
    return terms[-1] / sum(terms)


def test_blocking_matches_engset_formula():
    n, c = 16, 10
    interarrival, duration = 180.0, 180.0        # a = 1: enough blocking to measure
    cfg = PCSConfig(grid_width=32, grid_height=32, portables_per_cell=n, channels_per_cell=c,
                    call_interarrival_mean=interarrival, call_duration_mean=duration,
                    move_interval_mean=float("inf"))
    model = PcsModel(cfg)
    engine = Engine(model, num_threads=2, seed=1)
    engine.run_until(1000.0)                     # the empty start is not steady state
    before = model.counters.sum(axis=0).copy()
    engine.run_until(9000.0)
    r = summarize(model.counters.sum(axis=0) - before)
    expected = engset_blocking(n, c, duration / interarrival)
    attempts = r["call_attempts"] - r["busy_lines"]
    # Cells are independent; within a cell successive calls are correlated,
    # so allow 4 binomial standard errors inflated by 2 for that.
    se = math.sqrt(expected * (1 - expected) / attempts)
    assert r["handoffs"] == 0 and r["handoff_blocks"] == 0
    assert abs(r["blocking_probability"] - expected) < 8 * se, (r["blocking_probability"], expected, se)
    # and it is a real test: the neighbouring configuration is far outside
    assert abs(engset_blocking(n, c - 1, 1.0) - expected) > 30 * se
