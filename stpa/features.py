# SPDX-License-Identifier: BSD-3-Clause
"""The feature vector STPA's model sees: trace features from the preflight,
hardware features from the probe, and the candidate thread count."""

import math

TRACE = ["workload_code", "n_entities", "n_agents", "events_per_unit", "event_ns", "event_ns_cv",
         "cross_frac", "ready_per_round", "rounds_per_unit", "events_per_round", "overhead_ns",
         "unit_ns"]
HARDWARE = ["physical_cores", "logical_cores", "affinity_cpus", "freq_mhz", "mem_avail_gb",
            "load_per_cpu", "l2_kb", "l3_kb"]
CANDIDATE = ["threads", "threads_per_core", "work_per_round_us", "overhead_frac"]
COLUMNS = TRACE + HARDWARE + CANDIDATE


def row(trace, hw, threads):
    """One model input row (a list in COLUMNS order)."""
    d = {k: float(trace.get(k, 0.0)) for k in TRACE}
    d.update({k: float(hw.get(k, 0.0)) for k in HARDWARE})
    d["threads"] = float(threads)
    d["threads_per_core"] = threads / max(1.0, float(hw.get("physical_cores", 1)))
    d["work_per_round_us"] = trace.get("events_per_round", 0.0) * trace.get("event_ns", 0.0) / 1e3
    unit = trace.get("unit_ns", 0.0)
    d["overhead_frac"] = trace.get("overhead_ns", 0.0) / unit if unit > 0 else 0.0
    return [d[k] if math.isfinite(d[k]) else 0.0 for k in COLUMNS]
