# SPDX-License-Identifier: BSD-3-Clause
"""Preflight: a throw-away run of the configuration, with another seed,
traced on one thread and then timed at a few thread counts on this machine.

It works on anything ``open_run(num_threads, seed)`` returns: a run with
``advance(n=1)``, ``engine`` (a :class:`seer_runtime.Engine`, whose team size
may change between units), ``n_entities``, ``n_agents`` and ``workload_code``
(a :class:`seer_runtime.Run`).  STPA knows no scenario, only runs.
"""

import statistics
import time

from stpa import features

WARM_UNITS = 1
UNITS = 2          # traced units on one thread
PROBE_UNITS = 2    # timed units at each probed count (the fastest counts)
SEED_OFFSET = 0x5EED
STOP_BELOW = features.PROBE_STOP_BELOW


def measure_run(run, units, num_threads=None):
    """Run ``units`` units of ``run``; per unit: wall and engine seconds,
    events, cross-entity pushes, rounds and ready entities.  With
    ``num_threads`` the engine's team is (re)set to it before every unit (an
    env may rebuild its engine when an episode ends: that unit counts from
    the new engine's start)."""
    rows = []
    for _ in range(units):
        e = run.engine
        if num_threads is not None and e.num_threads != num_threads:
            e.num_threads = num_threads
        s0 = e.stats()
        t0 = time.perf_counter()
        run.advance(1)
        wall = time.perf_counter() - t0
        e1 = run.engine
        s1 = e1.stats()
        if e1 is not e:                       # an env started a new episode: count from its start
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


def trace_of(rows, units):
    """The serial trace features (``features.TRACE`` but the identity columns)."""
    events = sum(r["events"] for r in rows)
    eng = sum(r["engine_s"] for r in rows)
    wall = sum(r["wall_s"] for r in rows)
    rounds = sum(r["rounds"] for r in rows)
    per_unit_ns = [r["engine_s"] / r["events"] * 1e9 for r in rows if r["events"]]
    mean_ns = eng / events * 1e9 if events else 0.0
    return {
        "events_per_unit": events / units,
        "event_ns": mean_ns,
        "event_ns_cv": (statistics.pstdev(per_unit_ns) / mean_ns) if len(per_unit_ns) > 1 and mean_ns else 0.0,
        "cross_frac": sum(r["pushes"] for r in rows) / events if events else 0.0,
        "ready_per_round": sum(r["ready"] for r in rows) / rounds if rounds else 0.0,
        "rounds_per_unit": rounds / units,
        "events_per_round": events / rounds if rounds else 0.0,
        "overhead_ns": max(0.0, wall - eng) / units * 1e9,
        "unit_ns": wall / units * 1e9,
    }


def preflight(open_run, seed=0, cap=1, units=UNITS, probe_units=PROBE_UNITS):
    """Measure what STPA's model needs for one configuration on this machine.

    ``open_run(num_threads, seed)`` opens the configuration; the preflight
    opens it once, with ``seed`` offset, at one thread.  After a warm-up unit
    it traces ``units`` units (events, event cost and its spread, cross-entity
    fraction, ready entities per round, rounds, time outside the engine), then
    times ``probe_units`` units at each count of
    ``features.probe_counts(cap)`` (2, one between, the cap), switching the
    engine's team in place: results never depend on the team size, and
    nothing is built twice.  When 2 threads are no faster than one
    (S(2) < STOP_BELOW), the larger counts are not probed.

    Returns the trace dict: the ``features.TRACE`` values (``workload_code``
    from the run, -1 when it has none), ``probe_speedup``
    ``{t: unit time at 1 / unit time at t}`` (fastest unit of each),
    ``probe_round_ns`` ``{t: engine time per round beyond the work split
    over t}`` (the barrier and round cost read at t), ``probe_cap`` and
    ``preflight_s`` (its own cost, construction included).
    """
    t0 = time.perf_counter()
    run = open_run(1, seed + SEED_OFFSET)
    run.advance(WARM_UNITS)
    rows = measure_run(run, units, num_threads=1)
    trace = trace_of(rows, units)
    trace.update(workload_code=getattr(run, "workload_code", -1), n_entities=run.n_entities,
                 n_agents=run.n_agents)
    probes, round_ns = {}, {}
    counts = features.probe_counts(cap)
    if counts:
        base = min(r["wall_s"] for r in rows)
        eng1 = statistics.fmean(r["engine_s"] for r in rows)
        ready = max(1.0, trace["ready_per_round"])
        # Smallest count first.  The first unit after a team change also starts
        # the new threads: taking the fastest unit leaves that out.
        for t in counts:
            prow = measure_run(run, probe_units, num_threads=t)
            fastest = min(prow, key=lambda r: r["wall_s"])
            probes[t] = base / fastest["wall_s"] if fastest["wall_s"] > 0 else 1.0
            if fastest["rounds"]:
                round_ns[t] = max(0.0, fastest["engine_s"] - eng1 / min(t, ready)) / fastest["rounds"] * 1e9
            if t == 2 and probes[t] < STOP_BELOW:
                break     # two threads already lose: more will not win, and probing them is dear
    trace["probe_speedup"] = {t: probes[t] for t in sorted(probes)}
    trace["probe_round_ns"] = {t: round_ns[t] for t in sorted(round_ns)}
    trace["probe_cap"] = cap
    trace["preflight_s"] = time.perf_counter() - t0
    return trace
