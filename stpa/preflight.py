# SPDX-License-Identifier: BSD-3-Clause
"""Preflight: a few serial units of a throw-away copy of the configuration,
with another seed, traced into features."""

import statistics
import time

WARM_UNITS = 1
UNITS = 3


def measure(run, units):
    """Run ``units`` units of ``run``; per-unit wall time, engine time and event counts."""
    rows = []
    for _ in range(units):
        e0 = run.engine
        s0 = e0.stats()
        t0 = time.perf_counter()
        run.advance(1)
        wall = time.perf_counter() - t0
        s1 = run.engine.stats()
        if run.engine is not e0:     # an env started a new episode: count from its start
            s0 = dict.fromkeys(("wall_s", "events", "inbox_pushes", "rounds", "ready_per_round"), 0)
        rows.append({
            "wall_s": wall,
            "engine_s": s1["wall_s"] - s0["wall_s"],
            "events": s1["events"] - s0["events"],
            "pushes": s1["inbox_pushes"] - s0["inbox_pushes"],
            "rounds": s1["rounds"] - s0["rounds"],
            "ready": s1["ready_per_round"] * s1["rounds"] - s0["ready_per_round"] * s0["rounds"],
        })
    return rows


def preflight(open_run, seed=0, units=UNITS):
    """Trace features of the configuration ``open_run`` opens.

    ``open_run(num_threads, seed)`` returns a :class:`seer_runtime.Run`
    (``advance``, ``engine``, ``n_entities``, ``n_agents``,
    ``workload_code``); STPA knows no scenario, only runs.

    Returns a dict: events_per_unit, event_ns (engine time per event),
    event_ns_cv (spread of that across units), cross_frac (events sent to
    another entity), ready_per_round (entities with work per window: the
    available parallelism), rounds_per_unit, events_per_round, overhead_ns
    (per unit, outside the engine: boundary and Python), unit_ns,
    n_entities, n_agents, workload_code, and preflight_s (its own cost).
    """
    t0 = time.perf_counter()
    run = open_run(1, seed + 0x5EED)
    run.advance(WARM_UNITS)
    rows = measure(run, units)
    cost = time.perf_counter() - t0
    events = sum(r["events"] for r in rows)
    eng = sum(r["engine_s"] for r in rows)
    wall = sum(r["wall_s"] for r in rows)
    rounds = sum(r["rounds"] for r in rows)
    per_unit_ns = [r["engine_s"] / r["events"] * 1e9 for r in rows if r["events"]]
    mean_ns = eng / events * 1e9 if events else 0.0
    return {
        "workload_code": getattr(run, "workload_code", 0),
        "n_entities": run.n_entities,
        "n_agents": run.n_agents,
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
