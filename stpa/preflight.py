# SPDX-License-Identifier: BSD-3-Clause
"""Preflight: a few serial units of a throw-away copy of the configuration,
with another seed, traced into features."""

import statistics
import time

from stpa import workloads

WARM_UNITS = 1
UNITS = 3


def preflight(workload, params, seed=0, units=UNITS):
    """Trace features of ``params`` under ``workload`` (name or object).

    Returns a dict: events_per_unit, event_ns (engine time per event),
    event_ns_cv (spread of that across units), cross_frac (events sent to
    another entity), ready_per_round (entities with work per window: the
    available parallelism), rounds_per_unit, events_per_round, overhead_ns
    (per unit, outside the engine: boundary and Python), unit_ns,
    n_entities, n_agents, workload_code, and preflight_s (its own cost).
    """
    w = workloads.get(workload) if isinstance(workload, str) else workload
    t0 = time.perf_counter()
    runner, get_engine, n_ent, n_agents = w.open(params, 1, seed + 0x5EED)
    runner.advance(WARM_UNITS)
    rows = workloads.measure(runner, units, get_engine)
    cost = time.perf_counter() - t0
    events = sum(r["events"] for r in rows)
    eng = sum(r["engine_s"] for r in rows)
    wall = sum(r["wall_s"] for r in rows)
    rounds = sum(r["rounds"] for r in rows)
    per_unit_ns = [r["engine_s"] / r["events"] * 1e9 for r in rows if r["events"]]
    mean_ns = eng / events * 1e9 if events else 0.0
    return {
        "workload_code": w.code,
        "n_entities": n_ent,
        "n_agents": n_agents,
        "events_per_unit": events / units,
        "event_ns": mean_ns,
        "event_ns_cv": (statistics.pstdev(per_unit_ns) / mean_ns) if len(per_unit_ns) > 1 and mean_ns else 0.0,
        "cross_frac": sum(r["pushes"] for r in rows) / events if events else 0.0,
        "ready_per_round": sum(r["ready"] for r in rows) / rounds if rounds else 0.0,
        "rounds_per_unit": rounds / units,
        "events_per_round": events / rounds if rounds else 0.0,
        "overhead_ns": max(0.0, wall - eng) / units * 1e9,
        "unit_ns": wall / units * 1e9,
        "preflight_s": cost,
    }
