# SPDX-License-Identifier: BSD-3-Clause
"""Choose a thread count for a configuration: hard caps, a preflight, a
speedup model; cached per configuration and hardware."""

import json
import os

from stpa import model as _model
from stpa.preflight import preflight
from stpa.probe import omp_num_threads_cap, probe, thread_caps

# Prefer fewer threads unless more are predicted this much faster.
MARGIN = 1.03

_CACHE = {}


def choose_from_features(trace, hw, cap, model):
    """Deterministic core: (chosen count, {t: predicted speedup})."""
    candidates = list(range(1, cap + 1))
    preds = model.predict(trace, hw, candidates)
    best, best_s = 1, 1.0
    for t, s in zip(candidates, preds):
        if s > best_s * MARGIN:
            best, best_s = t, s
    return best, dict(zip(candidates, preds))


def cache_key(key, hw):
    return json.dumps([key, hw["physical_cores"], hw["logical_cores"],
                       hw["affinity_cpus"], omp_num_threads_cap(),
                       os.environ.get("STPA_MODEL")], sort_keys=True, default=str)


def choose(key, open_run, seed=0, model_path=None):
    """Thread count for one configuration on this machine.

    ``key`` is a JSON-able identity of the configuration (e.g. ``[scenario
    id, form, full parameters]``), the cache key; ``open_run(num_threads,
    seed)`` opens it as a :class:`seer_runtime.Run` for the preflight.
    STPA knows no scenario: the caller (an env, a headless runner, the
    ``seer`` CLI) hands it both.

    Returns ``(num_threads, choice)`` where ``choice`` explains it: chosen,
    cap and the caps that bind, method (``"lightgbm"``, ``"analytic"`` or
    ``"cap"``), predicted speedups, trace and hardware features, preflight
    seconds, and ``cached``.
    """
    hw = probe()
    key = cache_key(key, hw)
    if key in _CACHE:
        n, choice = _CACHE[key]
        return n, dict(choice, cached=True)
    cap, binding = thread_caps(hw)
    if cap == 1:
        n, choice = 1, {"chosen": 1, "cap": 1, "caps": binding, "method": "cap",
                        "predicted_speedup": {1: 1.0}, "features": {}, "hardware": hw,
                        "preflight_s": 0.0, "model_warning": None}
    else:
        trace = preflight(open_run, seed=seed)
        m, why = _model.load_default(model_path)
        n, preds = choose_from_features(trace, hw, cap, m)
        choice = {"chosen": n, "cap": cap, "caps": binding, "method": m.name,
                  "predicted_speedup": preds, "features": trace, "hardware": hw,
                  "preflight_s": trace["preflight_s"], "model_warning": why}
    _CACHE[key] = (n, choice)
    return n, dict(choice, cached=False)


def clear_cache():
    _CACHE.clear()
