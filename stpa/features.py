# SPDX-License-Identifier: BSD-3-Clause
"""The features STPA works from.

``TRACE``, ``HARDWARE`` and ``CANDIDATE`` are the columns of a ``stpa
collect`` dataset (kept for compatibility of the CSVs).  The model itself
sees ``RESIDUAL``: the scalability law fitted to the preflight's probes
(:func:`fit_usl`) and a few machine-independent trace ratios, per candidate
count.
"""

import math

TRACE = ["workload_code", "n_entities", "n_agents", "events_per_unit", "event_ns", "event_ns_cv",
         "cross_frac", "ready_per_round", "rounds_per_unit", "events_per_round", "overhead_ns",
         "unit_ns"]
HARDWARE = ["physical_cores", "logical_cores", "affinity_cpus", "freq_mhz", "mem_avail_gb",
            "load_per_cpu", "l2_kb", "l3_kb"]
CANDIDATE = ["threads", "threads_per_core", "work_per_round_us", "overhead_frac"]
COLUMNS = TRACE + HARDWARE + CANDIDATE

# What the residual model sees for a candidate count t on a machine capped at `cap`.
RESIDUAL = ["t_frac", "log_t", "log_cap", "usl_s", "usl_k", "log_usl", "log_unit_ns",
            "log_ready_per_t", "overhead_frac", "log_rounds", "log_work_per_round_us",
            "cross_frac", "event_ns_cv"]


def row(trace, hw, threads):
    """One dataset row (a list in COLUMNS order)."""
    d = {k: float(trace.get(k, 0.0)) for k in TRACE}
    d.update({k: float(hw.get(k, 0.0)) for k in HARDWARE})
    d["threads"] = float(threads)
    d["threads_per_core"] = threads / max(1.0, float(hw.get("physical_cores", 1)))
    d["work_per_round_us"] = trace.get("events_per_round", 0.0) * trace.get("event_ns", 0.0) / 1e3
    unit = trace.get("unit_ns", 0.0)
    d["overhead_frac"] = trace.get("overhead_ns", 0.0) / unit if unit > 0 else 0.0
    return [d[k] if math.isfinite(d[k]) else 0.0 for k in COLUMNS]


def probe_counts(cap):
    """Thread counts the preflight measures besides 1: 2, the cap, and their
    geometric mean between them (2, 6, 16 on 16 cores; 2 alone on 2)."""
    if cap < 2:
        return []
    out = {2, cap}
    if cap >= 4:
        out.add(min(cap - 1, max(3, round(math.sqrt(2 * cap)))))
    return sorted(out)


# The preflight stops probing after 2 threads when they are no faster than one
# (the counts above are then dear to probe and do not win: docs/stpa.md).
PROBE_STOP_BELOW = 1.0


def probe_view(speedup, cap):
    """What the preflight measures of a curve ``{t: S}``: S at the probe
    counts of ``cap``, the larger ones only when S(2) >= PROBE_STOP_BELOW."""
    out = {}
    for t in probe_counts(cap):
        if t in speedup:
            out[t] = speedup[t]
            if t == 2 and speedup[t] < PROBE_STOP_BELOW:
                break
    return out


def usl(t, s, k):
    """Gunther's Universal Scalability Law: S(t) = t / (1 + s(t-1) + k t(t-1))."""
    return t / (1.0 + s * (t - 1) + k * t * (t - 1))


def fit_usl(points, cap=None):
    """(s, k) of the USL through measured speedups ``{t: S}`` (t > 1).

    Least squares on the linear form t/S - 1 = s(t-1) + k t(t-1), each point
    weighted by S/t so that residuals are relative errors in S.  k >= 0
    (coherency cost cannot make more threads cheaper); s may be slightly
    negative (superlinear: caches), bounded so that S stays finite up to
    ``cap``.  One point gives k = 0 (Amdahl).
    """
    pts = {int(t): float(S) for t, S in points.items() if int(t) > 1 and S > 0 and math.isfinite(S)}
    if not pts:
        return 0.0, 0.0
    cap = max(cap or 0, max(pts))
    rows = [((S / t) * (t - 1), (S / t) * t * (t - 1), (S / t) * (t / S - 1)) for t, S in pts.items()]
    s, k = 0.0, 0.0
    if len(pts) >= 2:
        # normal equations of the 2-parameter least squares
        a11 = sum(r[0] * r[0] for r in rows)
        a12 = sum(r[0] * r[1] for r in rows)
        a22 = sum(r[1] * r[1] for r in rows)
        b1 = sum(r[0] * r[2] for r in rows)
        b2 = sum(r[1] * r[2] for r in rows)
        det = a11 * a22 - a12 * a12
        if det > 0:
            s, k = (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det
    if len(pts) < 2 or k < 0:
        k = 0.0
        s = sum(r[0] * r[2] for r in rows) / sum(r[0] * r[0] for r in rows)
    s = max(s, -0.5 / max(1, cap - 1))
    return s, k


def residual_row(trace, cap, t, s, k):
    """The RESIDUAL features of candidate ``t`` (a list in RESIDUAL order)."""
    f = lambda key: float(trace.get(key, 0.0) or 0.0)  # noqa: E731
    unit = max(f("unit_ns"), 1.0)
    d = {
        "t_frac": (t - 2) / (cap - 2) if cap > 2 else 0.0,
        "log_t": math.log(t),
        "log_cap": math.log(max(cap, 1)),
        "usl_s": s,
        "usl_k": k,
        "log_usl": math.log(max(usl(t, s, k), 1e-3)),
        "log_unit_ns": math.log(unit),
        "log_ready_per_t": math.log(max(f("ready_per_round"), 1.0) / t),
        "overhead_frac": f("overhead_ns") / unit,
        "log_rounds": math.log1p(f("rounds_per_unit")),
        "log_work_per_round_us": math.log1p(f("events_per_round") * f("event_ns") / 1e3),
        "cross_frac": f("cross_frac"),
        "event_ns_cv": f("event_ns_cv"),
    }
    return [d[k2] if math.isfinite(d[k2]) else 0.0 for k2 in RESIDUAL]
