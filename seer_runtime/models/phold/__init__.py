# SPDX-License-Identifier: BSD-3-Clause
"""PHOLD, the standard parallel discrete-event benchmark, on the SEER runtime.

Semantics follow ROSS's ``phold`` model: ``num_lps`` logical processes each
start ``start_events`` events; handling one sends a new event to a uniformly
random LP with probability ``remote_fraction`` (else to itself) after
``lookahead + Exp(mean_delay - lookahead)``.  ``work_iters`` adds a
deterministic arithmetic loop per event, folded into the LP's state, to set
the event granularity.

>>> from seer_runtime.models import phold
>>> r = phold.run(num_lps=256, end_time=20.0, num_threads=2, seed=1)
>>> r["events"] > 0 and len(r["digest"]) == 16
True
"""

import math
import time

from seer_runtime import Engine, effective_n_threads, openmp_enabled
from seer_runtime.models.phold._model import PholdModel
from seer_runtime.tuner import run_until_tuned, tuner_for

__all__ = ["run", "PholdModel", "make"]

DEFAULTS = {
    "start_events": 1,
    "remote_fraction": 0.25,
    "lookahead": 1.0,
    "mean_delay": 1.0,
    "work_iters": 0,
}


def _int(name, value, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        bound = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an int {bound}, got {value!r}")
    return value


def _float(name, value, lo=None, hi=None, lo_open=False):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or math.isnan(v) or math.isinf(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {value!r}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be <= {hi}, got {value!r}")
    return v


def _validate(num_lps, start_events=1, remote_fraction=0.25, lookahead=1.0, mean_delay=1.0,
              work_iters=0):
    _int("num_lps", num_lps, 1, 2**32 - 2)
    _int("start_events", start_events, 0, 255)
    _int("work_iters", work_iters, 0)
    remote_fraction = _float("remote_fraction", remote_fraction, 0.0, 1.0)
    lookahead = _float("lookahead", lookahead, 0.0, lo_open=True)
    mean_delay = _float("mean_delay", mean_delay)
    if mean_delay < lookahead:
        raise ValueError(f"mean_delay ({mean_delay}) must be >= lookahead ({lookahead}): "
                         "the delay is lookahead + Exp(mean_delay - lookahead)")
    return dict(num_lps=num_lps, start_events=start_events, remote_fraction=remote_fraction,
                lookahead=lookahead, mean_delay=mean_delay, work_iters=work_iters)


def _build(p, num_threads, seed, engine_kwargs):
    model = PholdModel(p["num_lps"], p["lookahead"], p["mean_delay"], p["remote_fraction"],
                       p["start_events"], p["work_iters"])
    return model, Engine(model, num_threads=num_threads, seed=seed, **engine_kwargs)


def make(num_lps, num_threads="auto", seed=0, start_events=1, remote_fraction=0.25,
         lookahead=1.0, mean_delay=1.0, work_iters=0, **engine_kwargs):
    """Validate the parameters and build ``(model, engine)`` without running."""
    p = _validate(num_lps, start_events, remote_fraction, lookahead, mean_delay, work_iters)
    n, _ = _resolve(num_threads, p)
    return _build(p, n, seed, engine_kwargs)


def _resolve(num_threads, params):
    """(count, explanation).  "auto" asks STPA, imported lazily: the engine
    never depends on it, only this model's convenience entry does."""
    if num_threads == "auto" and openmp_enabled():
        try:
            import stpa
        except ImportError:
            pass
        else:
            return stpa.choose("phold", params)
    n = effective_n_threads(num_threads)
    return n, {"chosen": n, "method": "user" if num_threads != "auto" else "affinity"}


def run(num_lps=1024, end_time=100.0, num_threads="auto", seed=0, **params):
    """Run PHOLD to ``end_time`` and report.

    Parameters
    ----------
    num_lps : int
        Logical processes.
    end_time : float
        Events with ``time < end_time`` run.
    num_threads : int or "auto"
        Worker threads; results do not depend on it.
    seed : int
        Run seed.
    **params
        ``start_events`` (1), ``remote_fraction`` (0.25), ``lookahead``
        (1.0), ``mean_delay`` (1.0), ``work_iters`` (0), and the engine caps
        ``max_pending_per_lp`` and ``max_messages_per_round``.

    Returns
    -------
    dict
        ``events``, ``wall_s`` (init + run), ``events_per_s``, ``digest``
        (hex hash of all final LP states and counters), ``remote_events``,
        the runtime statistics (see :meth:`Engine.stats`), and the
        parameters.
    """
    unknown = set(params) - set(DEFAULTS) - {"max_pending_per_lp", "max_messages_per_round"}
    if unknown:
        raise TypeError(f"unknown PHOLD parameter(s): {', '.join(sorted(unknown))}; "
                        f"known: {', '.join(sorted(DEFAULTS))}")
    end_time = _float("end_time", end_time, 0.0)
    engine_kwargs = {k: params.pop(k) for k in ("max_pending_per_lp", "max_messages_per_round")
                     if k in params}
    p = _validate(num_lps, **params)
    n, choice = _resolve(num_threads, p)
    model, engine = _build(p, n, seed, engine_kwargs)
    tuner = tuner_for(engine, num_threads, choice)     # None unless "auto"
    t0 = time.perf_counter()
    engine.init(0.0)
    run_until_tuned(engine, end_time, tuner)
    wall = time.perf_counter() - t0
    if tuner is not None:
        choice = dict(choice, **tuner.report())
    events, remote = model.totals()
    stats = engine.stats()
    assert stats["events"] == events
    out = dict(stats)
    out.update({
        "events": events,
        "wall_s": wall,
        "events_per_s": events / wall if wall > 0 else float("inf"),
        "digest": model.digest(engine),
        "remote_events": remote,
        "pending": engine.pending(),
        "num_lps": num_lps,
        "end_time": end_time,
        "seed": seed,
        "params": {k: v for k, v in p.items() if k != "num_lps"},
        "thread_choice": choice,
    })
    return out
