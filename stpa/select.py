# SPDX-License-Identifier: BSD-3-Clause
"""Choose a thread count for a configuration: hard caps, a preflight, a
speedup curve; the preflight is cached per configuration and hardware, in
this process and across processes (:mod:`stpa.cache`)."""

import json
import os

# Prefer fewer threads unless more are predicted MARGIN faster (the tuner's rule too).
from seer_runtime.thread_choice import ThreadChoice
from seer_runtime.tuner import MARGIN
from stpa import cache as _disk
from stpa import features
from stpa import model as _model
from stpa.preflight import preflight
from stpa.probe import affinity_cpus, cpu_model, omp_num_threads_cap, probe, thread_caps

# Bump when the preflight measures something different: old entries are ignored.
# 3: env steps execute their actions at injection (fewer LPs per round on PCS).
PREFLIGHT_VERSION = 3

_CACHE = {}


def _taken_under_more_load(stored, hw):
    """A cached preflight measured while the machine was much busier than
    now (probes then favour fewer threads) is measured again."""
    then = float(stored.get("load_per_cpu", 0.0) or 0.0)
    return then > 1.5 * float(hw.get("load_per_cpu", 0.0) or 0.0) + 0.5


def pick(speedups):
    """The count to use from ``{t: predicted speedup}``: the fastest, unless
    fewer threads are within MARGIN of it."""
    best, best_s = 1, 1.0
    for t, s in sorted(speedups.items()):
        if s > best_s * MARGIN:
            best, best_s = t, s
    return best


def choose_from_features(trace, hw, cap, model):
    """Deterministic core: (chosen count, {t: predicted speedup} for 1..cap)."""
    candidates = list(range(1, cap + 1))
    preds = dict(zip(candidates, model.predict(trace, hw, candidates)))
    return pick(preds), preds


def cache_key(key, hw, cap):
    """The identity of a preflight: configuration, hardware, cap."""
    return json.dumps([PREFLIGHT_VERSION, key, cpu_model(), hw["physical_cores"], hw["logical_cores"],
                       hw["affinity_cpus"], cap], sort_keys=True, default=str)


def _restore(trace):
    """JSON turned int keys into strings: turn them back."""
    for k in ("probe_speedup", "probe_round_ns"):
        if isinstance(trace.get(k), dict):
            trace[k] = {int(t): v for t, v in trace[k].items()}
    return trace


def choose(key, open_run, seed=0, model_path=None):
    """Thread count for one configuration on this machine.

    ``key`` is a JSON-able identity of the configuration (e.g. ``[scenario
    id, form, full parameters]``), the cache key; ``open_run(num_threads,
    seed)`` opens it as a :class:`seer_runtime.Run` for the preflight (see
    :func:`stpa.preflight.preflight`).  STPA knows no scenario: the caller
    (an env, a headless runner, the ``seer`` CLI) hands it both.

    Returns ``(num_threads, choice)``, a :class:`~seer_runtime.ThreadChoice`
    that explains it: chosen, cap and the caps that bind, method
    (``"lightgbm"``: the law with its learned residual, ``"usl"``: the law
    alone, ``"analytic"``: no probes, ``"cap"``: nothing to choose),
    ``predicted_speedup`` ``{t: speedup}`` for every count 1..cap,
    ``probe_speedup`` (measured), the trace and hardware features, preflight
    seconds and ``cache`` (None, "memory" or "disk").
    """
    if not callable(open_run):
        raise ValueError("choose(key, open_run): open_run must be a callable "
                         f"(num_threads, seed) -> Run, got {type(open_run).__name__}")
    cap, binding = thread_caps(None)       # no full probe for a choice already made
    mem_key = json.dumps([key, cap, affinity_cpus(), omp_num_threads_cap(), model_path,
                          os.environ.get("STPA_MODEL")], sort_keys=True, default=str)
    if mem_key in _CACHE:
        n, choice = _CACHE[mem_key]
        return n, choice.replace(cache="memory")
    hw = probe()
    if cap == 1:
        n, choice = 1, ThreadChoice(chosen=1, method="cap", cap=1, caps=binding,
                                    predicted_speedup={1: 1.0}, probe_speedup={}, features={},
                                    hardware=hw, preflight_s=0.0)
        _CACHE[mem_key] = (n, choice)
        return n, choice
    dkey = cache_key(key, hw, cap)
    stored = _disk.get(dkey)
    source = "disk" if isinstance(stored, dict) and not _taken_under_more_load(stored, hw) else None
    if source:
        trace = _restore(dict(stored))
    else:
        trace = preflight(open_run, seed=seed, cap=cap)
        trace["load_per_cpu"] = hw.get("load_per_cpu", 0.0)
        _disk.put(dkey, trace)
    m, why = _model.load_default(model_path)
    n, preds = choose_from_features(trace, hw, cap, m)
    method = m.name if _model.probes_of(trace) else "analytic"
    s, k = features.fit_usl(_model.probes_of(trace), cap)
    choice = ThreadChoice(chosen=n, method=method, cap=cap, caps=binding,
                          predicted_speedup=preds, probe_speedup=dict(trace.get("probe_speedup", {})),
                          law={"s": s, "k": k}, features=trace, hardware=hw,
                          preflight_s=0.0 if source else trace["preflight_s"], model_warning=why)
    _CACHE[mem_key] = (n, choice)
    return n, choice.replace(cache=source)


def clear_cache(disk=False):
    """Forget this process's choices (and the cache file with ``disk=True``)."""
    _CACHE.clear()
    if disk:
        _disk.clear()
